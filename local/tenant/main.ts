// `npm run tenant -- up --env staging --tenant alpha`: one tenant run from what the kit renders,
// on this machine. A test and demo harness, not a runtime (docs/local-tenant.md).
import { readFileSync } from 'node:fs';
import { parseArgsOrExit, usageExit } from '../../core/cli';
import { parse as parseYaml } from 'yaml';
import { checkTenant } from '../../check/tenant-check';
import { KitInputError } from '../../cdk8s/lib/resolve';
import { TenantNotFoundError } from './manifests';
import { MissingServerError } from './monitoring';
import { startTenant } from './runner';

const USAGE = `usage: npm run tenant -- up --env <dev|staging|prod> --tenant <name> [options]
  Runs one tenant as the kit deploys it, on this machine: every container of the project's image
  that the rendered manifests hold becomes a local process (the image's command, the container's
  args, its environment resolved from ConfigMaps and Secrets as the kubelet resolves it), with its
  probes polled as declared; Services and the Ingress become local fronts; the stores are the local
  PostgreSQL (a database for the tenant) and Redis; the chain is the simulated chain behind a Solana
  JSON-RPC; Prometheus and Alertmanager run from the tenant's ServiceMonitors and PrometheusRule.
  It is a test and demo harness, not a runtime: no scheduling, no NetworkPolicy enforcement, no
  image pulls, no resource limits (docs/local-tenant.md).
options:
  --values FILE         an environment file's shape (YAML) merged over the environment
  --manifests DIR       run DIR/<tenant>.yaml (npm run synth -- --out DIR) instead of rendering
  --secrets FILE        Secrets as { name: { key: value } } (default: written from the local stores)
  --fresh               a new database and chain
  --port N              the front's port (default 8080)
  --prometheus-port N   (default 9090)   --alertmanager-port N (default 9093)   --chain-port N (default 8899)
  --help`;

function fail(line: string, code = 1): never {
  process.stderr.write(`${line}\n`);
  process.exit(code);
}

function parse() {
  return parseArgsOrExit({
    allowPositionals: true,
    options: {
      env: { type: 'string' },
      tenant: { type: 'string' },
      values: { type: 'string' },
      manifests: { type: 'string' },
      secrets: { type: 'string' },
      fresh: { type: 'boolean', default: false },
      port: { type: 'string', default: '8080' },
      'prometheus-port': { type: 'string', default: '9090' },
      'alertmanager-port': { type: 'string', default: '9093' },
      'chain-port': { type: 'string', default: '8899' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  }, USAGE, { commands: ['up'] });
}

async function main(): Promise<void> {
  const parsed = parse();
  const o = parsed.values;
  if (parsed.positionals.length > 1) usageExit(`unexpected argument ${parsed.positionals[1]}`, USAGE);
  if (!o.env) usageExit('up needs --env', USAGE);
  if (!o.tenant) usageExit('up needs --tenant', USAGE);
  const num = (name: string, v: string | undefined) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0 || n > 65535) fail(`--${name} must be a port (got ${v})`, 2);
    return n;
  };
  let overlay: unknown;
  if (o.values) {
    try {
      overlay = parseYaml(readFileSync(o.values, 'utf8'));
    } catch (err) {
      fail(`--values ${o.values}: ${(err as Error).message}`);
    }
  }
  process.stdout.write(`starting tenant ${o.tenant} of ${o.env} (logs in .data/tenant/${o.env}-${o.tenant}/logs)…\n`);
  const t = await startTenant({
    env: o.env,
    tenant: o.tenant,
    overlay,
    manifestsDir: o.manifests,
    secretsFile: o.secrets,
    fresh: o.fresh,
    frontPort: num('port', o.port),
    prometheusPort: num('prometheus-port', o['prometheus-port']),
    alertmanagerPort: num('alertmanager-port', o['alertmanager-port']),
    chainPort: num('chain-port', o['chain-port']),
    log: (line) => process.stdout.write(`  ${line}\n`),
  });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    process.stdout.write('stopping…\n');
    void t.stop().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await t.allReady();
  // What the chart's `helm test` Pod checks, through the same front a client uses.
  const settings = (t.rendered.objects.find((x) => x.kind === 'ConfigMap' && x.metadata.name.endsWith('-api')) as { data?: Record<string, string> } | undefined)?.data ?? {};
  const check = await checkTenant({ baseUrl: t.frontUrl, variant: settings.API_VARIANT === 'legacy' ? 'legacy' : 'v1', timeoutMs: 10_000 });
  // Signed messages name one of the tenant's PUBLIC_HOSTS (its ingress host), not the front's address.
  const domain = settings.PUBLIC_HOSTS ? ` --domain ${settings.PUBLIC_HOSTS.split(',')[0]}` : '';
  process.stdout.write(
    [
      '',
      `tenant ${t.tenant} (${t.environment}) is up, pods: ${t.pods.map((p) => p.name).join(', ')}`,
      '',
      `  API (the edge)      ${t.frontUrl}/api/v1   (WebSocket ${t.frontUrl.replace('http', 'ws')}/ws)`,
      `  Chain RPC           ${t.rpcUrl}`,
      `  Try a trade         npm run wallet -- trade --api ${t.frontUrl} --rpc ${t.rpcUrl}${domain}`,
      `  Prometheus          ${t.prometheusUrl}/alerts`,
      `  Alertmanager        ${t.alertmanagerUrl}`,
      `  helm test's check   ${check.steps.map((s) => `${s.name} ${s.ok ? 'ok' : `FAILED (${s.detail})`}`).join(', ')}`,
      '',
      'Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
}

main().catch((err: unknown) => {
  if (err instanceof KitInputError || err instanceof TenantNotFoundError || err instanceof MissingServerError) fail(err.message);
  fail(err instanceof Error ? (err.stack ?? err.message) : String(err));
});
