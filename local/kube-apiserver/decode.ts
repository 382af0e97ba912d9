/**
 * Request decoding: the body (JSON, YAML for apply, protobuf for the built-in kinds kubectl's
 * imperative commands send that way, ./protobuf.ts), whether the client accepts JSON answers,
 * the two patch formats applied to the live object (merge and JSON patch; a strategic merge
 * patch is taken as a merge patch), and `fieldValidation=Strict`.
 */
import type http from 'node:http';
import { parse as parseYaml } from 'yaml';
import { ApiError } from './errors';
import type { Json } from './fields';
import { decodeProtobuf, PROTOBUF } from './protobuf';
import type { ResourceType } from './resources';

export async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Whether an Accept header admits a JSON answer: absent, JSON (any parameters, a `+json` suffix) or a wildcard. */
export function acceptsJson(accept: string | undefined): boolean {
  if (!accept) return true;
  return accept.split(',').some((range) => {
    const type = range.split(';')[0]!.trim().toLowerCase();
    return type === '*/*' || type === 'application/*' || type === 'application/json' || type.endsWith('+json');
  });
}

/** The body as JSON; a protobuf one must be of the kind the request takes (`expected`). */
export function decodeBody(raw: Buffer, contentType: string, method: string, expected: string): Json {
  if (contentType === PROTOBUF) {
    if (method === 'PATCH') throw new ApiError(415, 'UnsupportedMediaType', 'a patch is JSON or YAML, never protobuf: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml');
    return decodeProtobuf(raw, expected);
  }
  try {
    const text = raw.toString('utf8');
    // An apply body is YAML, of which JSON is a subset: one that is JSON (client-go and client-node
    // send JSON) is parsed as JSON, many times faster than by a YAML parser.
    if (contentType === 'application/apply-patch+yaml') return (/^\s*\{/.test(text) ? jsonOrYaml(text) : parseYaml(text)) as Json;
    return JSON.parse(text || '{}') as Json;
  } catch (err) {
    throw new ApiError(400, 'BadRequest', `the request body could not be decoded: ${(err as Error).message.split('\n')[0]}`);
  }
}

/** A YAML flow mapping that is not JSON (`{a: 1}`) goes to the YAML parser. */
function jsonOrYaml(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return parseYaml(text);
  }
}

/** RFC 7386. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Json = typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as Json) } : {};
  for (const [k, v] of Object.entries(patch as Json)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** RFC 6902 (add, remove, replace, test). */
export function jsonPatch(target: Json, ops: { op: string; path: string; value?: unknown }[]): Json {
  const doc = structuredClone(target);
  for (const op of ops) {
    const parts = op.path.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = parts.pop()!;
    let parent: any = doc;
    for (const p of parts) parent = Array.isArray(parent) ? parent[Number(p)] : parent?.[p];
    if (parent === undefined) throw new ApiError(422, 'Invalid', `the server rejected our request due to an error in our request: path ${op.path} does not exist`);
    const index = Array.isArray(parent) ? (last === '-' ? parent.length : Number(last)) : last;
    switch (op.op) {
      case 'add':
        if (Array.isArray(parent)) parent.splice(index as number, 0, op.value);
        else parent[index] = op.value;
        break;
      case 'replace':
        parent[index] = op.value;
        break;
      case 'remove':
        if (Array.isArray(parent)) parent.splice(index as number, 1);
        else delete parent[index];
        break;
      case 'test':
        if (JSON.stringify(parent[index]) !== JSON.stringify(op.value)) throw new ApiError(422, 'Invalid', `test operation failed at ${op.path}`);
        break;
      default:
        throw new ApiError(415, 'UnsupportedMediaType', `json patch op ${op.op} is not supported here`);
    }
  }
  return doc;
}

/** `fieldValidation=Strict` (kubectl's default): unknown fields of a custom resource are an error. */
export function strictCheck(q: URLSearchParams, t: ResourceType, body: Json): void {
  if (q.get('fieldValidation') !== 'Strict' || !t.schema) return;
  const unknown: string[] = [];
  const walk = (schema: Json | undefined, v: unknown, path: string) => {
    if (!schema || typeof v !== 'object' || v === null || Array.isArray(v)) return;
    const props = schema.properties as Record<string, Json> | undefined;
    if (!props || schema['x-kubernetes-preserve-unknown-fields']) return;
    for (const [k, sub] of Object.entries(v as Json)) {
      if (path === '' && (k === 'metadata' || k === 'apiVersion' || k === 'kind')) continue;
      if (!props[k] && !schema.additionalProperties) unknown.push(`${path}${k}`);
      else walk(props[k], sub, `${path}${k}.`);
    }
  };
  walk(t.schema, body, '');
  if (unknown.length) {
    throw new ApiError(400, 'BadRequest', `strict decoding error: ${unknown.map((u) => `unknown field "${u}"`).join(', ')}`);
  }
}
