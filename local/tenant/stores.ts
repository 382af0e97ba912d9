import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { Client } from 'pg';
import { parse, stringify } from 'yaml';
import type { SecretStore } from './kubelet';
import type { K8sObject } from './manifests';

/**
 * The tenant's stores and Secrets on this machine: a database of its own on the local
 * PostgreSQL, the local Redis (the tenant's key prefix keeps it apart), and a secrets file in the
 * shape `kubectl create secret generic <name> --from-literal=<key>=<value>` gives a Secret.
 */

export const DEFAULT_ADMIN_DATABASE_URL = 'postgres://postgres:postgres@127.0.0.1:5432/postgres';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export function databaseUrlOf(adminUrl: string, database: string): string {
  const u = new URL(adminUrl);
  u.pathname = `/${database}`;
  return u.toString();
}

/** Creates the tenant's database unless it exists (`fresh` drops it first). */
export async function ensureDatabase(adminUrl: string, database: string, fresh: boolean): Promise<string> {
  const c = new Client({ connectionString: adminUrl });
  await c.connect();
  try {
    if (fresh) await c.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    const { rows } = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rows.length) await c.query(`CREATE DATABASE "${database}"`);
  } finally {
    await c.end();
  }
  return databaseUrlOf(adminUrl, database);
}

export async function dropDatabase(adminUrl: string, database: string): Promise<void> {
  const c = new Client({ connectionString: adminUrl });
  await c.connect();
  try {
    await c.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  } finally {
    await c.end();
  }
}

/** Every `secretKeyRef` of the tenant's containers: which key of which Secret feeds which variable. */
export function secretReferences(objects: K8sObject[]): { secret: string; key: string; variable: string }[] {
  const refs = new Map<string, { secret: string; key: string; variable: string }>();
  for (const o of objects) {
    const pod = (o as { spec?: { template?: { spec?: { initContainers?: { env?: { name: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[] }[]; containers?: { env?: { name: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[] }[] } } } }).spec?.template?.spec;
    for (const c of [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])]) {
      for (const e of c.env ?? []) {
        const r = e.valueFrom?.secretKeyRef;
        if (r) refs.set(`${r.name}/${r.key}`, { secret: r.name, key: r.key, variable: e.name });
      }
    }
  }
  return [...refs.values()];
}

/**
 * The local Secrets: those the kit renders itself (a dev tenant's stores), with the file's
 * entries over them, as Secrets created with kubectl would stand beside rendered ones.
 */
export function secretStore(objects: K8sObject[], file: SecretStore): SecretStore {
  const store: SecretStore = {};
  for (const s of objects.filter((o) => o.kind === 'Secret') as (K8sObject & { stringData?: Record<string, string>; data?: Record<string, string> })[]) {
    store[s.metadata.name] = { ...s.stringData, ...Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()])) };
  }
  for (const [name, keys] of Object.entries(file)) store[name] = { ...store[name], ...keys };
  return store;
}

/**
 * The secrets file a newcomer would write for this tenant on this machine: for each referenced
 * key, the local value of the setting it feeds. Kept in the run folder and reused, so a restart
 * keeps its webhook secret; `--secrets` gives one of your own instead.
 */
export function localSecretsFile(file: string, objects: K8sObject[], local: Record<string, string>): SecretStore {
  const rendered = new Set(objects.filter((o) => o.kind === 'Secret').map((o) => o.metadata.name));
  const existing = existsSync(file) ? ((parse(readFileSync(file, 'utf8')) as SecretStore | null) ?? {}) : {};
  const out: SecretStore = {};
  for (const ref of secretReferences(objects)) {
    // A dev tenant's own rendered Secret holds its dev stores' addresses: the local ones replace them.
    const value = local[ref.variable] ?? (ref.variable === 'WEBHOOK_SECRET' ? (existing[ref.secret]?.[ref.key] ?? randomBytes(24).toString('hex')) : undefined);
    if (value === undefined) continue;
    if (rendered.has(ref.secret) && !(ref.variable in local)) continue;
    out[ref.secret] = { ...out[ref.secret], [ref.key]: value };
  }
  writeFileSync(file, `# The tenant's Secrets on this machine: each entry is what\n# kubectl create secret generic <name> --from-literal=<key>=<value> would create.\n${stringify(out)}`, { mode: 0o600 });
  return out;
}

export function readSecretsFile(file: string): SecretStore {
  const v = parse(readFileSync(file, 'utf8')) as unknown;
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error(`${file}: expected a map of Secret name → { key: value }`);
  for (const [name, keys] of Object.entries(v as Record<string, unknown>)) {
    if (!keys || typeof keys !== 'object' || Array.isArray(keys) || !Object.values(keys).every((x) => typeof x === 'string')) {
      throw new Error(`${file}: Secret ${name} must map keys to string values (what --from-literal takes)`);
    }
  }
  return v as SecretStore;
}

/** The Alertmanager's webhook: every notification it sends, in order. */
export interface AlertNotification {
  status: 'firing' | 'resolved';
  receivedAt: number;
  alerts: { status: 'firing' | 'resolved'; labels: Record<string, string>; annotations: Record<string, string>; startsAt: string; endsAt: string }[];
  groupLabels: Record<string, string>;
  commonLabels: Record<string, string>;
}

export async function startAlertReceiver(host: string): Promise<{ url: string; notifications: AlertNotification[]; close(): Promise<void> }> {
  const notifications: AlertNotification[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        notifications.push({ ...(JSON.parse(Buffer.concat(chunks).toString()) as AlertNotification), receivedAt: Date.now() });
        res.writeHead(200).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://${host}:${port}/alerts`,
    notifications,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

export { stringify as toYaml };
