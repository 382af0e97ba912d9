import type { EnvironmentInput } from '../lib/values';

/**
 * An environment file: what differs from the kit's defaults (`cdk8s/lib/defaults.ts`) for all
 * its tenants, and each tenant with what differs for it. Typed, so a misspelt field fails
 * `npm run typecheck`; validated again when synthesized, so a bad value names its field.
 * `charts/market-indexer/values-<env>.yaml` states the same for Helm.
 */
export const defineEnvironment = (environment: EnvironmentInput): EnvironmentInput => environment;
