import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { migrate } from '../../core/db/migrate';
import { runPgTenantCli } from '../../scripts/pg-tenant';
import { bashBlocks, checkoutOf, commandsOf, runCommand } from '../support/doc-commands';
import { ADMIN_DATABASE_URL, databaseUrl, runId, tenantPrefix } from '../support/env';

const ROOT = path.join(__dirname, '..', '..');

/**
 * Tenants apart on one PostgreSQL (D-453): docs/deploy.md's commands for a tenant's database, as
 * typed, make a database only its role may connect to; another tenant's role can neither open a
 * session there nor, so, send a notification.
 */
describe("a tenant's database on a shared PostgreSQL (npm run pg-tenant)", () => {
  const alpha = `${tenantPrefix(runId())}-pga`;
  const beta = `${tenantPrefix(runId())}-pgb`;
  const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
  const as = (role: string, database: string) => Object.assign(new URL(databaseUrl(database)), { username: role, password: '' }).toString();
  const connectAs = async (role: string, database: string) => {
    const c = new Client({ connectionString: as(role, database) });
    c.on('error', () => {});
    await c.connect();
    return c;
  };

  beforeAll(async () => {
    await admin.connect();
    for (const r of [alpha, beta]) await admin.query(`CREATE ROLE "${r}" LOGIN`);
  });
  afterAll(async () => {
    for (const d of [alpha, beta]) await admin.query(`DROP DATABASE IF EXISTS "${d}" WITH (FORCE)`);
    for (const r of [alpha, beta]) await admin.query(`DROP ROLE IF EXISTS "${r}"`);
    await admin.end();
  });

  it("the documented commands make alpha's database alpha's alone: beta's role cannot connect nor notify there, alpha migrates it", async () => {
    // The liberties: the tenants are this run's, the server is this one.
    const [print, apply, ...more] = commandsOf(bashBlocks(path.join(ROOT, 'docs/deploy.md'), "### The tenant's database")[0]!);
    expect([print, apply, more]).toEqual([
      expect.stringMatching(/^npm run -s pg-tenant -- --tenant alpha > alpha\.sql(\s+#.*)?$/),
      'psql -h 10.30.0.5 -U postgres -v ON_ERROR_STOP=1 -f alpha.sql',
      [],
    ]);
    const server = new URL(ADMIN_DATABASE_URL);
    const checkout = checkoutOf(ROOT);
    try {
      const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.homedir(), PGPASSWORD: decodeURIComponent(server.password) };
      for (const tenant of [alpha, beta]) {
        const printed = await runCommand(print!.replaceAll('alpha', tenant), { cwd: checkout.dir, env });
        expect(printed).toMatchObject({ code: 0, err: '' });
        // Twice: a second run changes nothing and fails on nothing.
        for (let i = 0; i < 2; i++) {
          const applied = await runCommand(apply!.replace('-h 10.30.0.5', `-h ${server.hostname} -p ${server.port || 5432}`).replace('-U postgres', `-U ${server.username}`).replaceAll('alpha', tenant), { cwd: checkout.dir, env });
          expect({ code: applied.code, err: applied.err }).toEqual({ code: 0, err: '' });
        }
      }
    } finally {
      checkout.remove();
    }

    // Beta's role: refused at the door of alpha's database (so no NOTIFY, no session named like alpha's processes).
    await expect(connectAs(beta, alpha)).rejects.toMatchObject({ code: '42501', message: expect.stringContaining(`permission denied for database "${alpha}"`) });
    // No PUBLIC grant left on either database.
    const acl = await admin.query<{ datname: string; public_connect: boolean; owner: string }>(
      `SELECT datname, has_database_privilege('public', oid, 'CONNECT') AS public_connect, pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = ANY($1) ORDER BY datname`,
      [[alpha, beta]],
    );
    expect(acl.rows).toEqual([
      { datname: alpha, public_connect: false, owner: alpha },
      { datname: beta, public_connect: false, owner: beta },
    ]);

    // Alpha's own: migrates its database, makes a projection schema, listens and notifies.
    await migrate({ databaseUrl: as(alpha, alpha) });
    const own = await connectAs(alpha, alpha);
    try {
      await own.query('CREATE SCHEMA p901');
      await own.query('LISTEN projection_live');
      const heard = new Promise<string>((r) => own.once('notification', (n) => r(n.payload ?? '')));
      await own.query("SELECT pg_notify('projection_live', 'own')");
      expect(await heard).toBe('own');
      // And its own session in beta's database is refused the same way.
      await expect(connectAs(alpha, beta)).rejects.toMatchObject({ code: '42501' });
    } finally {
      await own.end();
    }
  });

  it('refuses a tenant id, role or database it cannot quote plainly, naming the option', () => {
    const err: string[] = [];
    const deps = { out: () => {}, err: (s: string) => err.push(s) };
    expect(runPgTenantCli(['--tenant', 'Alpha'], deps)).toBe(2);
    expect(runPgTenantCli(['--tenant', 'alpha', '--role', 'a"b'], deps)).toBe(2);
    expect(err.join('')).toContain('--tenant "Alpha" is not a tenant id');
    expect(err.join('')).toContain('--role "a"b" is not a PostgreSQL name this script takes');
  });
});
