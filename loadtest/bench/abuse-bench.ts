// `npm run bench -- abuse` (issues 23, 31): each attack of loadtest/bench/abuse-attack.ts against one
// API process (compiled, as the image runs it; real PostgreSQL and Redis, the default limits), while a well-behaved
// client on other addresses reads from the same process at most every 25 ms: `/api/v1/config`
// (a public read with a database query) from the v1 API, `/api/v1/markets?limit=1` with Pro keys
// from the appendix variant's API; its latency right before each attack (baseline) and during it.
import { execFile } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { createApiKeyStore } from '../../core/api-keys';
import { createDatabase } from '../../core/db';
import { migrate } from '../../core/db/migrate';
import { ATTACKS, type AttackTarget } from './abuse-attack';
import { Client } from 'pg';
import { ADMIN_URL, build, cpuSeconds, dropDatabase, freshDatabase, pct, REDIS_URL, spawnImage } from './support';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
/** Only these attacks (comma-separated names of ATTACKS), else all. */
const ONLY = process.env.BENCH_ATTACKS?.split(',');
const VICTIM_IPS = Array.from({ length: 16 }, (_, i) => `127.0.1.${i + 1}`);

/** What the well-behaved client reads from an API: a public read, or (appendix variant) a read on Pro keys, well within their plan. */
interface Victim {
  port: number;
  path: string;
  keys: string[];
}

/** Sequential GETs of the victim's path, rotating over 16 addresses (well within their limits), for `seconds`. */
async function victim(v: Victim, seconds: number) {
  const { port } = v;
  const agents = VICTIM_IPS.map((ip) => new http.Agent({ keepAlive: true, localAddress: ip, maxSockets: 1 }));
  const times: number[] = [];
  let failures = 0;
  const end = Date.now() + seconds * 1000;
  for (let i = 0; Date.now() < end; i++) {
    const t = performance.now();
    const status = await new Promise<number>((resolve) => {
      http
        .get({ host: '127.0.0.1', port, path: v.path, agent: agents[i % agents.length], headers: v.keys.length ? { 'x-api-key': v.keys[i % v.keys.length]! } : {} }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        })
        .on('error', () => resolve(0));
    });
    const ms = performance.now() - t;
    if (status === 200) times.push(ms);
    else failures++;
    if (ms < 25) await new Promise((r) => setTimeout(r, 25 - ms));
  }
  agents.forEach((a) => a.destroy());
  return { n: times.length, failures, p50: pct(times, 50), p90: pct(times, 90) };
}

async function attack(name: string, port: number, seconds: number) {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(__dirname, 'abuse-attack.ts')], {
    maxBuffer: 16 * 1024 * 1024,
    env: { ...process.env, ATTACK: name, ATTACK_PORT: String(port), ATTACK_SECONDS: String(seconds) },
  });
  return JSON.parse(stdout) as { sent: number; bytes: number; outcomes: Record<string, number> };
}

const ms = (x: number) => x.toFixed(1);

/**
 * Transactions PostgreSQL counted in the bench's own database (each API query is one): the
 * database work an attack causes, apart from whatever else runs on this machine. PostgreSQL
 * publishes the counters about once a second, so a phase's figure is within a second of it.
 */
async function transactions(name: string): Promise<number> {
  const c = new Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    const r = await c.query<{ n: string }>('SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1', [name]);
    return Number(r.rows[0]?.n ?? 0);
  } finally {
    await c.end();
  }
}

export async function run(): Promise<void> {
  const name = `bench_abuse_${process.pid}`;
  const url = await freshDatabase(name);
  await migrate({ databaseUrl: url });
  // The appendix variant's tenant, and Pro keys for its well-behaved client (1,000 requests a minute each).
  const legacyTenant = `bench-abuse-legacy-${process.pid}`;
  const database = createDatabase({ url, poolMax: 1 });
  const keys = await Promise.all(Array.from({ length: 8 }, async () => (await createApiKeyStore(database.db).create({ tenant: legacyTenant, plan: 'pro' })).key));
  await database.close();
  // The API as the image runs it (IMAGE.commands.api, compiled).
  build();
  const apis = {
    v1: spawnImage('api', { DATABASE_URL: url, REDIS_URL, TENANT_ID: `bench-abuse-${process.pid}`, API_PORT: '0', API_HOST: '127.0.0.1' }),
    legacy: spawnImage('api', { DATABASE_URL: url, REDIS_URL, TENANT_ID: legacyTenant, API_VARIANT: 'legacy', API_PORT: '0', API_HOST: '127.0.0.1' }),
  } satisfies Record<AttackTarget, unknown>;
  const rows: string[][] = [];
  try {
    const victims: Record<AttackTarget, Victim> = {
      v1: { port: await apis.v1.port, path: '/api/v1/config', keys: [] },
      legacy: { port: await apis.legacy.port, path: '/api/v1/markets?limit=1', keys },
    };
    for (const v of Object.values(victims)) await victim(v, 1); // warm-up
    const unknown = ONLY?.filter((a) => !(a in ATTACKS));
    if (unknown?.length) throw new Error(`BENCH_ATTACKS: no attack ${unknown.join(', ')}; attacks: ${Object.keys(ATTACKS).join(', ')}`);
    for (const [a, { target }] of Object.entries(ATTACKS).filter(([n]) => !ONLY || ONLY.includes(n))) {
      const { child } = apis[target];
      const v = victims[target];
      const base = await victim(v, SECONDS);
      const cpu0 = cpuSeconds(child.pid!);
      const tx0 = await transactions(name);
      const [during, out] = await Promise.all([victim(v, SECONDS), attack(a, v.port, SECONDS)]);
      const cpu = ((cpuSeconds(child.pid!) - cpu0) / SECONDS) * 100;
      // The victim's own reads are one query each; the rest is the attack's.
      const pg = String(Math.round(((await transactions(name)) - tx0 - during.n - during.failures) / SECONDS));
      const top = Object.entries(out.outcomes)
        .sort((x, y) => y[1] - x[1])
        .slice(0, 3)
        .map(([k, v]) => `${v}× ${k.slice(0, 48)}`)
        .join('; ');
      rows.push([
        a,
        `${ms(base.p50)} / ${ms(base.p90)}`,
        `${ms(during.p50)} / ${ms(during.p90)}`,
        (during.p90 / Math.max(0.001, base.p90)).toFixed(1),
        String(during.failures),
        String(Math.round(out.sent / SECONDS)),
        String(Math.round(out.bytes / Math.max(1, out.sent))),
        `${cpu.toFixed(0)} %`,
        pg,
        top,
      ]);
      process.stderr.write(`${a} done\n`);
    }
  } finally {
    for (const { child } of Object.values(apis)) {
      child.kill('SIGTERM');
      if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
    }
    await dropDatabase(name);
  }
  const head = ['attack', 'victim p50/p90 ms, before', 'during', 'p90 ×', 'victim non-200', 'attack req/s', 'bytes/answer', 'API CPU', 'attack DB tx/s', 'what the attacker got (top 3)'];
  const table = [head, ...rows];
  const widths = head.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  process.stdout.write(
    [
      `abuse: ${SECONDS} s per phase, one API process per variant (compiled, as the image runs it), real PostgreSQL and Redis, default limits; victim: sequential GET /api/v1/config (v1) or /api/v1/markets?limit=1 on Pro keys (legacy) from 16 other addresses`,
      line(head),
      `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
      ...rows.map(line),
      '',
    ].join('\n'),
  );
}
