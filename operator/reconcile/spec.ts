import type { MarketIndexer } from '../../cdk8s/lib/crd';
import { KitInputError } from '../../cdk8s/lib/resolve';
import type { TenantInput } from '../../cdk8s/lib/values';
import { specPolicyProblems, type SpecPolicy } from '../policy';
import { renderTenant, type Rendered } from '../render';
import type { Problem } from './outcome';

/** What a MarketIndexer may ask is bounded by the environment (D-200): images, egress. */
export function checkPolicy(mi: MarketIndexer, policy: SpecPolicy): Problem | undefined {
  const refused = specPolicyProblems(mi.spec, policy);
  return refused.length ? { reason: 'InvalidSpec', message: refused.join('; ') } : undefined;
}

/**
 * The tenant's objects, rendered by the kit's construct; a spec the kit refuses (its own checks,
 * or the cdk8s-plus validation of a construct) is a Problem naming what was wrong.
 */
export function render(
  mi: MarketIndexer,
  opts: { environment: string; defaults: TenantInput; platformNamespace: string },
  renderer: typeof renderTenant = renderTenant,
): { rendered: Rendered } | { problem: Problem } {
  try {
    return { rendered: renderer(mi, opts) };
  } catch (err) {
    if (err instanceof KitInputError) return { problem: { reason: 'InvalidSpec', message: err.problems.join('; ') } };
    if (err instanceof Error && err.message.startsWith('Validation failed')) {
      return { problem: { reason: 'InvalidSpec', message: err.message.split('\n').slice(1).join('; ').trim() } };
    }
    throw err;
  }
}
