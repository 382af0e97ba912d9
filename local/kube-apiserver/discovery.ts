/**
 * What clients read before they ask for resources: the server's version, legacy discovery
 * (`/api`, `/apis`, a group, a group version's resources) and just enough of the OpenAPI v3
 * documents for kubectl; all derived from the types the store serves, CRDs included.
 */
import { ApiError } from './errors';
import type { Json } from './fields';
import type { ResourceType } from './resources';

export const VERSION = { major: '1', minor: '33', gitVersion: 'v1.33.0-marketindexer-test', platform: 'linux/amd64', goVersion: 'n/a' };

/** `/api`, `/apis`, `/apis/<group>`, `/api/v1`, `/apis/<group>/<version>`. */
export function discovery(types: ResourceType[], segments: string[]): Json {
  if (segments.length === 1 && segments[0] === 'api') return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] };
  if (segments.length === 1 && segments[0] === 'apis') {
    const groups = [...new Set(types.filter((t) => t.group).map((t) => t.group))].map((name) => {
      const versions = [...new Set(types.filter((t) => t.group === name).map((t) => t.version))].map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
      return { name, versions, preferredVersion: versions[0] };
    });
    return { kind: 'APIGroupList', apiVersion: 'v1', groups };
  }
  const [group, version] = segments[0] === 'api' ? ['', segments[1]!] : [segments[1]!, segments[2]];
  if (version === undefined) {
    const versions = [...new Set(types.filter((t) => t.group === group).map((t) => t.version))].map((v) => ({ groupVersion: `${group}/${v}`, version: v }));
    if (!versions.length) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    return { kind: 'APIGroup', apiVersion: 'v1', name: group, versions, preferredVersion: versions[0] };
  }
  const resources = types
    .filter((t) => t.group === group && t.version === version)
    .flatMap((t) => [
      {
        name: t.plural,
        singularName: t.singular,
        namespaced: t.namespaced,
        kind: t.kind,
        verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
        ...(t.shortNames ? { shortNames: t.shortNames } : {}),
      },
      ...(t.status ? [{ name: `${t.plural}/status`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] }] : []),
    ]);
  if (!resources.length) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources };
}

/**
 * Just enough OpenAPI v3 for kubectl to see that every PATCH takes `fieldValidation` (and so to
 * leave validation to the server) and `dryRun`; no schemas are published.
 */
export function openApiV3(types: ResourceType[], gv: string[]): Json {
  const gvPath = (t: ResourceType) => (t.group ? `apis/${t.group}/${t.version}` : `api/${t.version}`);
  if (!gv.length) {
    return { paths: Object.fromEntries([...new Set(types.map(gvPath))].map((p) => [p, { serverRelativeURL: `/openapi/v3/${p}` }])) };
  }
  const wanted = gv.join('/');
  const params = ['fieldValidation', 'dryRun', 'fieldManager', 'force'].map((name) => ({ name, in: 'query', schema: { type: 'string' } }));
  const paths: Json = {};
  for (const t of types.filter((x) => gvPath(x) === wanted)) {
    const item = `/${gvPath(t)}${t.namespaced ? '/namespaces/{namespace}' : ''}/${t.plural}/{name}`;
    const op = { 'x-kubernetes-group-version-kind': { group: t.group, version: t.version, kind: t.kind }, parameters: params, responses: {} };
    paths[item] = { patch: op, put: op, get: { ...op, parameters: [] }, delete: op };
    paths[`/${gvPath(t)}${t.namespaced ? '/namespaces/{namespace}' : ''}/${t.plural}`] = { post: op };
  }
  if (!Object.keys(paths).length) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
  return { openapi: '3.0.0', info: { title: 'market-indexer test API server', version: VERSION.gitVersion }, paths };
}
