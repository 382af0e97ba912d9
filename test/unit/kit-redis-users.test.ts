import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { ENVIRONMENTS } from '../../cdk8s/environments';
import { sha256Hex, tenantAclCommand } from '../../cdk8s/lib/redis-users';
import type { EnvironmentInput } from '../../cdk8s/lib/values';
import { synthEnvironment } from '../../cdk8s/synth';
import { CLUSTER_ACL_COMMANDS, tenantAclRules, tenantAclUser } from '../../core/redis/acl';
import { runRedisAclCli } from '../../scripts/redis-acl';
import { environmentArb } from '../support/kit-arbitraries';
import { ROOT, type Manifest } from '../support/kit';
import { renderedDevRedis } from '../support/kit-redis';

// The kit's Redis users (D-231): the dev Redis runs with the default user off, an admin, and the
// tenant's user with the rules of tenantAclRules (core/redis/acl.ts, D-193); the tenant's
// REDIS_URL names that user. For a Redis the kit does not run, `npm run redis-acl` prints the same
// user. test/integration/kit-redis-acl.test.ts runs both on a real redis-server.

const objectsOf = (env: EnvironmentInput) => synthEnvironment(env, 'test').flatMap((f) => f.objects as Manifest[]);

describe('the dev Redis runs with a user per tenant (D-231)', () => {
  it("dev: default off, an admin, and mi-demo with tenantAclRules; the tenant's REDIS_URL is that user with that password", () => {
    const r = renderedDevRedis(objectsOf(ENVIRONMENTS.dev!), 'demo');
    const url = new URL(r.redisUrl);
    expect([url.protocol, url.username, url.hostname, url.port]).toEqual(['redis:', tenantAclUser('demo'), 'redis', '6379']);
    const lines = r.aclFile.trim().split('\n');
    expect(lines).toEqual([
      'user default off',
      `user admin on #${sha256Hex(r.adminPassword)} ~* &* +@all`,
      `user ${tenantAclUser('demo')} ${tenantAclRules('demo').join(' ')} #${sha256Hex(url.password)}`,
    ]);
    // Dev only: fixed passwords, as the dev PostgreSQL's.
    expect([url.password, r.adminPassword]).toEqual(['market-dev', 'admin-dev']);
    // Read from a read-only mount; a changed file restarts Redis (it reads the file when it starts).
    expect(r.readOnly).toBe(true);
    expect(r.annotations['checksum/acl']).toBe(sha256Hex(r.aclFile));
    // docs/security.md's requirements still hold (D-104).
    const arg = (name: string) => r.args[r.args.indexOf(name) + 1];
    expect([arg('--maxmemory-policy'), arg('--appendonly'), arg('--appendfsync'), arg('--save')]).toEqual(['noeviction', 'yes', 'always', '']);
    expect(r.liveness).toEqual(['redis-cli', 'ping']);
  });

  it("any environment: each dev-store tenant's Redis knows its own user only, and its REDIS_URL names it (property)", () => {
    fc.assert(
      fc.property(environmentArb, (env) => {
        const objects = objectsOf(env);
        for (const [tenant, own] of Object.entries(env.tenants)) {
          if (!(own.devStores?.enabled ?? env.devStores?.enabled)) continue;
          const r = renderedDevRedis(objects, tenant);
          const users = r.aclFile.trim().split('\n').map((l) => l.split(' ')[1]);
          expect(users).toEqual(['default', 'admin', tenantAclUser(tenant)]);
          expect(r.aclFile).toContain(` ${tenantAclRules(tenant).join(' ')} #`);
          expect(decodeURIComponent(new URL(r.redisUrl).username)).toBe(tenantAclUser(tenant));
        }
      }),
      { numRuns: 25 },
    );
  });

  it('renders a changed ACL as a new checksum: another tenant, another file', () => {
    const env = structuredClone(ENVIRONMENTS.dev!) as EnvironmentInput;
    env.tenants = { demo: {}, other: {} };
    const objects = objectsOf(env);
    const [demo, other] = [renderedDevRedis(objects, 'demo'), renderedDevRedis(objects, 'other')];
    expect(demo.annotations['checksum/acl']).not.toBe(other.annotations['checksum/acl']);
    expect(other.aclFile).not.toContain('t:demo:');
  });
});

