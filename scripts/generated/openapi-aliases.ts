import YAML from 'yaml';
import { ALIAS_HEADER_NAMES } from '../../server/http/aliases';
import { aliasOperationsOf, parametersOf, statusesOf, type AliasOperation } from '../../server/routes/contract';
import type { Presentation, RouteDeps } from '../../server/routes/table';

/**
 * The deprecated alias operations of an OpenAPI document (D-168), written between these two
 * comment lines of its `paths` from the alias list (`server/http/aliases.ts`), the route table
 * and the document's own canonical operations: each alias answers as its canonical operation,
 * so it gets that operation's parameters and responses, plus the alias headers.
 */
const BEGIN = '# BEGIN generated alias operations';
const END = '# END generated alias operations';

/** The tag every alias operation carries, so the rendered document lists them apart. */
export const ALIAS_TAG = 'deprecated aliases';

/** The `components.headers` entry declaring each alias response header. */
const HEADER_COMPONENT: Record<string, string> = { Deprecation: 'Deprecation', Link: 'CanonicalLink', 'X-Service-Canonical-Path': 'CanonicalPath' };

type Json = Record<string, unknown>;
type Operation = { operationId: string; summary?: string; security?: unknown; parameters?: Json[]; requestBody?: Json; responses: Record<string, Json> };

const copy = <T>(x: T): T => structuredClone(x);

function aliasOperation(doc: { components: Record<string, Record<string, Json>> }, op: AliasOperation, canonical: Operation, requireNamed: boolean): Json {
  /** A response as declared (following a components reference). */
  const located = (status: string): Json => {
    const r = canonical.responses[status]!;
    const ref = r.$ref as string | undefined;
    if (!ref) return r;
    const [, , kind, name] = ref.split('/');
    const target = doc.components[kind!]?.[name!];
    if (!target) throw new Error(`${ref} is not declared`);
    return target;
  };
  const headers: Json = {};
  for (const h of ALIAS_HEADER_NAMES[op.kind]) {
    const component = HEADER_COMPONENT[h];
    if (!component || !doc.components.headers?.[component]) throw new Error(`the alias header ${h} needs components.headers.${component ?? '?'}`);
    headers[h] = { $ref: `#/components/headers/${component}` };
  }
  // A query-conditioned alias serves one rule set of its operation: exactly its statuses.
  const statuses = op.query === undefined ? Object.keys(canonical.responses) : statusesOf(op.route).map(String);
  const responses: Json = {};
  for (const status of statuses) {
    if (!canonical.responses[status]) throw new Error(`${op.method} ${op.canonicalPath} does not declare ${status}`);
    const r = located(status);
    const content = r.content as Record<string, { schema?: Json }> | undefined;
    responses[status] = {
      description: r.description,
      headers: { ...copy((r.headers as Json) ?? {}), ...copy(headers) },
      // The canonical schema by its name under `components` (D-520): one definition the alias
      // cannot drift from, and a reference generators resolve (a pointer into `paths` is not a
      // type they can name). Where the canonical schema is inline (the legacy document's v1
      // operations, generated), a copy: still no pointer into `paths`.
      ...(content
        ? {
            content: Object.fromEntries(
              Object.entries(content).map(([type, media]) => {
                if (media.schema !== undefined && !media.schema.$ref && requireNamed) {
                  throw new Error(`${op.method} ${op.canonicalPath} ${status}: name its ${type} schema under components/schemas (D-520)`);
                }
                return [type, { schema: copy(media.schema) }];
              }),
            ),
          }
        : {}),
    };
  }
  const parameters = (() => {
    if (op.query === undefined) return copy(canonical.parameters);
    // Only the rule set the alias serves: its parameters from the joi rules, the descriptions from the canonical operation.
    const declared = (canonical.parameters ?? []).map((p) => (p.$ref ? doc.components.parameters![(p.$ref as string).split('/').pop()!]! : p));
    return [
      ...declared.filter((p) => p.in === 'header').map(copy),
      ...parametersOf(op.route).map((p) => {
        const description = declared.find((d) => d.name === p.name && d.in === p.in)?.description;
        return { name: p.name, in: p.in, ...(p.required ? { required: true } : {}), ...(description ? { description } : {}), schema: p.schema };
      }),
    ];
  })();
  const target = `${op.method} ${op.canonicalPath}`;
  const how =
    op.kind === 'root'
      ? `The root alias of \`${target}\`${op.query ? ` (only with one \`${op.query}\`: otherwise the path is 404)` : ''}`
      : `The legacy \`/api/\` prefix form of \`${target}\``;
  return {
    tags: [ALIAS_TAG],
    operationId: `${canonical.operationId}${op.kind === 'root' ? 'RootAlias' : 'ApiPrefixAlias'}`,
    summary:
      op.query === undefined
        ? `${canonical.summary ?? canonical.operationId} (deprecated alias)`
        : `${op.method} ${op.canonicalPath} with \`${op.query}\` only (deprecated alias)`,
    description: `${how}: deprecated, answered as that operation, with ${ALIAS_HEADER_NAMES[op.kind].map((h) => `\`${h}\``).join(', ')} (spec 4.1). Generated by \`npm run generate\` (D-168).`,
    deprecated: true,
    // The public lookup an alias narrows to needs no signature.
    ...(canonical.security !== undefined && !(op.query !== undefined && op.route.access.by !== 'wallet') ? { security: copy(canonical.security) } : {}),
    ...(parameters?.length ? { parameters } : {}),
    ...(canonical.requestBody ? { requestBody: copy(canonical.requestBody) } : {}),
    responses,
  };
}

