// `npm run pg-tenant -- --tenant <t> [--role <r>] [--database <d>]`: the psql script that makes a
// tenant's database on a PostgreSQL shared by tenants (D-453), for an admin of that server to run:
// the database (made if missing) owned by the tenant's role, CONNECT and TEMPORARY taken from
// PUBLIC (granted to every role by default), and the `public` schema the role's alone.
import { notRunExitCode, readCommandLine, usageErrorCode, type CliOutput } from '../core/cli';
import { tenantIdProblem } from '../core/config/settings';

export const PG_TENANT_USAGE = `usage: npm run -s pg-tenant -- --tenant <tenant> [--role <role>] [--database <database>]
  prints a psql script (run it as a superuser: psql -v ON_ERROR_STOP=1 -f <file>) that makes the
  tenant's database if missing (named <tenant> unless --database), owned by its role (<tenant>
  unless --role; the role must exist: its password is yours to set), and locks it down:
  REVOKE ALL ON DATABASE … FROM PUBLIC, CONNECT only for the role (and superusers), the public
  schema owned by the role and closed to PUBLIC. Run again at any time: it changes nothing twice.`;

/** A PostgreSQL identifier or literal: the names checked below need no more than this quoting. */
const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;
const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;
const NAME = /^[a-z_][a-z0-9_-]{0,62}$/;

/** The script for one tenant's database and role. */
export function tenantDatabaseScript(database: string, role: string): string {
  const [db, r] = [ident(database), ident(role)];
  return [
    `-- market-indexer: the database ${database} of role ${role}, closed to every other role (D-453)`,
    `SELECT format('CREATE DATABASE %I OWNER %I', ${literal(database)}, ${literal(role)}) WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = ${literal(database)}) \\gexec`,
    `ALTER DATABASE ${db} OWNER TO ${r};`,
    `REVOKE ALL ON DATABASE ${db} FROM PUBLIC;`,
    `GRANT CONNECT, TEMPORARY ON DATABASE ${db} TO ${r};`,
    `\\connect ${db}`,
    `ALTER SCHEMA public OWNER TO ${r};`,
    `REVOKE ALL ON SCHEMA public FROM PUBLIC;`,
    '',
  ].join('\n');
}

/** The command; returns the exit code. */
export function runPgTenantCli(argv: string[], deps: CliOutput): number {
  const cli = readCommandLine(
    { args: argv, options: { tenant: { type: 'string' }, role: { type: 'string' }, database: { type: 'string' }, help: { type: 'boolean' } }, strict: true },
    PG_TENANT_USAGE,
  );
  if (cli.kind !== 'run') return notRunExitCode(cli, deps);
  const { values } = cli.parsed;
  const fail = (line: string) => usageErrorCode(line, PG_TENANT_USAGE, deps);
  if (!values.tenant) return fail('--tenant is required');
  const problem = tenantIdProblem(values.tenant);
  if (problem) return fail(`--tenant ${problem}`);
  for (const [option, value] of [['--role', values.role], ['--database', values.database]] as const) {
    if (value !== undefined && !NAME.test(value)) return fail(`${option} "${value}" is not a PostgreSQL name this script takes (lowercase letters, digits, _ and -, at most 63, not starting with a digit or -)`);
  }
  deps.out(tenantDatabaseScript(values.database ?? values.tenant, values.role ?? values.tenant));
  return 0;
}

if (require.main === module) {
  process.exitCode = runPgTenantCli(process.argv.slice(2), { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) });
}
