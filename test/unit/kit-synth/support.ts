/**
 * What the kit-synth suites share: the environments synthesized as the kit writes them, split
 * into all objects, a tenant's and the platform part's, and the shapes of the objects the suites
 * read.
 */
import type { EnvironmentInput } from '../../../cdk8s/lib/values';
import { synthEnvironment } from '../../../cdk8s/synth';
import { KitInputError } from '../../../cdk8s/lib/resolve';
import type { Manifest } from '../../support/kit';

export type Container = {
  name: string;
  image: string;
  ports?: { name?: string; containerPort: number }[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  envFrom?: { configMapRef?: { name: string } }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
  readinessProbe?: { httpGet?: { port: string | number } };
  livenessProbe?: { httpGet?: { port: string | number } };
  startupProbe?: { httpGet?: { port: string | number } };
};
export type DeploymentLike = Manifest & {
  spec: {
    strategy?: { rollingUpdate?: { maxUnavailable?: number | string } };
    template: {
      spec: PodSpec & {
        terminationGracePeriodSeconds: number;
        topologySpreadConstraints?: { topologyKey: string }[];
        containers: (Container & { lifecycle?: { preStop?: { sleep?: { seconds: number } } } })[];
      };
    };
  };
};
export type PodSpec = { containers: Container[]; initContainers?: Container[]; securityContext?: Record<string, unknown>; automountServiceAccountToken?: boolean };

export const synth = (env: EnvironmentInput) => synthEnvironment(env, 'test environment');
export const objectsOf = (env: EnvironmentInput) => synth(env).flatMap((f) => f.objects as Manifest[]);
export const tenantObjectsOf = (env: EnvironmentInput) => synth(env).filter((f) => f.tenant).flatMap((f) => f.objects as Manifest[]);
export const platformObjectsOf = (env: EnvironmentInput) => synth(env).find((f) => f.name === 'platform.yaml')!.objects as Manifest[];

/** The problems the kit names for an environment it refuses; fails the test if it accepts it. */
export function problemsOf(input: unknown): string[] {
  try {
    synthEnvironment(input, 'env.yaml');
  } catch (err) {
    expect(err).toBeInstanceOf(KitInputError);
    return (err as KitInputError).problems;
  }
  throw new Error('accepted');
}
