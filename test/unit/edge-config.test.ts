import { durationSeconds, edgeOf, EdgeConfigError, nginxConf } from '../../local/tenant/edge-config';
import { ROUTE } from '../support/edge-route';

const PATHS = { prefix: '/tmp/edge', unavailableSocket: '/tmp/edge/503.sock', statusSocket: '/tmp/edge/status.sock' };

describe('the edge from an HTTPRoute, as NGINX Gateway Fabric builds nginx.conf', () => {
  const edge = edgeOf([ROUTE], { idleTimeoutSeconds: 45 });

  it('has a server per hostname, a location per path match, an upstream per Service port', () => {
    expect(edge.servers.map((s) => [s.hostname, s.locations.map((l) => l.path)])).toEqual([['alpha.example', ['/api/', '= /api', '= /ready', '= /ws']]]);
    expect(edge.backends).toEqual({ 'mi-alpha_market-indexer-api_80': { service: 'market-indexer-api', port: 80 } });
  });

  it('turns timeouts into nginx timeouts: backendRequest per try, request over all tries; a rule without them gets the idle timeout', () => {
    const [api, , , ws] = edge.servers[0]!.locations;
    expect(api!.timeouts).toEqual({ connectSeconds: 5, readSeconds: 5, sendSeconds: 5, nextUpstreamSeconds: 10, tries: 2 });
    expect(ws!.timeouts).toEqual({ connectSeconds: 60, readSeconds: 45, sendSeconds: 45, nextUpstreamSeconds: 0, tries: 0 });
    expect(api!.headers).toEqual([{ name: 'CF-IPCountry', value: '' }]);
  });

  it('writes the 404 default server, the Upgrade map, the removed header and the 503 server for an upstream without endpoints', () => {
    const conf = nginxConf(edge, { listen: '127.0.0.1:8080', upstreams: {}, paths: PATHS, aliases: ['127.0.0.1'], generation: 1, runAsRoot: false });
    expect(conf).toContain('server { listen 127.0.0.1:8080 default_server; default_type text/html; return 404; }');
    expect(conf).toContain('server_name alpha.example 127.0.0.1;');
    expect(conf).toContain("map $http_upgrade $connection_upgrade { default upgrade; '' close; }");
    expect(conf).toContain('proxy_set_header CF-IPCountry "";');
    expect(conf).toContain('proxy_next_upstream_timeout 10s;');
    expect(conf).toMatch(/upstream mi-alpha_market-indexer-api_80 \{[^}]*server unix:\/tmp\/edge\/503\.sock;/);
    const ready = nginxConf(edge, { listen: '127.0.0.1:8080', upstreams: { 'mi-alpha_market-indexer-api_80': ['127.9.9.10:8080'] }, paths: PATHS, aliases: [], generation: 2, runAsRoot: false });
    expect(ready).toContain('server 127.9.9.10:8080;');
    expect(ready).not.toContain('503.sock;\n  }');
  });

  it('reads durations as Gateway API writes them and refuses what it cannot do, by name', () => {
    expect([durationSeconds('1h', 'x'), durationSeconds('1m30s', 'x'), durationSeconds('500ms', 'x'), durationSeconds('0s', 'x')]).toEqual([3600, 90, 0.5, 0]);
    expect(() => durationSeconds('5', 'rule')).toThrow('rule: "5" is not a Gateway API duration');
    const bad = structuredClone(ROUTE);
    bad.spec.rules![0]!.timeouts = { request: '1s', backendRequest: '5s' };
    expect(() => edgeOf([bad], { idleTimeoutSeconds: 45 })).toThrow(EdgeConfigError);
    bad.spec.rules![0]!.timeouts = undefined;
    bad.spec.rules![0]!.matches = [{ method: 'GET' }];
    expect(() => edgeOf([bad], { idleTimeoutSeconds: 45 })).toThrow('HTTPRoute market-indexer-api spec.rules[0].matches[0]: header, query and method matches are not supported');
  });

  it('reads an Ingress as ingress-nginx does when there is no HTTPRoute (an earlier release)', () => {
    const ingress = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'api', namespace: 'mi-alpha', annotations: { 'nginx.ingress.kubernetes.io/proxy-read-timeout': '3600' } },
      spec: { rules: [{ host: 'alpha.example', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'market-indexer-api', port: { name: 'http' } } } }] } }] },
    };
    const e = edgeOf([ingress], { idleTimeoutSeconds: 45 });
    expect(e.servers[0]!.locations).toEqual([{ path: '/', upstream: 'mi-alpha_market-indexer-api_http', headers: [], timeouts: { connectSeconds: 5, readSeconds: 3600, sendSeconds: 60, nextUpstreamSeconds: 0, tries: 3 } }]);
  });
});
