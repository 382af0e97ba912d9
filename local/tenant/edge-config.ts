import type { K8sObject } from './manifests';

/**
 * The tenant's edge as nginx configuration, built from its rendered route the way NGINX Gateway
 * Fabric builds nginx.conf from an HTTPRoute (internal/controller/nginx/config/ in its
 * repository): a `server` per hostname and a `default_server` answering 404 to any other Host,
 * a `location` per path match (a PathPrefix `/x` is `location /x/` and `location = /x`), an
 * `upstream` per backend Service port holding its ready endpoints (the 503 server when there are
 * none), `proxy_http_version 1.1` with the Upgrade/Connection map, and RequestHeaderModifier as
 * `proxy_set_header` (a removed header is set to "", which nginx does not send).
 *
 * One thing NGINX Gateway Fabric does not do: it refuses a rule's `timeouts` (Extended support
 * in Gateway API, GEP-1742). Here they are nginx timeouts: `backendRequest` bounds one try
 * (`proxy_connect_timeout`, `proxy_send_timeout`, `proxy_read_timeout`), `request` the whole
 * exchange (`proxy_next_upstream_timeout`, and no more tries than fit in it), so an idempotent
 * request whose endpoint is silent goes to the next one after `backendRequest`. A rule without
 * timeouts gets the Gateway's idle timeout for reads (the platform's proxy settings policy).
 *
 * An earlier release's Ingress is read the way ingress-nginx reads it (its host rules and paths,
 * its `proxy-*-timeout` and `proxy-next-upstream-tries` annotations), so a rollout from such a
 * release runs through the same nginx.
 */

/** gateway.networking.k8s.io/v1 HTTPRoute, the parts of the standard channel the edge reads. */
export interface HTTPRoute extends K8sObject {
  spec: {
    parentRefs?: { name: string; namespace?: string; sectionName?: string }[];
    hostnames?: string[];
    rules?: HTTPRouteRule[];
  };
}
export interface HTTPRouteRule {
  name?: string;
  matches?: { path?: { type?: 'Exact' | 'PathPrefix' | 'RegularExpression'; value?: string }; headers?: unknown[]; queryParams?: unknown[]; method?: string }[];
  filters?: { type: string; requestHeaderModifier?: HeaderModifier }[];
  backendRefs?: { group?: string; kind?: string; name: string; port?: number; weight?: number }[];
  timeouts?: { request?: string; backendRequest?: string };
}
interface HeaderModifier {
  set?: { name: string; value: string }[];
  add?: { name: string; value: string }[];
  remove?: string[];
}
/** networking.k8s.io/v1 Ingress, the parts ingress-nginx reads for the edge. */
interface Ingress extends K8sObject {
  spec: { rules?: { host?: string; http?: { paths: { path?: string; pathType?: string; backend: { service?: { name: string; port: { number?: number; name?: string } } } }[] } }[] };
}

/** A Service port the edge sends to: the upstream's name and what it is made of. */
export interface Backend {
  service: string;
  /** The Service's port, by number (HTTPRoute) or by name (Ingress). */
  port: number | string;
}

export interface ProxyTimeouts {
  connectSeconds: number;
  readSeconds: number;
  sendSeconds: number;
  /** `proxy_next_upstream_timeout` (0: none). */
  nextUpstreamSeconds: number;
  /** `proxy_next_upstream_tries` (0: every server). */
  tries: number;
}

export interface EdgeLocation {
  /** nginx's `location` argument (`/x/`, `= /x`). */
  path: string;
  upstream: string;
  headers: { name: string; value: string }[];
  timeouts: ProxyTimeouts;
}

export interface EdgeServer {
  hostname: string;
  locations: EdgeLocation[];
}

export interface Edge {
  servers: EdgeServer[];
  backends: Record<string, Backend>;
}

export class EdgeConfigError extends Error {
  override name = 'EdgeConfigError';
}

/**
 * The Gateway's idle timeout for a rule without timeouts (the /ws one), which the platform sets
 * (NGINX Gateway Fabric's ProxySettingsPolicy, Envoy Gateway's ClientTrafficPolicy): half as long
 * again as the API's ping interval, so an upstream silent for longer than a ping is dead (D-492).
 */
