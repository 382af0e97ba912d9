import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { stringify } from 'yaml';
import { ofKind, type K8sObject } from './manifests';

/**
 * Prometheus and Alertmanager for the tenant, as the prometheus-operator would configure them
 * from its rendered ServiceMonitors and PrometheusRule: one scrape job per ServiceMonitor
 * endpoint, whose targets are the pods behind the Services it selects, labelled as the
 * operator's relabelling labels them (`job` the Service's name, `namespace`, `service`, `pod`,
 * `container`, `endpoint`, `instance` the pod's address); the rule groups as they are; alerts to
 * an Alertmanager that sends every notification (resolved ones too) to the harness's webhook.
 * The servers are Debian's `prometheus` and `prometheus-alertmanager`.
 */

export interface ScrapeTarget {
  /** The Service and its port name (as the ServiceMonitor's endpoint names it). */
  service: string;
  portName: string;
  pod: string;
  container: string;
  address: string;
}

interface ServiceMonitor extends K8sObject {
  spec: {
    selector: { matchLabels?: Record<string, string> };
    endpoints: { port?: string; path?: string; interval?: string; honorLabels?: boolean; scrapeTimeout?: string; relabelings?: Relabel[]; metricRelabelings?: Relabel[] }[];
    jobLabel?: string;
  };
}
interface Relabel {
  sourceLabels?: string[];
  separator?: string;
  targetLabel?: string;
  regex?: string;
  modulus?: number;
  replacement?: string;
  action?: string;
}

const snake = (r: Relabel) => ({
  ...(r.sourceLabels ? { source_labels: r.sourceLabels } : {}),
  ...(r.separator !== undefined ? { separator: r.separator } : {}),
  ...(r.targetLabel ? { target_label: r.targetLabel } : {}),
  ...(r.regex !== undefined ? { regex: r.regex } : {}),
  ...(r.modulus !== undefined ? { modulus: r.modulus } : {}),
  ...(r.replacement !== undefined ? { replacement: r.replacement } : {}),
  ...(r.action ? { action: r.action.toLowerCase() } : {}),
});

const matches = (labels: Record<string, string> | undefined, selector: Record<string, string> | undefined) =>
  Object.entries(selector ?? {}).every(([k, v]) => labels?.[k] === v);

/** prometheus.yml for the tenant's ServiceMonitors, its rules file and the Alertmanager. */
export function prometheusConfig(opts: {
  objects: K8sObject[];
  namespace: string;
  targets: ScrapeTarget[];
  rulesFile: string;
  alertmanager: string;
  evaluationInterval: string;
}): string {
  const services = ofKind(opts.objects, 'Service');
  const jobs = ofKind<ServiceMonitor>(opts.objects, 'ServiceMonitor').flatMap((sm) =>
    sm.spec.endpoints.map((ep, i) => {
      const selected = services.filter((s) => matches(s.metadata.labels, sm.spec.selector.matchLabels)).map((s) => s.metadata.name);
      const job = (svc: string) => (sm.spec.jobLabel ? (services.find((s) => s.metadata.name === svc)?.metadata.labels?.[sm.spec.jobLabel] ?? svc) : svc);
      return {
        job_name: `serviceMonitor/${opts.namespace}/${sm.metadata.name}/${i}`,
        honor_labels: ep.honorLabels ?? false,
        metrics_path: ep.path ?? '/metrics',
        ...(ep.interval ? { scrape_interval: ep.interval } : {}),
        ...(ep.scrapeTimeout ? { scrape_timeout: ep.scrapeTimeout } : {}),
        static_configs: opts.targets
          .filter((t) => selected.includes(t.service) && t.portName === ep.port)
          .map((t) => ({
            targets: [t.address],
            labels: { namespace: opts.namespace, service: t.service, job: job(t.service), pod: t.pod, container: t.container, endpoint: t.portName },
          })),
        ...(ep.relabelings?.length ? { relabel_configs: ep.relabelings.map(snake) } : {}),
        ...(ep.metricRelabelings?.length ? { metric_relabel_configs: ep.metricRelabelings.map(snake) } : {}),
      };
    }),
  );
  return stringify({
    global: { evaluation_interval: opts.evaluationInterval, scrape_interval: opts.evaluationInterval },
    rule_files: [opts.rulesFile],
    alerting: { alertmanagers: [{ static_configs: [{ targets: [opts.alertmanager] }] }] },
    scrape_configs: jobs,
  });
}

