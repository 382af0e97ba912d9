// `node dist/check/main.js --url <API origin> [--variant v1|legacy]`: is a tenant's API serving?
// The chart's `helm test` Pod runs it (docs/deploy.md); prints one line per step, exits 1 if one failed.
import { parseArgs } from 'node:util';
import { intOption } from '../core/cli';
import { API_VARIANTS, type ApiVariant } from '../core/config/settings';
import { checkTenant } from './tenant-check';

const USAGE = `usage: node dist/check/main.js --url <API origin> [--variant ${API_VARIANTS.join('|')}] [--timeout-ms 5000]
  checks a tenant's API through its front: GET /ready, one public read (GET /api/v1/markets),
  one /ws subscription answered by "subscribed" and nothing more. Exit 0: every step passed;
  1: one failed (each step is printed); 2: usage.
  In a cluster: --url http://market-indexer-api.mi-<tenant>.svc:80 (what helm test runs).`;

function usage(message?: string): never {
  if (message) process.stderr.write(`${message}\n`);
  process.stderr.write(`${USAGE}\n`);
  process.exit(2);
}

let values: { url?: string; variant?: string; 'timeout-ms'?: string; help?: boolean };
try {
  ({ values } = parseArgs({
    options: { url: { type: 'string' }, variant: { type: 'string', default: 'v1' }, 'timeout-ms': { type: 'string' }, help: { type: 'boolean' } },
    strict: true,
  }));
} catch (err) {
  usage((err as Error).message);
}
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
if (!values.url || !/^https?:\/\/[^/]/.test(values.url)) usage(`--url must be an http(s) origin (got ${values.url ?? 'nothing'})`);
if (!(API_VARIANTS as readonly string[]).includes(values.variant!)) usage(`--variant must be one of ${API_VARIANTS.join(', ')} (got ${values.variant})`);
const timeoutMs = intOption('timeout-ms', values['timeout-ms'], 1) ?? 5_000;

void checkTenant({ baseUrl: values.url, variant: values.variant as ApiVariant, timeoutMs }).then((result) => {
  for (const s of result.steps) process.stdout.write(`${s.ok ? 'ok  ' : 'FAIL'}  ${s.name.padEnd(5)}  ${s.detail}\n`);
  process.stdout.write(result.ok ? `tenant API at ${values.url} (${values.variant}): every check passed\n` : `tenant API at ${values.url} (${values.variant}): failed\n`);
  process.exit(result.ok ? 0 : 1);
});