export const gatewayIdleTimeoutSeconds = (pingIntervalMs: number) => Math.ceil((pingIntervalMs * 1.5) / 1000);

/** nginx's own defaults (ngx_http_proxy_module): what a route that says nothing gets. */
const NGINX_CONNECT_SECONDS = 60;
const NGINX_CONNECT_MAX_SECONDS = 75;

/** A Gateway API duration (GEP-2257: `1h`, `5m`, `10s`, `500ms`, combined) in seconds. */
export function durationSeconds(value: string, where: string): number {
  const re = /(\d+)(h|ms|m|s)/gy;
  let total = 0;
  let matched = 0;
  for (let m = re.exec(value); m; m = re.exec(value)) {
    total += Number(m[1]) * { h: 3600, m: 60, s: 1, ms: 0.001 }[m[2] as 'h' | 'm' | 's' | 'ms'];
    matched = re.lastIndex;
  }
  if (!value || matched !== value.length) throw new EdgeConfigError(`${where}: "${value}" is not a Gateway API duration (like 10s, 500ms, 1m)`);
  return total;
}

/** nginx takes whole seconds or milliseconds. */
const nginxTime = (seconds: number) => (Number.isInteger(seconds) ? `${seconds}s` : `${Math.round(seconds * 1000)}ms`);

function ruleTimeouts(rule: HTTPRouteRule, where: string, idleSeconds: number): ProxyTimeouts {
  const request = rule.timeouts?.request === undefined ? undefined : durationSeconds(rule.timeouts.request, `${where}.timeouts.request`);
  const backend = rule.timeouts?.backendRequest === undefined ? undefined : durationSeconds(rule.timeouts.backendRequest, `${where}.timeouts.backendRequest`);
  // 0s disables a timeout (GEP-1742); a try then waits as long as the whole request may.
  const perTry = backend || request || 0;
  if (request && backend && backend > request) throw new EdgeConfigError(`${where}.timeouts: backendRequest (${rule.timeouts!.backendRequest}) is longer than request (${rule.timeouts!.request})`);
  if (!perTry) return { connectSeconds: NGINX_CONNECT_SECONDS, readSeconds: idleSeconds, sendSeconds: idleSeconds, nextUpstreamSeconds: 0, tries: 0 };
  return {
    connectSeconds: Math.min(perTry, NGINX_CONNECT_MAX_SECONDS),
    readSeconds: perTry,
    sendSeconds: perTry,
    nextUpstreamSeconds: request ?? 0,
    // As many tries as fit in the request's time: the last one cannot outlast it.
    tries: request ? Math.max(1, Math.floor(request / perTry)) : 0,
  };
}

const upstreamName = (namespace: string, b: Backend) => `${namespace}_${b.service}_${b.port}`.replace(/[^A-Za-z0-9_-]/g, '_');

/** `location` arguments for a path match, as NGINX Gateway Fabric writes them. */
function locationPaths(type: string, value: string, where: string): string[] {
  switch (type) {
    case 'Exact':
      return [`= ${value}`];
    case 'PathPrefix':
      return value === '/' || value.endsWith('/') ? [value] : [`${value}/`, `= ${value}`];
    default:
      throw new EdgeConfigError(`${where}: path match type ${type} is not supported by the harness's edge (Exact and PathPrefix are)`);
  }
}

function addLocation(servers: Map<string, EdgeServer>, hostname: string, loc: EdgeLocation) {
  const s = servers.get(hostname) ?? { hostname, locations: [] };
  servers.set(hostname, s);
  // The first route to claim a path keeps it (nginx refuses a duplicate location).
  if (!s.locations.some((l) => l.path === loc.path)) s.locations.push(loc);
}

