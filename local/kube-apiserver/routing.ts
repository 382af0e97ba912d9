/**
 * Routing a resource request: which type, namespace, name and subresource a path names
 * (`/api/v1/…`, `/apis/<group>/<version>/…`, or discovery when it stops at the version), and the
 * request as RBAC and the tests see it (`RequestRecord`: who, which verb on which resource).
 */
import type http from 'node:http';
import type { RequestRecord } from './rbac';
import type { ResourceType } from './resources';
import type { Store } from './store';

export interface Route {
  type: ResourceType;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
}

/** The route of an `/api` or `/apis` path's segments; 404 for a type the store does not serve. */
export function route(store: Store, segments: string[]): Route | 'discovery' {
  let group: string;
  let version: string;
  let rest: string[];
  if (segments[0] === 'api') {
    group = '';
    version = segments[1]!;
    rest = segments.slice(2);
  } else {
    group = segments[1]!;
    version = segments[2]!;
    rest = segments.slice(3);
  }
  if (!rest.length) return 'discovery';
  let namespace: string | undefined;
  // `/api/v1/namespaces/<name>/status|finalize` is a namespace's subresource, not a namespaced resource.
  if (rest[0] === 'namespaces' && rest.length >= 3 && !(group === '' && rest.length === 3 && ['status', 'finalize'].includes(rest[2]!))) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const type = store.typeOf(group, version, rest[0]!);
  return { type, namespace, name: rest[1], subresource: rest[2] };
}

/** Whether a list request asks for a watch (`?watch=true` or `1`). */
export const isWatch = (q: URLSearchParams): boolean => q.get('watch') === 'true' || q.get('watch') === '1';

/** The request's record: the bearer token names the client; its status is filled in when answered. */
export function requestRecord(req: http.IncomingMessage, q: URLSearchParams, r: Route): RequestRecord {
  const { type: t, namespace, name, subresource } = r;
  const method = req.method ?? 'GET';
  const verb: RequestRecord['verb'] =
    method === 'GET' ? (name ? 'get' : isWatch(q) ? 'watch' : 'list')
    : method === 'POST' ? 'create' : method === 'PUT' ? 'update' : method === 'PATCH' ? 'patch' : 'delete';
  return {
    token: /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1],
    verb,
    group: t.group,
    resource: subresource ? `${t.plural}/${subresource}` : t.plural,
    namespace,
    name,
    status: 0,
    ...(req.headers['content-type'] ? { contentType: req.headers['content-type'].split(';')[0]!.trim() } : {}),
  };
}
