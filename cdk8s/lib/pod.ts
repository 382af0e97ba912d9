import { k8s } from 'cdk8s-plus-33';
import { IMAGE } from '../../core/constants';
import type { Resources } from './values';

/**
 * Secure defaults shared by every pod the kit runs: the Kubernetes "restricted" Pod Security
 * profile (the tenant namespace enforces it), no service-account token, no service-link
 * variables, and the image's only writable path on an emptyDir.
 */

export const TMP_VOLUME = 'tmp';

/** Restricted Pod Security for a container running as `uid`. */
export function containerSecurity(uid: number = IMAGE.uid): k8s.SecurityContext {
  return {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    runAsUser: uid,
    runAsGroup: uid,
    capabilities: { drop: ['ALL'] },
  };
}

export function podSecurity(uid: number = IMAGE.uid): k8s.PodSecurityContext {
  return {
    runAsNonRoot: true,
    runAsUser: uid,
    runAsGroup: uid,
    fsGroup: uid,
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

export function resourcesOf(r: Resources): k8s.ResourceRequirements {
  return {
    requests: { cpu: k8s.Quantity.fromString(r.requests.cpu), memory: k8s.Quantity.fromString(r.requests.memory) },
    limits: { cpu: k8s.Quantity.fromString(r.limits.cpu), memory: k8s.Quantity.fromString(r.limits.memory) },
  };
}

export function httpProbe(path: string, port: string, timing: { periodSeconds: number; failureThreshold: number; timeoutSeconds?: number }): k8s.Probe {
  return {
    httpGet: { path, port: k8s.IntOrString.fromString(port) },
    periodSeconds: timing.periodSeconds,
    failureThreshold: timing.failureThreshold,
    timeoutSeconds: timing.timeoutSeconds ?? 2,
  };
}

/** The emptyDir mounted at the image's writable path. */
export const tmpVolume = (sizeLimit = '64Mi'): k8s.Volume => ({
  name: TMP_VOLUME,
  emptyDir: { sizeLimit: k8s.Quantity.fromString(sizeLimit) },
});

export const tmpMount: k8s.VolumeMount = { name: TMP_VOLUME, mountPath: IMAGE.writableDir };

/** Spread replicas across zones and nodes when the cluster has them, without blocking a small one. */
export function topologySpread(selector: Record<string, string>): k8s.TopologySpreadConstraint[] {
  return ['topology.kubernetes.io/zone', 'kubernetes.io/hostname'].map((topologyKey) => ({
    maxSkew: 1,
    topologyKey,
    whenUnsatisfiable: 'ScheduleAnyway',
    labelSelector: { matchLabels: selector },
    // Count only the pods of the same rollout: old ones on their way out do not skew new ones.
    matchLabelKeys: ['pod-template-hash'],
  }));
}

/** Pod-level settings every workload of the kit shares. */
export function podDefaults(serviceAccountName: string): Pick<
  k8s.PodSpec,
  'serviceAccountName' | 'automountServiceAccountToken' | 'enableServiceLinks' | 'securityContext'
> {
  return {
    serviceAccountName,
    automountServiceAccountToken: false,
    // A Service named like a setting's prefix (api → API_PORT=tcp://…) would otherwise inject
    // variables that collide with the settings catalog.
    enableServiceLinks: false,
    securityContext: podSecurity(),
  };
}