/** The edge the tenant's HTTPRoutes (or, without any, its Ingresses) describe. */
export function edgeOf(objects: K8sObject[], opts: { idleTimeoutSeconds: number }): Edge {
  const servers = new Map<string, EdgeServer>();
  const backends: Record<string, Backend> = {};
  const routes = objects.filter((o): o is HTTPRoute => o.kind === 'HTTPRoute');
  for (const route of routes) {
    const namespace = route.metadata.namespace ?? 'default';
    const hostnames = route.spec.hostnames?.length ? route.spec.hostnames : ['_'];
    (route.spec.rules ?? [{}]).forEach((rule, i) => {
      const where = `HTTPRoute ${route.metadata.name} spec.rules[${i}]`;
      const refs = rule.backendRefs ?? [];
      if (refs.length !== 1 || (refs[0]!.kind ?? 'Service') !== 'Service' || refs[0]!.port === undefined) throw new EdgeConfigError(`${where}: the harness's edge sends a rule to exactly one Service port (backendRefs has ${refs.length})`);
      const backend = { service: refs[0]!.name, port: refs[0]!.port! };
      const upstream = upstreamName(namespace, backend);
      backends[upstream] = backend;
      const headers: EdgeLocation['headers'] = [];
      for (const f of rule.filters ?? []) {
        if (f.type !== 'RequestHeaderModifier') throw new EdgeConfigError(`${where}: filter ${f.type} is not supported by the harness's edge (RequestHeaderModifier is)`);
        const m = f.requestHeaderModifier ?? {};
        // add appends to what the client sent; set replaces it; remove sends nothing.
        for (const h of m.add ?? []) headers.push({ name: h.name, value: `$http_${h.name.toLowerCase().replace(/-/g, '_')},${h.value}` });
        for (const h of m.set ?? []) headers.push(h);
        for (const name of m.remove ?? []) headers.push({ name, value: '' });
      }
      const timeouts = ruleTimeouts(rule, where, opts.idleTimeoutSeconds);
      for (const [j, match] of (rule.matches?.length ? rule.matches : [{}]).entries()) {
        if (match.headers?.length || match.queryParams?.length || match.method) throw new EdgeConfigError(`${where}.matches[${j}]: header, query and method matches are not supported by the harness's edge (path matches are)`);
        for (const path of locationPaths(match.path?.type ?? 'PathPrefix', match.path?.value ?? '/', `${where}.matches[${j}]`)) {
          for (const h of hostnames) addLocation(servers, h, { path, upstream, headers, timeouts });
        }
      }
    });
  }
  if (!routes.length) {
    for (const ing of objects.filter((o): o is Ingress => o.kind === 'Ingress')) {
      const namespace = ing.metadata.namespace ?? 'default';
      const a = ing.metadata.annotations ?? {};
      const seconds = (name: string, fallback: number) => Number(a[`nginx.ingress.kubernetes.io/${name}`] ?? fallback);
      // ingress-nginx's defaults: connect 5 s, read and send 60 s, 3 tries, no overall limit.
      const timeouts: ProxyTimeouts = {
        connectSeconds: seconds('proxy-connect-timeout', 5),
        readSeconds: seconds('proxy-read-timeout', 60),
        sendSeconds: seconds('proxy-send-timeout', 60),
        nextUpstreamSeconds: seconds('proxy-next-upstream-timeout', 0),
        tries: seconds('proxy-next-upstream-tries', 3),
      };
      for (const rule of ing.spec.rules ?? []) {
        for (const p of rule.http?.paths ?? []) {
          const svc = p.backend.service;
          if (!svc) throw new EdgeConfigError(`Ingress ${ing.metadata.name}: a path without a Service backend`);
          const backend = { service: svc.name, port: svc.port.number ?? svc.port.name! };
          const upstream = upstreamName(namespace, backend);
          backends[upstream] = backend;
          const type = p.pathType === 'Exact' ? 'Exact' : 'PathPrefix';
          for (const path of locationPaths(type, p.path ?? '/', `Ingress ${ing.metadata.name}`)) addLocation(servers, rule.host ?? '_', { path, upstream, headers: [], timeouts });
        }
      }
    }
  }
  return { servers: [...servers.values()], backends };
}

export interface NginxPaths {
  /** The prefix (`nginx -p`): logs, temp files, sockets and the pid file live under it. */
  prefix: string;
  /** The 503 server's and the status server's unix sockets. */
  unavailableSocket: string;
  statusSocket: string;
}

const quote = (v: string) => `"${v.replace(/["\\]/g, '\\$&')}"`;

