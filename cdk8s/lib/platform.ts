import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-33';
import { catalogProblems, manifestsUnder } from './catalog-check';
import type { PlatformContext } from './context';
import { platformLabels } from './names';
import { MarketIndexerDashboards } from './dashboards';
import { MarketIndexerLoadTest } from './load-test';
import { MarketIndexerOperator } from './operator';
import { LOAD_TEST_SCRIPTS } from './values';
import type { TenantValues } from './values';

/**
 * What an environment runs once for all its tenants, in its own namespace: the operator and
 * the dashboards plug in here. The Helm chart renders the namespace only when it is not the
 * release's own (Helm creates that one with `--create-namespace`).
 */
export class MarketIndexerPlatform extends Construct {
  /** `environmentValues`: the kit's defaults and the environment's values for every tenant. */
  constructor(scope: Construct, id: string, readonly ctx: PlatformContext, environmentValues: TenantValues) {
    super(scope, id);
    new k8s.KubeNamespace(this, 'namespace', {
      metadata: {
        name: ctx.values.namespace,
        labels: {
          ...platformLabels(ctx),
          'pod-security.kubernetes.io/enforce': 'restricted',
          'pod-security.kubernetes.io/enforce-version': 'latest',
        },
      },
    });
    if (ctx.values.operator.enabled) new MarketIndexerOperator(this, 'operator', ctx, environmentValues);
    if (ctx.values.dashboards.enabled) new MarketIndexerDashboards(this, 'dashboards', ctx);
    if (ctx.values.loadTest.enabled) new MarketIndexerLoadTest(this, 'load-test', ctx, LOAD_TEST_SCRIPTS);
    const repository = environmentValues.image.repository;
    this.node.addValidation({ validate: () => catalogProblems(manifestsUnder(this), (image) => image.startsWith(`${repository}:`)) });
  }
}