/** The document's text with its generated alias operations as `presentation`'s route table and the alias list make them. */
export function withAliasOperations(text: string, presentation: Presentation, options: { requireNamedSchemas?: boolean } = {}): string {
  const lines = text.split('\n');
  const begin = lines.findIndex((l) => l.trim() === BEGIN);
  const end = lines.findIndex((l) => l.trim() === END);
  if (begin < 0 || end < begin) throw new Error(`the document needs the lines "${BEGIN}" and "${END}" at the end of its paths`);
  const indent = /^\s*/.exec(lines[begin]!)![0];
  const doc = YAML.parse([...lines.slice(0, begin), ...lines.slice(end + 1)].join('\n'));
  // The route table only needs its dependencies when a handler runs.
  const routes = presentation.routes({ chainId: 'devnet' } as RouteDeps);
  const paths: Record<string, Json> = {};
  for (const op of aliasOperationsOf(presentation.prefix, routes)) {
    const canonical = doc.paths?.[op.canonicalPath]?.[op.method.toLowerCase()] as Operation | undefined;
    if (!canonical) throw new Error(`${op.method} ${op.canonicalPath} is not in the document`);
    if (doc.paths[op.path]) throw new Error(`${op.path} is declared by hand: alias operations are generated`);
    (paths[op.path] ??= {})[op.method.toLowerCase()] = aliasOperation(doc, op, canonical, options.requireNamedSchemas ?? false);
  }
  const out = new YAML.Document(paths, { aliasDuplicateObjects: false });
  // Compact: a parameter or a response per line, as the hand-written operations are.
  YAML.visit(out, {
    Map(_key, node, path) {
      const keys = path.filter(YAML.isPair).map((p) => String(YAML.isScalar(p.key) ? p.key.value : p.key));
      if (keys.length === 4 && keys[2] === 'responses') node.flow = true;
      if (keys.length === 3 && keys[2] === 'parameters') node.flow = true;
    },
    Seq(_key, node, path) {
      const keys = path.filter(YAML.isPair).map((p) => String(YAML.isScalar(p.key) ? p.key.value : p.key));
      if (keys.length === 3 && (keys[2] === 'tags' || keys[2] === 'security')) node.flow = true;
    },
  });
  const block = out
    .toString({ lineWidth: 0, indent: 2, singleQuote: true, flowCollectionPadding: true })
    .trimEnd()
    .split('\n')
    .map((l) => `${indent}${l}`);
  return [...lines.slice(0, begin + 1), ...block, ...lines.slice(end)].join('\n');
}
