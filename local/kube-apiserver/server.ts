import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { parse as parseYaml, stringify } from 'yaml';
import type { Json } from './fields';
import { decodeProtobuf, PROTOBUF } from './protobuf';
import { apiVersionOf, type ResourceType } from './resources';
import { ApiError, parseSelector, Store, type WatchEvent } from './store';
import type { Authorizer, RequestRecord } from './rbac';

/**
 * A protocol-faithful stand-in for kube-apiserver on loopback, for tests and for trying the
 * operator on a laptop (`npm run kube:test-apiserver`): legacy discovery, CRUD, list and watch
 * with label selectors, optimistic concurrency (409), watches from a resourceVersion (410 Gone
 * when too old), merge / JSON / apply patches (server-side apply with field managers and
 * conflicts), status subresources, finalizers, namespace deletion, garbage collection by
 * `ownerReferences`, CRDs, dry runs, and the Table output `kubectl get` asks for. Checked with
 * the real kubectl v1.33 in test/integration/kube-apiserver.test.ts.
 *
 * Request bodies are JSON, YAML (apply) or, for the built-in kinds kubectl's imperative
 * `create namespace|secret|configmap|serviceaccount` sends that way, protobuf (./protobuf.ts);
 * answers are always JSON, which every client-go caller accepts.
 *
 * Not served: authentication (a bearer token names the client; with `authorizer`, RBAC applies to
 * the identities it maps, rbac.ts, and any other client is admitted), pods and controllers
 * (tests patch a Deployment's status themselves), aggregated discovery and OpenAPI documents
 * (clients fall back to legacy discovery), protobuf bodies of other kinds (415, naming the kind)
 * and protobuf answers (406 to a client that accepts nothing else), strategic merge patch
 * (treated as a JSON merge patch: lists are replaced, not merged by key), scale and other
 * subresources but status.
 */
/** One request, as RBAC sees it: who (the bearer token), which verb on which resource. */
export type { RequestRecord } from './rbac';

export interface TestApiServer {
  url: string;
  port: number;
  store: Store;
  requests: RequestRecord[];
  /** A kubeconfig whose bearer token names the client in `requests`. */
  kubeconfig(token?: string): string;
  /** Drops every open connection (watches included) and starts listening again on the same port. */
  restart(opts?: { compact?: boolean }): Promise<void>;
  /** Refuses connections until `resume`. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

const VERSION = { major: '1', minor: '33', gitVersion: 'v1.33.0-marketindexer-test', platform: 'linux/amd64', goVersion: 'n/a' };

function statusBody(e: ApiError): Json {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: e.message, reason: e.reason, details: e.details, code: e.code };
}

function send(res: http.ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Whether an Accept header admits a JSON answer: absent, JSON (any parameters, a `+json` suffix) or a wildcard. */
function acceptsJson(accept: string | undefined): boolean {
  if (!accept) return true;
  return accept.split(',').some((range) => {
    const type = range.split(';')[0]!.trim().toLowerCase();
    return type === '*/*' || type === 'application/*' || type === 'application/json' || type.endsWith('+json');
  });
}

/** RFC 7386. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Json = typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as Json) } : {};
  for (const [k, v] of Object.entries(patch as Json)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** RFC 6902 (add, remove, replace, test). */
function jsonPatch(target: Json, ops: { op: string; path: string; value?: unknown }[]): Json {
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

function jsonPath(obj: unknown, path: string): unknown {
  // The forms printer columns use: .a.b, .a[0].b, .a[?(@.k=="v")].b
  const tokens = path.match(/\.[A-Za-z0-9_-]+|\[\d+\]|\[\?\(@\.[A-Za-z0-9_-]+=="[^"]*"\)\]/g) ?? [];
  let v: unknown = obj;
  for (const t of tokens) {
    if (v === undefined || v === null) return undefined;
    if (t.startsWith('.')) v = (v as Json)[t.slice(1)];
    else if (t.startsWith('[?')) {
      const [, k, want] = /@\.([A-Za-z0-9_-]+)=="([^"]*)"/.exec(t)!;
      v = Array.isArray(v) ? v.find((x) => (x as Json)?.[k!] === want) : undefined;
    } else v = Array.isArray(v) ? v[Number(t.slice(1, -1))] : undefined;
  }
  return v;
}

const age = (ts: string | undefined) => {
  if (!ts) return '<unknown>';
  const s = Math.max(0, Math.floor((Date.now() - Date.parse(ts)) / 1000));
  return s < 120 ? `${s}s` : s < 7200 ? `${Math.floor(s / 60)}m` : `${Math.floor(s / 3600)}h`;
};

function table(t: ResourceType, items: Json[], rv: string): Json {
  const columns = [
    { name: 'Name', type: 'string', format: 'name', description: 'name', priority: 0 },
    ...(t.columns ?? [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }]).map((c) => ({ name: c.name, type: c.type, format: '', description: c.jsonPath, priority: 0 })),
  ];
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion: rv },
    columnDefinitions: columns,
    rows: items.map((o) => ({
      cells: [
        (o.metadata as Json).name,
        ...(t.columns ?? [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }]).map((c) => {
          const v = jsonPath(o, c.jsonPath);
          return c.type === 'date' ? age(v as string) : (v ?? '<none>');
        }),
      ],
      object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata },
    })),
  };
}