/**
 * nginx.conf for the edge: `listen` the edge's address, `upstreams` each backend's ready
 * endpoints (`host:port`), `aliases` more names for the tenant's servers (the address clients
 * reach it by, D-491), `generation` what the status socket answers (a reload applied).
 */
export function nginxConf(edge: Edge, opts: { listen: string; upstreams: Record<string, string[]>; paths: NginxPaths; aliases: string[]; generation: number; runAsRoot: boolean }): string {
  const p = opts.paths;
  const lines: string[] = [
    '# Rendered by local/tenant/edge-config.ts from the tenant\'s route.',
    // As root, the workers would otherwise be nobody, who cannot write the run folder's temp files.
    ...(opts.runAsRoot ? ['user root;'] : []),
    'daemon off;',
    'worker_processes 1;',
    `pid ${p.prefix}/nginx.pid;`,
    `error_log ${p.prefix}/error.log notice;`,
    'events { worker_connections 4096; }',
    'http {',
    `  client_body_temp_path ${p.prefix}/client_body;`,
    `  proxy_temp_path ${p.prefix}/proxy;`,
    `  fastcgi_temp_path ${p.prefix}/fastcgi;`,
    `  uwsgi_temp_path ${p.prefix}/uwsgi;`,
    `  scgi_temp_path ${p.prefix}/scgi;`,
    "  log_format edge '$msec $request_time \"$upstream_addr\" $status $request_method $uri';",
    `  access_log ${p.prefix}/access.log edge;`,
    '  server_tokens off;',
    '  map $http_host $gw_api_compliant_host { \'\' $host; default $http_host; }',
    '  map $http_upgrade $connection_upgrade { default upgrade; \'\' close; }',
  ];
  for (const name of Object.keys(edge.backends).sort()) {
    const servers = opts.upstreams[name]?.length ? opts.upstreams[name]! : [`unix:${p.unavailableSocket}`];
    lines.push(`  upstream ${name} {`, '    random two least_conn;', `    zone ${name} 512k;`, ...servers.map((s) => `    server ${s};`), '  }');
  }
  lines.push(`  server { listen ${opts.listen} default_server; default_type text/html; return 404; }`);
  for (const s of edge.servers) {
    const names = [s.hostname, ...(s.hostname === '_' ? [] : opts.aliases)];
    lines.push('  server {', `    listen ${opts.listen};`, `    server_name ${names.join(' ')};`);
    for (const l of s.locations) {
      const set = [...l.headers];
      const base = [
        ['Host', '$gw_api_compliant_host'],
        ['X-Forwarded-For', '$proxy_add_x_forwarded_for'],
        ['X-Real-IP', '$remote_addr'],
        ['X-Forwarded-Proto', '$scheme'],
        ['X-Forwarded-Host', '$host'],
        ['X-Forwarded-Port', '$server_port'],
        ['Upgrade', '$http_upgrade'],
        ['Connection', '$connection_upgrade'],
      ] as const;
      for (const [name, value] of base) if (!set.some((h) => h.name.toLowerCase() === name.toLowerCase())) set.push({ name, value });
      const t = l.timeouts;
      lines.push(
        `    location ${l.path} {`,
        '      proxy_http_version 1.1;',
        ...set.map((h) => `      proxy_set_header ${h.name} ${quote(h.value)};`),
        `      proxy_connect_timeout ${nginxTime(t.connectSeconds)};`,
        `      proxy_read_timeout ${nginxTime(t.readSeconds)};`,
        `      proxy_send_timeout ${nginxTime(t.sendSeconds)};`,
        '      proxy_next_upstream error timeout;',
        `      proxy_next_upstream_timeout ${nginxTime(t.nextUpstreamSeconds)};`,
        `      proxy_next_upstream_tries ${t.tries};`,
        `      proxy_pass http://${l.upstream}$request_uri;`,
        '    }',
      );
    }
    lines.push('  }');
  }
  lines.push(
    `  server { listen unix:${p.unavailableSocket}; access_log off; return 503; }`,
    `  server { listen unix:${p.statusSocket}; access_log off; location = /generation { return 200 "${opts.generation}"; } }`,
    '}',
    '',
  );
  return lines.join('\n');
}
