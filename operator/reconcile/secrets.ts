import { databaseSecretRef } from '../../cdk8s/lib/cloudnativepg';
import { SECRET } from '../../cdk8s/lib/kinds';
import type { KubeClient, KubeObject } from '../kube/client';
import type { Rendered } from '../render';
import type { Problem } from './outcome';

type Json = Record<string, unknown>;

/**
 * The Secret keys the tenant refers to (its stores, its RPC and webhook URLs) that its namespace
 * lacks, as `name/key`; none with dev stores, whose Secrets the operator renders itself, nor a
 * CloudNativePG Cluster's.
 */
export async function missingSecrets(kube: Pick<KubeClient, 'get'>, rendered: Rendered): Promise<string[]> {
  const v = rendered.values;
  if (v.devStores.enabled) return [];
  // A CloudNativePG Cluster's -app Secret is CloudNativePG's to make, once the operator applied the Cluster (D-506).
  const refs = [...(v.database.cloudnativepg.enabled ? [] : [databaseSecretRef(v)]), v.redis.secretRef];
  if (v.source.type === 'rpc' && v.source.rpcUrlSecretRef) refs.push(v.source.rpcUrlSecretRef);
  if (v.source.type === 'rpc' && v.source.rpcWsUrlSecretRef) refs.push(v.source.rpcWsUrlSecretRef);
  if (v.source.webhookSecretRef) refs.push(v.source.webhookSecretRef);
  const missing: string[] = [];
  const seen = new Map<string, KubeObject | undefined>();
  for (const ref of refs) {
    if (!seen.has(ref.name)) seen.set(ref.name, await kube.get(SECRET, rendered.namespace, ref.name));
    const secret = seen.get(ref.name) as (KubeObject & { data?: Json; stringData?: Json }) | undefined;
    if (!secret || !(ref.key in (secret.data ?? {}) || ref.key in (secret.stringData ?? {}))) missing.push(`${ref.name}/${ref.key}`);
  }
  return [...new Set(missing)];
}

/** A tenant whose Secrets are not all there is not applied beyond its namespace (docs/deploy.md). */
export async function checkSecrets(kube: Pick<KubeClient, 'get'>, rendered: Rendered): Promise<Problem | undefined> {
  const missing = await missingSecrets(kube, rendered);
  if (!missing.length) return undefined;
  return { reason: 'SecretMissing', message: `namespace ${rendered.namespace} lacks the Secret key(s) ${missing.join(', ')} (docs/deploy.md)` };
}
