import { createHash } from 'node:crypto';
import type { k8s } from 'cdk8s-plus-33';
import { DEFAULT_PORTS } from '../../core/constants';
import { isSettingName, settingSpec, settingToEnv, type SettingName } from '../../core/config/settings';
import type { SecretKeyRef, TenantValues } from './values';

export type KitProcess = 'api' | 'indexer' | 'migrate';

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
  if (process === 'api') {
    data.API_PORT = DEFAULT_PORTS.api;
    // Written for v1 too: the ConfigMap says what the tenant serves, whatever the process default (D-159).
    data.API_VARIANT = values.variant;
    if (values.api.ingress.enabled) {
      data.PUBLIC_HOSTS = values.api.ingress.host;
      data.TRUST_PROXY = values.api.ingress.trustedHops;
    }
  } else {
    data.INDEXER_PORT = DEFAULT_PORTS.indexer;
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

const secretEnv = (name: SettingName, ref: SecretKeyRef): k8s.EnvVar => ({
  name,
  valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } },
});

/** Secret settings, only ever as references to a Secret in the tenant namespace. */
export function secretEnvOf(values: TenantValues, process: KitProcess): k8s.EnvVar[] {
  const env: k8s.EnvVar[] = [secretEnv('DATABASE_URL', values.database.secretRef)];
  if (process === 'migrate') return env;
  env.push(secretEnv('REDIS_URL', values.redis.secretRef));
  if (process === 'indexer') {
    const s = values.source;
    if (s.type === 'rpc' && s.rpcUrlSecretRef) env.push(secretEnv('RPC_URL', s.rpcUrlSecretRef));
    if (s.type === 'rpc' && s.rpcWsUrlSecretRef) env.push(secretEnv('RPC_WS_URL', s.rpcWsUrlSecretRef));
    if (s.webhookSecretRef) env.push(secretEnv('WEBHOOK_SECRET', s.webhookSecretRef));
  }
  return env;
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