interface Route {
  type: ResourceType;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
}

export async function startTestApiServer(opts: { port?: number; host?: string; historySize?: number; authorizer?: (store: Store) => Authorizer } = {}): Promise<TestApiServer> {
  const store = new Store(opts.historySize);
  const requests: RequestRecord[] = [];
  // RBAC for the identities it knows (rbac.ts); every other client is unrestricted.
  const authorizer = opts.authorizer?.(store);
  const sockets = new Set<Socket>();
  const stops = new Set<() => void>();
  let paused = false;

  function route(segments: string[]): Route | 'discovery' {
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
    if (rest[0] === 'namespaces' && rest.length >= 3 && !(group === '' && rest.length === 3 && ['status', 'finalize'].includes(rest[2]!))) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const type = store.typeOf(group, version, rest[0]!);
    return { type, namespace, name: rest[1], subresource: rest[2] };
  }

  function discovery(segments: string[]): Json {
    const types = store.allTypes();
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
  function openApiV3(gv: string[]): Json {
    const types = store.allTypes();
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

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const q = url.searchParams;
    const segments = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    if (url.pathname === '/version') return send(res, 200, VERSION);
    if (url.pathname === '/healthz' || url.pathname === '/readyz' || url.pathname === '/livez') {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      return void res.end('ok');
    }
    if (segments[0] === 'openapi' && segments[1] === 'v3') return send(res, 200, openApiV3(segments.slice(2)));
    if (segments[0] !== 'api' && segments[0] !== 'apis') throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    if (!acceptsJson(req.headers.accept)) {
      throw new ApiError(406, 'NotAcceptable', `the test API server answers application/json only; the request accepts ${req.headers.accept}`);
    }
    if (segments.length <= (segments[0] === 'api' ? 2 : 3)) return send(res, 200, discovery(segments));
    const r = route(segments);
    if (r === 'discovery') return send(res, 200, discovery(segments));
    const { type: t, namespace, name, subresource } = r;
    const method0 = req.method ?? 'GET';
    const verb: RequestRecord['verb'] =
      method0 === 'GET' ? (name ? 'get' : q.get('watch') === 'true' || q.get('watch') === '1' ? 'watch' : 'list')
      : method0 === 'POST' ? 'create' : method0 === 'PUT' ? 'update' : method0 === 'PATCH' ? 'patch' : 'delete';
    const record: RequestRecord = {
      token: /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1],
      verb,
      group: t.group,
      resource: subresource ? `${t.plural}/${subresource}` : t.plural,
      namespace,
      name,
      status: 0,
      ...(req.headers['content-type'] ? { contentType: req.headers['content-type'].split(';')[0]!.trim() } : {}),
    };
    requests.push(record);
    res.once('finish', () => (record.status = res.statusCode));
    authorizer?.authorize(record);
    if (subresource && subresource !== 'status') throw new ApiError(404, 'NotFound', `the server could not find the requested resource (${subresource})`);
    const scope = subresource === 'status' ? 'status' : 'main';
    if (scope === 'status' && !t.status) throw new ApiError(404, 'NotFound', `${t.plural} has no status subresource`);
    const manager = q.get('fieldManager') ?? (req.headers['user-agent'] ?? 'unknown').split('/')[0]!;
    const dryRun = q.get('dryRun') === 'All';
    const method = req.method ?? 'GET';
    /** A write, after RBAC's escalation checks on the object it would store. */
    const admitted = (write: (dry: boolean) => Json): Json => {
      if (authorizer && t.group === 'rbac.authorization.k8s.io') authorizer.admit(record, write(true));
      return write(dryRun);
    };

    if (method === 'GET' && !name) {
      const selector = parseSelector(q.get('labelSelector'));
      if (q.get('watch') === 'true' || q.get('watch') === '1') return watch(req, res, t, namespace, selector, q.get('resourceVersion') ?? undefined, q.get('timeoutSeconds'));
      const items = store.list(t, namespace, selector, q.get('fieldSelector') ?? undefined);
      if ((req.headers.accept ?? '').includes('as=Table')) return send(res, 200, table(t, items, store.resourceVersion));
      return send(res, 200, { apiVersion: apiVersionOf(t), kind: `${t.kind}List`, metadata: { resourceVersion: store.resourceVersion }, items });
    }
    if (method === 'GET') {
      const o = store.get(t, namespace, name!);
      if ((req.headers.accept ?? '').includes('as=Table')) return send(res, 200, table(t, [o], store.resourceVersion));
      return send(res, 200, o);
    }
    const raw = await readBody(req);
    const contentType = (req.headers['content-type'] ?? 'application/json').split(';')[0]!.trim();
    /** The body as JSON; a protobuf one must be of the kind the request takes (`expected`). */
    const parse = (expected: string = t.kind): Json => {
      if (contentType === PROTOBUF) {
        if (method === 'PATCH') throw new ApiError(415, 'UnsupportedMediaType', 'a patch is JSON or YAML, never protobuf: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml');
        return decodeProtobuf(raw, expected);
      }
      try {
        const text = raw.toString('utf8');
        return (contentType === 'application/apply-patch+yaml' ? parseYaml(text) : JSON.parse(text || '{}')) as Json;
      } catch (err) {
        throw new ApiError(400, 'BadRequest', `the request body could not be decoded: ${(err as Error).message.split('\n')[0]}`);
      }
    };
    switch (method) {
      case 'POST': {
        if (name) throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
        const body = parse();
        strictCheck(q, t, body);
        return send(res, 201, admitted((d) => store.create(t, namespace, body, manager, d)));
      }
      case 'PUT': {
        const body = parse();
        strictCheck(q, t, body);
        return send(res, 200, admitted((d) => store.update(t, namespace, name!, body, manager, scope, d)));
      }
      case 'PATCH': {
        const body = parse();
        if (contentType === 'application/apply-patch+yaml') {
          if (!q.get('fieldManager')) throw new ApiError(400, 'BadRequest', 'PATCH with application/apply-patch+yaml requires the fieldManager parameter');
          strictCheck(q, t, body);
          const force = q.get('force') === 'true';
          const out = admitted((d) => store.apply(t, namespace, name!, body, manager, force, scope, d));
          return send(res, 200, out);
        }
        if (contentType === 'application/json-patch+json') {
          return send(res, 200, admitted((d) => store.patch(t, namespace, name!, (live) => jsonPatch(live, body as unknown as { op: string; path: string; value?: unknown }[]), manager, scope, d)));
        }
        if (contentType === 'application/merge-patch+json' || contentType === 'application/strategic-merge-patch+json') {
          return send(res, 200, admitted((d) => store.patch(t, namespace, name!, (live) => mergePatch(live, body) as Json, manager, scope, d)));
        }
        throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`);
      }
      case 'DELETE': {
        if (!name) throw new ApiError(405, 'MethodNotAllowed', 'deletecollection is not served by the test API server');
        const body = raw.length ? parse('DeleteOptions') : {};
        const bodyDryRun = Array.isArray(body.dryRun) && body.dryRun.includes('All');
        const gone = store.delete(t, namespace, name, manager, { dryRun: dryRun || bodyDryRun, preconditionUid: (body.preconditions as Json | undefined)?.uid as string | undefined });
        return send(res, 200, gone);
      }
      default:
        throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
    }
  }

  /** `fieldValidation=Strict` (kubectl's default): unknown fields of a custom resource are an error. */
  function strictCheck(q: URLSearchParams, t: ResourceType, body: Json): void {
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

  function watch(req: http.IncomingMessage, res: http.ServerResponse, t: ResourceType, ns: string | undefined, selector: ReturnType<typeof parseSelector>, fromRv: string | undefined, timeout: string | null): void {
    const write = (e: WatchEvent) => res.write(`${JSON.stringify(e)}\n`);
    let stop: () => void;
    try {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
      stop = store.watch(t, ns, selector, fromRv, write);
    } catch (err) {
      // As the real server does: the watch opens, then says why it ends.
      if (err instanceof ApiError) {
        write({ type: 'ERROR', object: statusBody(err) });
        return void res.end();
      }
      throw err;
    }
    stops.add(stop);
    const end = () => {
      stop();
      stops.delete(stop);
      res.end();
    };
    req.on('close', end);
    if (timeout) setTimeout(end, Number(timeout) * 1000).unref();
  }

  const server = http.createServer((req, res) => {
    if (paused) return void req.socket.destroy();
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) return void res.end();
      if (err instanceof ApiError) return send(res, err.code, statusBody(err));
      send(res, 500, statusBody(new ApiError(500, 'InternalError', (err as Error).message)));
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, host, resolve));
  const port = (server.address() as AddressInfo).port;

  const dropConnections = () => {
    for (const stop of stops) stop();
    stops.clear();
    for (const s of sockets) s.destroy();
  };
  const closeServer = () =>
    new Promise<void>((resolve) => {
      dropConnections();
      server.close(() => resolve());
    });

  const api: TestApiServer = {
    url: `http://${host}:${port}`,
    port,
    store,
    requests,
    async restart(o = {}) {
      await closeServer();
      if (o.compact ?? true) store.compact();
      await new Promise<void>((resolve) => server.listen(port, host, resolve));
    },
    async pause() {
      paused = true;
      dropConnections();
    },
    async resume() {
      paused = false;
    },
    close: closeServer,
    kubeconfig(token = 'test') {
      return stringify({
        apiVersion: 'v1',
        kind: 'Config',
        // Plain HTTP on loopback: client-node only allows it with TLS verification waived.
        clusters: [{ name: 'market-indexer-test', cluster: { server: api.url, 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'market-indexer-test', user: { token } }],
        contexts: [{ name: 'market-indexer-test', context: { cluster: 'market-indexer-test', user: 'market-indexer-test' } }],
        'current-context': 'market-indexer-test',
      });
    },
  };
  return api;
}