describe('npm run redis-acl (a Redis the kit does not run)', () => {
  const run = (argv: string[], passwords = ['p'.repeat(64), 'q'.repeat(64)]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = runRedisAclCli(argv, { out: (s) => out.push(s), err: (s) => err.push(s), newPassword: () => passwords.shift()! });
    return { code, out: out.join(''), err: err.join('') };
  };

  it('prints per tenant its ACL SETUSER line (the password as SHA-256) on stdout, the password and REDIS_URL on stderr', () => {
    const r = run(['--tenant', 'alpha', '--tenant', 'beta']);
    expect(r.code).toBe(0);
    expect(r.out).toBe(`${tenantAclCommand('alpha', { sha256: sha256Hex('p'.repeat(64)) })}\n${tenantAclCommand('beta', { sha256: sha256Hex('q'.repeat(64)) })}\n`);
    expect(r.out).toBe(`ACL SETUSER mi-alpha ${tenantAclRules('alpha').join(' ')} #${sha256Hex('p'.repeat(64))}\nACL SETUSER mi-beta ${tenantAclRules('beta').join(' ')} #${sha256Hex('q'.repeat(64))}\n`);
    expect(r.out).not.toContain('p'.repeat(64));
    expect(r.err).toContain(`tenant alpha: REDIS_URL=redis://mi-alpha:${'p'.repeat(64)}@<host>:<port>`);
    expect(r.err).toContain(`tenant beta: REDIS_URL=redis://mi-beta:${'q'.repeat(64)}@<host>:<port>`);
  });

  it('--acl-file prints ACL file lines; --password reuses a password for one tenant', () => {
    const pw = 'a-password-of-the-secret';
    const r = run(['--tenant', 'alpha', '--acl-file', '--password', pw]);
    expect([r.code, r.out]).toEqual([0, `user mi-alpha ${tenantAclRules('alpha').join(' ')} #${sha256Hex(pw)}\n`]);
  });

  it('--cluster adds what a Cluster client needs (CLUSTER SLOTS and INFO, D-261) and gives a redis+cluster URL; the ACL file form too', () => {
    const r = run(['--tenant', 'alpha', '--cluster']);
    expect([r.code, r.out]).toEqual([0, `ACL SETUSER mi-alpha ${[...tenantAclRules('alpha'), '+cluster|slots', '+cluster|info'].join(' ')} #${sha256Hex('p'.repeat(64))}\n`]);
    expect(tenantAclRules('alpha', { cluster: true })).toEqual([...tenantAclRules('alpha'), ...CLUSTER_ACL_COMMANDS]);
    expect(r.err).toContain(`tenant alpha: REDIS_URL=redis+cluster://mi-alpha:${'p'.repeat(64)}@<host>:<port>,<host>:<port>,…`);
    expect(run(['--tenant', 'alpha', '--cluster', '--acl-file']).out).toBe(`user mi-alpha ${tenantAclRules('alpha', { cluster: true }).join(' ')} #${sha256Hex('p'.repeat(64))}\n`);
    expect(run(['--help']).out).toContain('--cluster: for a Redis Cluster');
  });

  it.each([
    [[], '--tenant is required'],
    [['--tenant', 'Bad_Tenant'], '--tenant "Bad_Tenant" is not a tenant id'],
    [['--tenant', 'a', '--tenant', 'b', '--password', 'x'.repeat(20)], '--password gives one tenant\'s password: name one --tenant'],
    [['--tenant', 'a', '--password', 'short'], '--password must be 16 or more letters'],
    [['--tenant', 'a', '--bogus'], 'unknown option --bogus'],
  ])('refuses %j with usage, exit 2', (argv, message) => {
    const r = run(argv as string[]);
    expect([r.code, r.out]).toEqual([2, '']);
    expect(r.err).toContain(message);
    expect(r.err).toContain('usage: npm run -s redis-acl');
  });

  it('is the command npm runs, with a new random password each run', () => {
    const once = () => spawnSync(process.execPath, ['--import', 'tsx', 'scripts/redis-acl.ts', '--tenant', 'alpha'], { cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH } });
    const [a, b] = [once(), once()];
    expect([a.status, b.status]).toEqual([0, 0]);
    const passwordOf = (err: string) => /REDIS_URL=redis:\/\/mi-alpha:([0-9a-f]{64})@/.exec(err)![1]!;
    expect(a.stdout).toBe(`${tenantAclCommand('alpha', { sha256: sha256Hex(passwordOf(a.stderr)) })}\n`);
    expect(passwordOf(a.stderr)).not.toBe(passwordOf(b.stderr));
    expect(JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')).scripts['redis-acl']).toBe('tsx scripts/redis-acl.ts');
  });
});
