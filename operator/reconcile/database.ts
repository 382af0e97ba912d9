import { CNPG_CLUSTER } from '../../cdk8s/lib/kinds';
import { NAMES } from '../../cdk8s/lib/names';
import type { TenantValues } from '../../cdk8s/lib/values';
import type { ConditionInput } from '../conditions';
import type { Caches } from '../informers';
import type { KubeObject } from '../kube/client';

/** A CloudNativePG `Cluster`'s status as CloudNativePG 1.27 writes it (api/v1/cluster_types.go). */
type Cluster = KubeObject & {
  status?: {
    phase?: string;
    phaseReason?: string;
    instances?: number;
    readyInstances?: number;
    currentPrimary?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string; observedGeneration?: number }[];
  };
};

/** CloudNativePG's phase of a Cluster with nothing to do (its `PhaseHealthy`). */
export const CNPG_HEALTHY_PHASE = 'Cluster in healthy state';

/**
 * The condition reason for CloudNativePG's phases (their strings, as its cluster_types.go spells
 * them; a reason must be CamelCase). A phase not listed here is `ClusterNotHealthy`, its text in
 * the message: CloudNativePG adds phases between releases.
 */
export const CNPG_PHASE_REASONS: Readonly<Record<string, string>> = {
  'Failing over': 'FailingOver',
  'Switchover in progress': 'SwitchoverInProgress',
  'Setting up primary': 'SettingUpPrimary',
  'Creating a new replica': 'CreatingReplica',
  'Upgrading cluster': 'UpgradingCluster',
  'Cluster upgrade delayed': 'UpgradeDelayed',
  'Waiting for the instances to become active': 'WaitingForInstances',
  'Waiting for user action': 'WaitingForUser',
  'Primary instance is being restarted in-place': 'PrimaryRestarting',
  'Primary instance is being restarted without a switchover': 'PrimaryRestarting',
  'Applying configuration': 'ApplyingConfiguration',
  'Online upgrade in progress': 'OnlineUpgrading',
  'Cluster is in an unrecoverable state, needs manual intervention': 'Unrecoverable',
  'Unable to create required cluster objects': 'CannotCreateClusterObjects',
};

const which = `Cluster ${NAMES.database}`;

/**
 * `DatabaseReady` of a tenant on CloudNativePG (D-506), from its Cluster as the cache last saw
 * it: True only in CloudNativePG's healthy phase with its own `Ready` condition True (or not
 * written yet by an older release) for the Cluster's current generation; False with the phase as
 * reason while CloudNativePG works (a failover, a replica joining) or is stuck; Unknown while
 * CloudNativePG has not reported it (its operator not installed or not running). A tenant that
 * brings its own PostgreSQL has no such condition: the operator knows nothing of that database.
 */
export function databaseCondition(caches: Pick<Caches, 'child'>, namespace: string, values: Pick<TenantValues, 'database'>, unserved: string[]): ConditionInput | undefined {
  if (!values.database.cloudnativepg.enabled) return undefined;
  const cache = caches.child(CNPG_CLUSTER.kind, namespace);
  if (!cache || unserved.includes(CNPG_CLUSTER.kind)) {
    return { type: 'DatabaseReady', status: 'Unknown', reason: 'KindNotServed', message: `the cluster does not serve clusters.postgresql.cnpg.io: install CloudNativePG (docs/deploy.md, "A tenant on CloudNativePG")` };
  }
  const cluster = cache.get(NAMES.database, namespace) as Cluster | undefined;
  if (!cluster) return { type: 'DatabaseReady', status: 'Unknown', reason: 'ClusterNotFound', message: `the ${which} is not applied yet` };
  const s = cluster.status ?? {};
  if (!s.phase) return { type: 'DatabaseReady', status: 'Unknown', reason: 'PhaseNotReported', message: `CloudNativePG has not reported the ${which} yet: is its operator running?` };
  const ready = s.conditions?.find((c) => c.type === 'Ready');
  const instances = `${s.readyInstances ?? 0}/${s.instances ?? 0} instances ready${s.currentPrimary ? `, primary ${s.currentPrimary}` : ''}`;
  const phase = `${s.phase}${s.phaseReason ? ` (${s.phaseReason})` : ''}`;
  // Reported for an older spec: CloudNativePG has not looked at the latest change yet.
  const stale = ready?.observedGeneration !== undefined && ready.observedGeneration < (cluster.metadata.generation ?? 1);
  if (s.phase === CNPG_HEALTHY_PHASE && (!ready || ready.status === 'True') && !stale) {
    return { type: 'DatabaseReady', status: 'True', reason: 'ClusterHealthy', message: `${which}: ${phase}, ${instances}` };
  }
  const reason = stale ? 'SpecNotObserved' : s.phase === CNPG_HEALTHY_PHASE ? (ready?.reason ?? 'ClusterNotReady') : (CNPG_PHASE_REASONS[s.phase] ?? 'ClusterNotHealthy');
  return { type: 'DatabaseReady', status: 'False', reason, message: `${which}: ${phase}, ${instances}` };
}
