import { parseArgs } from 'node:util';
import { ApiKeyError, type ApiKeyStore } from '../core/api-keys';
import { TENANT_PATTERN } from '../core/config/settings';
import { API_PLANS, PLAN_NAMES } from '../core/plans';

export const KEYS_USAGE = `usage: npm run keys -- <command> --tenant <tenant> [options]   (DATABASE_URL: the tenant's database)
  create --tenant T --plan ${PLAN_NAMES.join('|')} [--label TEXT]   prints the new key once; it is stored hashed
  revoke --tenant T --id KEY_ID                       the key is refused (401) from then on
  list   --tenant T                                   key ids, plans, labels, dates; never the keys
plans: ${API_PLANS.map((p) => `${p.name} ${p.requestsPerMinute}/min, ${p.wsConnections} WebSocket connections`).join('; ')}`;

/**
 * `npm run keys` (D-153): the operator's command for a tenant's API keys. Returns the exit
 * code; writes the key to `out` once, on create, and nowhere else (no logger is involved).
 */
export async function runKeysCli(argv: string[], deps: { store: () => ApiKeyStore; out: (s: string) => void; err: (s: string) => void }): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { tenant: { type: 'string' }, plan: { type: 'string' }, label: { type: 'string' }, id: { type: 'string' }, help: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    deps.err(`${(e as Error).message}\n${KEYS_USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help) {
    deps.out(`${KEYS_USAGE}\n`);
    return 0;
  }
  const fail = (line: string) => {
    deps.err(`${line}\n${KEYS_USAGE}\n`);
    return 2;
  };
  if (!command || rest.length || !['create', 'revoke', 'list'].includes(command)) return fail(`expected one command: create, revoke or list`);
  const tenant = values.tenant;
  if (!tenant) return fail('--tenant is required');
  if (!TENANT_PATTERN.test(tenant)) return fail(`--tenant "${tenant}" is not a tenant id (lowercase DNS label of at most 40 characters)`);
  const store = deps.store();
  try {
    if (command === 'create') {
      if (!values.plan) return fail('--plan is required');
      const { key, info } = await store.create({ tenant, plan: values.plan, label: values.label });
      deps.out(`created key ${info.keyId} on plan ${info.plan} for tenant ${tenant}${info.label ? ` (${info.label})` : ''}\n`);
      deps.out(`${key}\n`);
      deps.out('this is the only time the key is shown: it is stored hashed\n');
      return 0;
    }
    if (command === 'revoke') {
      if (!values.id) return fail('--id is required (the key id `list` shows)');
      if (await store.revoke({ tenant, keyId: values.id })) {
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