/** The rule groups of the tenant's PrometheusRule(s), as one rules file. */
export function rulesFile(objects: K8sObject[]): string {
  const groups = ofKind<K8sObject & { spec: { groups: unknown[] } }>(objects, 'PrometheusRule').flatMap((r) => r.spec.groups);
  return stringify({ groups });
}

/** Alertmanager routing every alert, grouped per alert and tenant, to one webhook, resolved ones included. */
export function alertmanagerConfig(webhook: string): string {
  return stringify({
    route: { receiver: 'harness', group_by: ['alertname', 'tenant', 'environment'], group_wait: '1s', group_interval: '1s', repeat_interval: '1h' },
    receivers: [{ name: 'harness', webhook_configs: [{ url: webhook, send_resolved: true }] }],
  });
}

export class MissingServerError extends Error {
  override name = 'MissingServerError';
}

/** The first of the names found on PATH (or an absolute path that exists); `packages` are what installs them. */
export function findBinary(names: string[], packages = 'prometheus prometheus-alertmanager'): string {
  for (const n of names) {
    const r = spawnSync('sh', ['-c', `command -v ${n}`], { encoding: 'utf8' });
    if (r.status === 0 && r.stdout.trim()) return r.stdout.trim();
  }
  throw new MissingServerError(`${names.join(' or ')} is not installed: apt-get install ${packages} (npm test installs it)`);
}

async function waitReady(url: string, child: ChildProcess, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited with code ${child.exitCode} (its log is in the run folder)`);
    const ok = await new Promise<boolean>((resolve) => {
      http.get(url, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      }).on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${what} did not become ready at ${url}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export interface Server {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

function startServer(what: string, bin: string, args: string[], logFile: string, host: string, port: number): Server {
  const log = openSync(logFile, 'a');
  // Its own process group, like every process the harness starts: a terminal's Ctrl-C reaches
  // the harness alone, which stops them in order.
  const child = spawn(bin, args, { stdio: ['ignore', log, log], detached: true });
  closeSync(log);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    url: `http://${host}:${port}`,
    child,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

export async function startPrometheus(opts: { dir: string; config: string; rules: string; host: string; port: number }): Promise<Server> {
  mkdirSync(path.join(opts.dir, 'data'), { recursive: true });
  writeFileSync(path.join(opts.dir, 'rules.yaml'), opts.rules);
  writeFileSync(path.join(opts.dir, 'prometheus.yml'), opts.config);
  const bin = findBinary(['prometheus']);
  const s = startServer('prometheus', bin, [
    `--config.file=${path.join(opts.dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${path.join(opts.dir, 'data')}`,
    `--web.listen-address=${opts.host}:${opts.port}`,
    '--web.enable-lifecycle',
  ], path.join(opts.dir, 'prometheus.log'), opts.host, opts.port);
  await waitReady(`${s.url}/-/ready`, s.child, 'prometheus');
  return s;
}

export async function startAlertmanager(opts: { dir: string; config: string; host: string; port: number }): Promise<Server> {
  mkdirSync(path.join(opts.dir, 'data'), { recursive: true });
  writeFileSync(path.join(opts.dir, 'alertmanager.yml'), opts.config);
  const bin = findBinary(['prometheus-alertmanager', 'alertmanager']);
  const s = startServer('alertmanager', bin, [
    `--config.file=${path.join(opts.dir, 'alertmanager.yml')}`,
    `--storage.path=${path.join(opts.dir, 'data')}`,
    `--web.listen-address=${opts.host}:${opts.port}`,
    // One Alertmanager: no gossip port to bind.
    '--cluster.listen-address=',
  ], path.join(opts.dir, 'alertmanager.log'), opts.host, opts.port);
  await waitReady(`${s.url}/-/ready`, s.child, 'alertmanager');
  return s;
}
