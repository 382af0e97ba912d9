// `npm run redis-acl -- --tenant <t> [--tenant <t>…]`: the Redis user each tenant's processes
// connect as (D-193, D-231), for a Redis the kit does not run (staging, prod): the ACL lines on
// stdout, to pipe into `redis-cli` as an admin of that Redis; the passwords and the REDIS_URL
// each tenant's Secret must hold on stderr.
import { notRunExitCode, readCommandLine, usageErrorCode, type CliOutput } from '../core/cli';
import { tenantAclUser } from '../core/redis/acl';
import { tenantIdProblem } from '../core/config/settings';
import { newAclPassword, sha256Hex, tenantAclCommand, tenantAclFileLine } from '../cdk8s/lib/redis-users';

export const REDIS_ACL_USAGE = `usage: npm run -s redis-acl -- --tenant <tenant> [--tenant <tenant>…] [--cluster] [--acl-file] [--password <password>]
  prints on stdout, per tenant, its Redis user mi-<tenant> with the rules of tenantAclRules (core/redis/acl.ts),
  the password only as its SHA-256:  ACL SETUSER mi-<tenant> reset on ~t:<tenant>:* … #<sha256>
  (--acl-file: as a line of an ACL file, user mi-<tenant> …), and on stderr the password and the
  REDIS_URL the tenant's Secret must hold. A new random password each run, unless --password
  (one tenant) gives the one its Secret already holds; ACL SETUSER with reset replaces the old one.
  --cluster: for a Redis Cluster, adds what its client needs to find the slots (CLUSTER SLOTS and
  INFO); ACLs are per node, so run the lines on every node.`;

/** The command; returns the exit code. */
export function runRedisAclCli(argv: string[], deps: CliOutput & { newPassword?: () => string }): number {
  const cli = readCommandLine(
    {
      args: argv,
      options: { tenant: { type: 'string', multiple: true }, cluster: { type: 'boolean' }, 'acl-file': { type: 'boolean' }, password: { type: 'string' }, help: { type: 'boolean' } },
      strict: true,
    },
    REDIS_ACL_USAGE,
  );
  if (cli.kind !== 'run') return notRunExitCode(cli, deps);
  const { values } = cli.parsed;
  const fail = (line: string) => usageErrorCode(line, REDIS_ACL_USAGE, deps);
  const tenants = values.tenant ?? [];
  if (!tenants.length) return fail('--tenant is required');
  const problem = tenants.map(tenantIdProblem).find((p) => p !== undefined);
  if (problem) return fail(`--tenant ${problem}`);
  if (values.password !== undefined && tenants.length > 1) return fail('--password gives one tenant\'s password: name one --tenant');
  // In an ACL rule and a URL without escaping: a password the kit makes is hex.
  if (values.password !== undefined && !/^[A-Za-z0-9._~-]{16,}$/.test(values.password)) {
    return fail('--password must be 16 or more letters, digits or ._~- (so that it needs no escaping in REDIS_URL)');
  }
  const line = values['acl-file'] ? tenantAclFileLine : tenantAclCommand;
  for (const tenant of [...new Set(tenants)]) {
    const password = values.password ?? (deps.newPassword ?? newAclPassword)();
    deps.out(`${line(tenant, { sha256: sha256Hex(password) }, { cluster: values.cluster })}\n`);
    const url = values.cluster
      ? `redis+cluster://${tenantAclUser(tenant)}:${password}@<host>:<port>,<host>:<port>,… (every master, or some of them; rediss+cluster:// with TLS)`
      : `redis://${tenantAclUser(tenant)}:${password}@<host>:<port> (rediss:// with TLS)`;
    deps.err(`tenant ${tenant}: REDIS_URL=${url} in its Secret; the password is not shown again\n`);
  }
  return 0;
}

if (require.main === module) {
  process.exitCode = runRedisAclCli(process.argv.slice(2), { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) });
}
