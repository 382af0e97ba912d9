import { notRunExitCode, readCommandLine, usageErrorCode, type CliOutput } from '../core/cli';
import { ApiKeyError, type ApiKeyStore } from '../core/api-keys';
import { tenantIdProblem } from '../core/config/settings';
import { API_PLANS, PLAN_NAMES } from '../core/plans';

export const KEYS_USAGE = `usage: npm run keys -- <command> --tenant <tenant> [options]   (DATABASE_URL: the tenant's database)
  create --tenant T --plan ${PLAN_NAMES.join('|')} [--label TEXT]   prints the new key once; it is stored hashed
  revoke --tenant T --id KEY_ID                       the key is refused (401) from then on
  list   --tenant T                                   key ids, plans, labels, dates; never the keys
plans: ${API_PLANS.map((p) => `${p.name} ${p.requestsPerMinute}/min, ${p.wsConnections} WebSocket connections`).join('; ')}`;

type KeysCommand = { kind: 'run'; command: 'create' | 'revoke' | 'list'; tenant: string; values: { plan?: string; label?: string; id?: string } };

/**
 * The command line, checked whole before the database is touched: the command, --tenant, and
 * what the command needs (--plan, --id); otherwise the help or a usage error (exit 2).
 */
export function parseKeysCommand(argv: string[]): KeysCommand | { kind: 'help' | 'usage-error'; text: string } {
  const line = readCommandLine(
    {
      args: argv,
      options: { tenant: { type: 'string' }, plan: { type: 'string' }, label: { type: 'string' }, id: { type: 'string' }, help: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    },
    KEYS_USAGE,
    { commands: ['create', 'revoke', 'list'] },
  );
  if (line.kind !== 'run') return line;
  const { values, positionals } = line.parsed;
  const fail = (l: string) => ({ kind: 'usage-error' as const, text: `${l}\n${KEYS_USAGE}\n` });
  if (positionals.length > 1) return fail(`unexpected argument ${positionals[1]}`);
  const command = line.command as KeysCommand['command'];
  const tenant = values.tenant;
  if (!tenant) return fail('--tenant is required');
  const problem = tenantIdProblem(tenant);
  if (problem) return fail(`--tenant ${problem}`);
  if (command === 'create' && !values.plan) return fail('--plan is required');
  if (command === 'revoke' && !values.id) return fail('--id is required (the key id `list` shows)');
  return { kind: 'run', command, tenant, values };
}

/**
 * `npm run keys` (D-153): the operator's command for a tenant's API keys. Returns the exit
 * code; writes the key to `out` once, on create, and nowhere else (no logger is involved).
 */
export async function runKeysCli(argv: string[], deps: CliOutput & { store: () => ApiKeyStore }): Promise<number> {
  const parsed = parseKeysCommand(argv);
  if (parsed.kind !== 'run') return notRunExitCode(parsed, deps);
  const { command, tenant, values } = parsed;
  const fail = (line: string) => usageErrorCode(line, KEYS_USAGE, deps);
  const store = deps.store();
  try {
    if (command === 'create') {
      const { key, info } = await store.create({ tenant, plan: values.plan!, label: values.label });
      deps.out(`created key ${info.keyId} on plan ${info.plan} for tenant ${tenant}${info.label ? ` (${info.label})` : ''}\n`);
      deps.out(`${key}\n`);
      deps.out('this is the only time the key is shown: it is stored hashed\n');
      return 0;
    }
    if (command === 'revoke') {
      if (await store.revoke({ tenant, keyId: values.id! })) {
        deps.out(`revoked key ${values.id} of tenant ${tenant}\n`);
        return 0;
      }
      deps.err(`tenant ${tenant} has no active key ${values.id}\n`);
      return 1;
    }
    const keys = await store.list(tenant);
    if (!keys.length) deps.out(`tenant ${tenant} has no keys\n`);
    for (const k of keys) {
      deps.out(`${k.keyId}  ${k.plan.padEnd(5)}  created ${k.createdAt.toISOString()}  ${k.revokedAt ? `revoked ${k.revokedAt.toISOString()}` : 'active'}${k.label ? `  ${k.label}` : ''}\n`);
    }
    return 0;
  } catch (e) {
    if (e instanceof ApiKeyError) return fail(e.message);
    throw e;
  }
}
