import { App, Chart } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import { MarketIndexerTenant } from './lib/tenant';
import { MarketIndexerPlatform } from './lib/platform';
import { checkEnvironment, deepMerge, environmentLayer, resolvePlatform } from './lib/resolve';
import { TENANT_DEFAULTS } from './lib/defaults';

export interface SynthFile {
  /** File name inside the output directory. */
  name: string;
  /** The tenant it holds, or undefined for the environment's platform part. */
  tenant: string | undefined;
  yaml: string;
  objects: Record<string, unknown>[];
}

const render = (build: (chart: Chart) => void): { yaml: string; objects: Record<string, unknown>[] } => {
  const app = new App();
  build(new Chart(app, 'chart', { disableResourceNameHashes: true }));
  const yaml = app.synthYaml();
  return { yaml, objects: parseAllDocuments(yaml).map((d) => d.toJSON() as Record<string, unknown>) };
};

/**
 * Renders an environment in process: its platform part (`platform.yaml`), then one cdk8s App per
 * tenant (so each tenant is validated and written on its own), tenants in name order. Throws
 * `KitInputError` for a bad environment and cdk8s's validation error for a rendered object the
 * catalog refuses.
 */
export function synthEnvironment(input: unknown, source: string, opts: { instance?: string } = {}): SynthFile[] {
  const env = checkEnvironment(input, source);
  const layer = environmentLayer(env);
  const instance = opts.instance ?? 'market-indexer';
  const platform = render((chart) => {
    const environmentValues = deepMerge(TENANT_DEFAULTS, layer);
    new MarketIndexerPlatform(
      chart,
      'platform',
      { environment: env.environment, values: resolvePlatform(env), instance, version: environmentValues.image.tag, managedBy: 'cdk8s' },
      environmentValues,
    );
  });
  const platformNamespace = resolvePlatform(env).namespace;
  const tenants = Object.keys(env.tenants)
    .sort()
    .map((tenant) => {
      const out = render((chart) => {
        new MarketIndexerTenant(chart, 'tenant', { ...env.tenants[tenant], tenant, environment: env.environment, instance, platformNamespace, baseLayers: [layer] });
      });
      return { name: `${tenant}.yaml`, tenant, ...out };
    });
  return [{ name: 'platform.yaml', tenant: undefined, ...platform }, ...tenants];
}
