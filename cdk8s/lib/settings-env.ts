import { createHash } from 'node:crypto';
import type { k8s } from 'cdk8s-plus-33';
import { DEFAULT_PORTS } from '../../core/constants';
import { isSettingName, SETTINGS, settingSpec, settingToEnv, type SettingName, type SourceType } from '../../core/config/settings';
import { databaseSecretRef } from './cloudnativepg';
import { edgeOf } from './edge-values';
import type { SecretKeyRef, TenantValues } from './values';

export type KitProcess = 'api' | 'indexer' | 'migrate' | 'chain';

/** Where the simulated chain keeps its genesis and journal in its pod (a volume, D-211). */
export const CHAIN_DATA_DIR = '/data';
/** The chain's listen address in its pod: every interface, for the tenant's API and indexer through its Service (loopback is the process default, D-270). */
export const CHAIN_LISTEN_HOST = '0.0.0.0';

/**
 * The non-secret settings a process gets, as ConfigMap data: what the kit manages (tenant,
 * ports, program, the API's variant, proxy trust from the ingress), then the tenant's own `settings`, each only for
 * the processes that read it (the catalog's `readBy`), so changing an indexer setting does not
 * roll the API. Keys sorted: the same data always renders the same and hashes the same.
 */
export function configMapData(values: TenantValues, tenant: string, process: Exclude<KitProcess, 'migrate'>): Record<string, string> {
  const data: Partial<Record<SettingName, string | number | boolean>> = {
    NODE_ENV: 'production',
    TENANT_ID: tenant,
    PROGRAM_ID: values.source.programId,
  };
  switch (process) {
    case 'api':
      data.API_PORT = DEFAULT_PORTS.api;
      // Stated, not left to the process default: what the ingress's upstream keep-alive is checked against (D-282).
      data.HTTP_KEEP_ALIVE_TIMEOUT_MS = SETTINGS.HTTP_KEEP_ALIVE_TIMEOUT_MS.default;
      // Written for v1 too: the ConfigMap says what the tenant serves, whatever the process default (D-159).
      data.API_VARIANT = values.variant;
      if (values.api.corsAllowedOrigins.length) data.CORS_ALLOWED_ORIGINS = values.api.corsAllowedOrigins.join(',');
      {
        // The edge's host names and proxies' addresses (the route's, then the Ingress's, D-480), never
        // a hop count: with a count, whoever connects is believed (D-230).
        const { hosts, proxies } = edgeOf(values);
        if (hosts.length) data.PUBLIC_HOSTS = hosts.join(',');
        if (proxies.length) data.TRUST_PROXY = proxies.join(',');
      }
      break;
    case 'indexer':
      data.INDEXER_PORT = DEFAULT_PORTS.indexer;
      data.HTTP_KEEP_ALIVE_TIMEOUT_MS = SETTINGS.HTTP_KEEP_ALIVE_TIMEOUT_MS.default;
      break;
    case 'chain':
      data.CHAIN_RPC_PORT = DEFAULT_PORTS.chain;
      data.CHAIN_RPC_HOST = CHAIN_LISTEN_HOST;
      data.DATA_DIR = CHAIN_DATA_DIR;
      break;
    default: {
      const never: never = process;
      throw new Error(`unknown process ${String(never)}`);
    }
  }
  for (const [name, value] of Object.entries(values.settings as Record<string, string | number | boolean | undefined>)) {
    if (value === undefined || !isSettingName(name)) continue;
    if (settingSpec(name).readBy.includes(process)) data[name] = value;
  }
  return Object.fromEntries(
    Object.entries(data)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => [k, settingToEnv(v as string | number | boolean)]),
  );
}

/**
 * Where a tenant's values hold the Secret reference of each secret setting: the only way a
 * secret reaches a process. A test checks every secret setting a kit process reads is here.
 */
export const SECRET_REFS = {
  DATABASE_URL: ['database', 'secretRef'],
  REDIS_URL: ['redis', 'secretRef'],
  RPC_URL: ['source', 'rpcUrlSecretRef'],
  RPC_WS_URL: ['source', 'rpcWsUrlSecretRef'],
  WEBHOOK_SECRET: ['source', 'webhookSecretRef'],
} as const satisfies Partial<Record<SettingName, readonly [string, string]>>;
export type SecretSetting = keyof typeof SECRET_REFS;

/** What a process never uses with a source although it reads it otherwise: no reason to hold the secret. */
const UNUSED_WITH_SOURCE: Partial<Record<`${KitProcess}:${SourceType}`, readonly SecretSetting[]>> = {
  // Webhook ingestion lists, orders and fills gaps over the RPC (D-472), but never subscribes.
  'indexer:webhook': ['RPC_WS_URL'],
};

/**
 * The secret settings a process of a tenant with this source is given (when the tenant has a
 * reference for them): what the catalog says it reads, less what its source never uses. The
 * Helm chart reads the same table (files/service.json).
 */
export function secretSettingsOf(process: KitProcess, source: SourceType): SecretSetting[] {
  const unused = UNUSED_WITH_SOURCE[`${process}:${source}`] ?? [];
  return (Object.keys(SECRET_REFS) as SecretSetting[]).filter((n) => settingSpec(n).readBy.includes(process) && !unused.includes(n));
}

export function secretRefOf(values: TenantValues, name: SecretSetting): SecretKeyRef | undefined {
  // Always there: stated, CloudNativePG's, or the default Secret's (D-500).
  if (name === 'DATABASE_URL') return databaseSecretRef(values);
  const [section, key] = SECRET_REFS[name];
  return (values as unknown as Record<string, Record<string, SecretKeyRef | undefined>>)[section]![key];
}

const secretEnv = (name: SettingName, ref: SecretKeyRef): k8s.EnvVar => ({
  name,
  valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } },
});

/** Secret settings, only ever as references to a Secret in the tenant namespace. */
export function secretEnvOf(values: TenantValues, process: KitProcess): k8s.EnvVar[] {
  return secretSettingsOf(process, values.source.type).flatMap((name) => {
    const ref = secretRefOf(values, name);
    return ref ? [secretEnv(name, ref)] : [];
  });
}

/**
 * JSON as Go's encoding/json writes it (Helm's `toJson`): map keys sorted, no spaces, and
 * `<`, `>`, `&`, U+2028, U+2029 escaped, so the chart computes the same checksum.
 */
export function goJson(value: unknown): string {
  const sorted = (v: unknown): unknown =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted((v as Record<string, unknown>)[k])]))
      : Array.isArray(v)
        ? v.map(sorted)
        : v;
  return JSON.stringify(sorted(value)).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The pod annotation that rolls a Deployment when its settings change. */
export const checksumOf = (data: Record<string, string>) => createHash('sha256').update(goJson(data)).digest('hex');
