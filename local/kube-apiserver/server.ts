/**
 * A protocol-faithful stand-in for kube-apiserver on loopback, for tests and for trying the
 * operator on a laptop (`npm run kube:test-apiserver`): legacy discovery, CRUD, list and watch
 * with label selectors, optimistic concurrency (409), watches from a resourceVersion (410 Gone
 * when too old), merge / JSON / apply patches (server-side apply with field managers and
 * conflicts), status subresources, finalizers, namespace deletion, garbage collection by
 * `ownerReferences`, CRDs, ValidatingAdmissionPolicies (admission-policies.ts), dry runs, and
 * the Table output `kubectl get` asks for. Checked with the real kubectl v1.33 in
 * test/integration/kube-apiserver.test.ts.
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
 *
 * This file is the HTTP server: the dispatch of a request by method, watches as chunked
 * streams, and the server's own life (restart, pause, close, a kubeconfig for it). The parts:
 * routing.ts (path → type and the request's record), decode.ts (bodies, patches, strict field
 * validation), discovery.ts, table.ts; the semantics are store.ts's.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { stringify } from 'yaml';
import { createPolicyAdmission, UNRESTRICTED } from './admission-policies';
import { acceptsJson, decodeBody, jsonPatch, mergePatch, readBody, strictCheck } from './decode';
import { discovery, openApiV3, VERSION } from './discovery';
import type { Json } from './fields';
import type { Authorizer, RequestRecord } from './rbac';
import { apiVersionOf, type ResourceType } from './resources';
import { isWatch, route, requestRecord } from './routing';
import { ApiError, parseSelector, Store, type Selector, type WatchEvent } from './store';
import { table } from './table';

/** One request, as RBAC sees it: who (the bearer token), which verb on which resource. */
export type { RequestRecord } from './rbac';

export interface TestApiServer {
  url: string;
  port: number;
  store: Store;
  requests: RequestRecord[];
  /** The watches open now (each on its own connection, as client-go runs them). */
  readonly openWatches: number;
  /** A kubeconfig whose bearer token names the client in `requests`. */
  kubeconfig(token?: string): string;
  /** Drops every open connection (watches included) and starts listening again on the same port. */
  restart(opts?: { compact?: boolean }): Promise<void>;
  /** Refuses connections until `resume`. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

function statusBody(e: ApiError): Json {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: e.message, reason: e.reason, details: e.details, code: e.code };
}

/** A watch event as a line of the stream: serialized once, however many watches it reaches. */
const lines = new WeakMap<WatchEvent, string>();
function lineOf(e: WatchEvent): string {
  let line = lines.get(e);
  if (line === undefined) lines.set(e, (line = `${JSON.stringify(e)}\n`));
  return line;
}

function send(res: http.ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export async function startTestApiServer(opts: { port?: number; host?: string; historySize?: number; authorizer?: (store: Store) => Authorizer } = {}): Promise<TestApiServer> {
  const store = new Store(opts.historySize);
  const requests: RequestRecord[] = [];
  // RBAC for the identities it knows (rbac.ts); every other client is unrestricted.
  const authorizer = opts.authorizer?.(store);
  const policies = createPolicyAdmission(store);
  const sockets = new Set<Socket>();
  const stops = new Set<() => void>();
  let paused = false;

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const q = url.searchParams;
    const segments = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    if (url.pathname === '/version') return send(res, 200, VERSION);
    if (url.pathname === '/healthz' || url.pathname === '/readyz' || url.pathname === '/livez') {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      return void res.end('ok');
    }
    if (segments[0] === 'openapi' && segments[1] === 'v3') return send(res, 200, openApiV3(store.allTypes(), segments.slice(2)));
    if (segments[0] !== 'api' && segments[0] !== 'apis') throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    if (!acceptsJson(req.headers.accept)) {
      throw new ApiError(406, 'NotAcceptable', `the test API server answers application/json only; the request accepts ${req.headers.accept}`);
    }
    if (segments.length <= (segments[0] === 'api' ? 2 : 3)) return send(res, 200, discovery(store.allTypes(), segments));
    const r = route(store, segments);
    if (r === 'discovery') return send(res, 200, discovery(store.allTypes(), segments));
    const { type: t, namespace, name, subresource } = r;
    const record = requestRecord(req, q, r);
    requests.push(record);
    const arrived = performance.now();
    res.once('finish', () => {
      record.status = res.statusCode;
      record.ms = performance.now() - arrived;
    });
    authorizer?.authorize(record);
    if (subresource && subresource !== 'status') throw new ApiError(404, 'NotFound', `the server could not find the requested resource (${subresource})`);
    const scope = subresource === 'status' ? 'status' : 'main';
    if (scope === 'status' && !t.status) throw new ApiError(404, 'NotFound', `${t.plural} has no status subresource`);
    const manager = q.get('fieldManager') ?? (req.headers['user-agent'] ?? 'unknown').split('/')[0]!;
    const dryRun = q.get('dryRun') === 'All';
    const method = req.method ?? 'GET';
    /**
     * A write, after RBAC's escalation checks and the admission policies on the object it would
     * store (a dry run of it; `old` is the live object an update replaces).
     */
    const admitted = (write: (dry: boolean) => Json): Json => {
      const rbac = authorizer && t.group === 'rbac.authorization.k8s.io';
      if (rbac || policies.concerns(t.group, t.plural)) {
        const old = name ? store.find(t, namespace, name) : undefined;
        const preview = write(true);
        if (rbac) authorizer.admit(record, preview);
        policies.admit(record, authorizer?.identify(record.token) ?? UNRESTRICTED, preview, old);
      }
      return write(dryRun);
    };

    if (method === 'GET' && !name) {
      const selector = parseSelector(q.get('labelSelector'));
      if (isWatch(q)) return watch(req, res, t, namespace, selector, q.get('resourceVersion') ?? undefined, q.get('timeoutSeconds'));
      // Serialized at once: the stored objects themselves, not copies.
      const items = store.list(t, namespace, selector, q.get('fieldSelector') ?? undefined, { shared: true });
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
    const parse = (expected: string = t.kind): Json => decodeBody(raw, contentType, method, expected);
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

  function watch(req: http.IncomingMessage, res: http.ServerResponse, t: ResourceType, ns: string | undefined, selector: Selector, fromRv: string | undefined, timeout: string | null): void {
    const write = (e: WatchEvent) => res.write(lineOf(e));
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
    get openWatches() {
      return stops.size;
    },
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
