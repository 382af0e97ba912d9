import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { isPermitted, type Verb } from '../../cdk8s/lib/operator-permissions';
import type { KindInfo } from '../../cdk8s/lib/kinds';
import { pathOf } from './paths';

export type Json = Record<string, unknown>;

export interface KubeObject extends Json {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }[];
    finalizers?: string[];
    deletionTimestamp?: string;
    creationTimestamp?: string;
  };
}

/** A failed request: the API server's status code and reason (Conflict, NotFound, …). */
export class KubeError extends Error {
  override name = 'KubeError';
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
  /** Worth retrying with backoff: throttling, server errors, the connection. */
  get transient(): boolean {
    return this.status === 429 || this.status >= 500 || this.status === 0;
  }
}

export const isNotFound = (e: unknown) => e instanceof KubeError && e.status === 404;
export const isConflict = (e: unknown) => e instanceof KubeError && e.status === 409;
export const isForbidden = (e: unknown) => e instanceof KubeError && e.status === 403;

export interface Write {
  verb: 'apply' | 'create' | 'update' | 'patch' | 'delete' | 'status';
  kind: string;
  namespace: string | undefined;
  name: string;
}

export interface KubeClient {
  kubeConfig: KubeConfig;
  list(info: KindInfo, opts?: { labelSelector?: string; namespace?: string }): Promise<{ items: KubeObject[]; metadata: { resourceVersion?: string } }>;
  get(info: KindInfo, namespace: string | undefined, name: string): Promise<KubeObject | undefined>;
  create(info: KindInfo, obj: KubeObject): Promise<KubeObject>;
  replace(info: KindInfo, obj: KubeObject): Promise<KubeObject>;
  apply(info: KindInfo, obj: KubeObject, fieldManager: string): Promise<KubeObject>;
  mergePatch(info: KindInfo, namespace: string | undefined, name: string, patch: Json, subresource?: 'status'): Promise<KubeObject>;
  delete(info: KindInfo, namespace: string | undefined, name: string, opts?: { uid?: string }): Promise<void>;
}

/**
 * A JSON client for the few calls the operator makes, on client-node's KubeConfig (kubeconfig
 * files, in-cluster service accounts, exec and token auth). It refuses any request outside the
 * operator's permission table (cdk8s/lib/operator-permissions.ts), so the ClusterRole the kit renders from that
 * table can never fall short of what the code does. `onWrite` sees every request that changes
 * the cluster.
 */
export function createKubeClient(kc: KubeConfig, opts: { platformNamespace: string; onWrite?: (w: Write) => void; timeoutMs?: number }): KubeClient {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('the kubeconfig has no current cluster');
  const base = new URL(server);
  const transport = base.protocol === 'https:' ? https : http;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  // One keep-alive agent for every request. client-node's `applyToHTTPSOptions` makes a new Agent
  // at each call, without keep-alive: a new connection (in a cluster, a TLS handshake) per
  // request, a fifth of the operator's CPU while creating tenants. The TLS options it sets stay
  // on each request, so the agent's connections are made with them (and pooled by them).
  const agent = new transport.Agent({ keepAlive: true });

  async function request<T>(
    verb: Verb,
    info: KindInfo,
    at: { namespace?: string; name?: string },
    o: { method: string; query?: Record<string, string>; body?: unknown; contentType?: string; subresource?: string },
  ): Promise<T> {
    const resource = o.subresource ? `${info.plural}/${o.subresource}` : info.plural;
    const namespace = info.namespaced ? at.namespace : undefined;
    if (!isPermitted(info.group, resource, verb, { namespace, name: at.name, platformNamespace: opts.platformNamespace })) {
      const where = info.namespaced ? (namespace ? ` in namespace ${namespace}` : ' in every namespace') : at.name ? ` ${at.name}` : '';
      throw new Error(`the operator is not permitted to ${verb} ${resource}${info.group ? `.${info.group}` : ''}${where} (cdk8s/lib/operator-permissions.ts)`);
    }
    const path = pathOf(info, namespace, at.name, o.subresource);
    const url = new URL(base.pathname.replace(/\/$/, '') + path, base);
    for (const [k, v] of Object.entries(o.query ?? {})) url.searchParams.set(k, v);
    const options: https.RequestOptions = { method: o.method, headers: { Accept: 'application/json' }, timeout: timeoutMs };
    await kc.applyToHTTPSOptions(options);
    options.agent = agent;
    const body = o.body === undefined ? undefined : JSON.stringify(o.body);
    if (body !== undefined) Object.assign(options.headers!, { 'Content-Type': o.contentType ?? 'application/json', 'Content-Length': Buffer.byteLength(body) });
    return new Promise<T>((resolve, reject) => {
      const req = transport.request(url, options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: Json = {};
          try {
            parsed = text ? (JSON.parse(text) as Json) : {};
          } catch {
            parsed = { message: text.slice(0, 200) };
          }
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) return resolve(parsed as T);
          reject(new KubeError(status, String(parsed.reason ?? 'Unknown'), String(parsed.message ?? `HTTP ${status}`)));
        });
      });
      req.on('timeout', () => req.destroy(new Error(`no answer from the API server within ${timeoutMs} ms`)));
      req.on('error', (err) => reject(err instanceof KubeError ? err : new KubeError(0, 'ConnectionError', err.message)));
      req.end(body);
    });
  }

  const wrote = (verb: Write['verb'], info: KindInfo, namespace: string | undefined, name: string) =>
    opts.onWrite?.({ verb, kind: info.kind, namespace: info.namespaced ? namespace : undefined, name });

  return {
    kubeConfig: kc,
    list: (info, o = {}) =>
      request('list', info, { namespace: o.namespace }, { method: 'GET', query: o.labelSelector ? { labelSelector: o.labelSelector } : {} }),
    async get(info, namespace, name) {
      try {
        return await request<KubeObject>('get', info, { namespace, name }, { method: 'GET' });
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    async create(info, obj) {
      const out = await request<KubeObject>('create', info, { namespace: obj.metadata.namespace }, { method: 'POST', body: obj });
      wrote('create', info, obj.metadata.namespace, obj.metadata.name);
      return out;
    },
    async replace(info, obj) {
      const out = await request<KubeObject>('update', info, { namespace: obj.metadata.namespace, name: obj.metadata.name }, { method: 'PUT', body: obj });
      wrote('update', info, obj.metadata.namespace, obj.metadata.name);
      return out;
    },
    async apply(info, obj, fieldManager) {
      const out = await request<KubeObject>('patch', info, { namespace: obj.metadata.namespace, name: obj.metadata.name }, {
        method: 'PATCH',
        // The operator owns what it renders: it takes fields back from hand edits.
        query: { fieldManager, force: 'true' },
        body: obj,
        contentType: 'application/apply-patch+yaml',
      });
      wrote('apply', info, obj.metadata.namespace, obj.metadata.name);
      return out;
    },
    async mergePatch(info, namespace, name, patch, subresource) {
      const out = await request<KubeObject>('patch', info, { namespace, name }, {
        method: 'PATCH',
        body: patch,
        contentType: 'application/merge-patch+json',
        subresource,
      });
      wrote(subresource ? 'status' : 'patch', info, namespace, name);
      return out;
    },
    async delete(info, namespace, name, o = {}) {
      try {
        await request('delete', info, { namespace, name }, {
          method: 'DELETE',
          body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background', ...(o.uid ? { preconditions: { uid: o.uid } } : {}) },
        });
        wrote('delete', info, namespace, name);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    },
  };
}
