import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { match } from 'path-to-regexp';
import YAML from 'yaml';
import { API_PREFIX } from '../../core/constants';
import { aliasOf } from '../../server/http/aliases';

export const OPENAPI_PATH = path.resolve(__dirname, '../../api-reference/openapi.yaml');
export const OPENAPI_LEGACY_PATH = path.resolve(__dirname, '../../api-reference/openapi-legacy.yaml');

type Doc = { paths: Record<string, Record<string, { responses: Record<string, { $ref?: string; content?: Record<string, unknown> }> }>> };
const escape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The documented path a request is answered under: canonical paths, the root-only probes and
 * the deprecated aliases (declared as operations, D-168) as they are; undefined for a root path
 * the alias list does not serve (`/orders` without `tx`), which can only be a 404.
 */
function documentedPath(url: URL): string | undefined {
  const pathname = url.pathname;
  if (/^\/(health|ready|metrics)$/.test(pathname) || pathname.startsWith(`${API_PREFIX}/`)) return pathname;
  return aliasOf(API_PREFIX, pathname, url.search) ? pathname : undefined;
}

/**
 * A checker of received responses against one OpenAPI document: the path and method must be
 * documented, and a JSON body must match the schema of its status (or `default`).
 */
export function createOpenApiChecker(docPath: string) {
  const name = path.basename(docPath);
  const doc = YAML.parse(readFileSync(docPath, 'utf8')) as Doc;
  // OpenAPI 3.0 schemas: `nullable` and friends are keywords Ajv accepts without strict mode.
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, 'openapi');
  // Literal paths before templated ones, as the routers match them.
  const templates = Object.keys(doc.paths)
    .sort((a, b) => Number(a.includes('{')) - Number(b.includes('{')))
    .map((p) => ({ template: p, matches: match(p.replace(/\{(\w+)\}/g, ':$1')) }));
  const cache = new Map<string, ValidateFunction>();
  return {
    ajv,
    assertMatches(method: string, url: string, status: number, contentType: string | null, body: unknown): void {
      const pathname = documentedPath(new URL(url));
      const t = pathname === undefined ? undefined : templates.find((x) => x.matches(pathname));
      if (!t) {
        if (status === 404 || status === 405) return; // undocumented paths answer with the documented error
        throw new Error(`${method} ${new URL(url).pathname} is not in ${name}`);
      }
      const op = doc.paths[t.template]![method.toLowerCase()];
      if (!op) {
        if (status === 405) return;
        throw new Error(`${method} ${t.template} is not in ${name}`);
      }
      const key = op.responses[String(status)] ? String(status) : 'default';
      if (!op.responses[key]) throw new Error(`${method} ${t.template} documents no ${status} response`);
      if (!contentType?.includes('application/json')) return;
      const ref = op.responses[key]!.$ref;
      const pointer = ref
        ? `openapi#${ref.slice(1)}/content/application~1json/schema`
        : `openapi#/paths/${escape(t.template)}/${method.toLowerCase()}/responses/${key}/content/application~1json/schema`;
      let validate = cache.get(pointer);
      if (!validate) cache.set(pointer, (validate = ajv.compile({ $ref: pointer })));
      if (!validate(body)) {
        throw new Error(`${method} ${pathname} ${status} does not match ${name}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`);
      }
    },
  };
}

const v1 = createOpenApiChecker(OPENAPI_PATH);
const ajv = v1.ajv;

/** Checks a received response against api-reference/openapi.yaml. */
export const assertMatchesOpenApi = v1.assertMatches;

let errorSchema: ValidateFunction | undefined;

/** Checks that `body` is the documented error envelope (`components/schemas/Error`). */
export function assertErrorEnvelope(body: unknown): void {
  errorSchema ??= ajv.compile({ $ref: 'openapi#/components/schemas/Error' });
  if (!errorSchema(body)) throw new Error(`not the error envelope: ${ajv.errorsText(errorSchema.errors)}\n${JSON.stringify(body).slice(0, 500)}`);
}
