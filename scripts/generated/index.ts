import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { rulesTemplateJson, serviceFactsJson, valuesSchemaJson } from './chart';
import { withValuesTable } from './chart-readme';
import { marketIndexerCrdYaml } from './crd';
import { KIT_IMPORTS, kitImports } from './kit-imports';
import { withSettingsTable } from './configuration-doc';
import { withPermissionsTable } from './operator-doc';
import { withDecisionsIndex } from './decisions-index';
import { chartArchiveWithVersion, chartYamlWithVersion, imageTagWithVersion } from './release';
import { RELEASE_VERSION } from '../../core/release';
import { plainRulesYaml, plainRuleTestsYaml } from '../../observability/prometheus/plain';
import { DASHBOARDS, dashboardJson } from '../../observability/grafana/dashboards';
import { bundleK6Sync, K6_SHARED } from '../../loadtest/k6-build';
import { withAliasOperations } from './openapi-aliases';
import { clientIdlTs } from './client-idl';
import { withV1Operations } from './openapi-v1-operations';
import { v1Presentation } from '../../server/routes';
import { legacyPresentation } from '../../server/routes/legacy';
import { legacyV1Routes } from '../../server/routes/legacy/v1-routes';
import type { RouteDeps } from '../../server/routes/table';
import { LOAD_TEST_SCRIPTS } from '../../cdk8s/lib/values';
import { K6_CHART_DIR } from '../../cdk8s/lib/load-test';

export const ROOT = path.resolve(__dirname, '../..');

let bundles: Record<string, string> | undefined;
const bundle = (file: string) => (bundles ??= bundleK6Sync())[file]!;
let imports: Record<string, string> | undefined;
const imported = (file: string) => (imports ??= kitImports(ROOT))[file]!;

export interface GeneratedFile {
  /** Relative to the repository root. */
  path: string;
  /** What the file must hold, computed from its source of truth. */
  content: () => string;
  source: string;
  /**
   * Set when only this part of the file is generated and the rest is written by hand: such a
   * file is not marked generated in .gitattributes (every other one is).
   */
  part?: string;
}

const read = (p: string) => readFileSync(path.join(ROOT, p), 'utf8');

/**
 * Every committed file that is derived from a catalog in code. `npm run generate` writes them;
 * `test/unit/generated.test.ts` fails when one is stale.
 */
export const GENERATED_FILES: GeneratedFile[] = [
  {
    path: 'docs/configuration.md',
    source: 'core/config/settings.ts',
    part: 'the settings table',
    content: () => withSettingsTable(read('docs/configuration.md')),
  },
  {
    path: 'docs/decisions.md',
    source: 'docs/decisions.md (its entries: headings and status lines)',
    part: 'the index',
    content: () => withDecisionsIndex(read('docs/decisions.md')),
  },
  {
    path: 'docs/operator.md',
    source: 'cdk8s/lib/operator-permissions.ts',
    part: 'the permissions table',
    content: () => withPermissionsTable(read('docs/operator.md')),
  },
  {
    path: 'charts/market-indexer/values.schema.json',
    source: 'cdk8s/lib/values.ts',
    content: valuesSchemaJson,
  },
  // The release's version (D-310): package.json's, written where Helm and the docs need it literally.
  {
    path: 'charts/market-indexer/Chart.yaml',
    part: 'version and appVersion',
    source: 'package.json (its version)',
    content: () => chartYamlWithVersion(read('charts/market-indexer/Chart.yaml')),
  },
  {
    path: 'charts/market-indexer/values.yaml',
    part: 'image.tag',
    source: 'package.json (its version)',
    content: () => imageTagWithVersion(read('charts/market-indexer/values.yaml')),
  },
  {
    path: 'docs/deploy.md',
    part: "the chart archive's name",
    source: 'package.json (its version)',
    content: () => chartArchiveWithVersion(read('docs/deploy.md')),
  },
  // The chart's parameters table, from values.yaml's `# --` comments (helm-docs' convention), which must begin with the schema's descriptions.
  {
    path: 'charts/market-indexer/README.md',
    part: "the parameters table, the example's image tag and the archive's name",
    source: "charts/market-indexer/values.yaml (its `# --` comments), cdk8s/lib/values.ts (the descriptions they begin with), package.json (its version)",
    content: () => chartArchiveWithVersion(imageTagWithVersion(withValuesTable(read('charts/market-indexer/README.md'), read('charts/market-indexer/values.yaml')))),
  },
  {
    path: 'cdk8s/crds/marketindexer.yaml',
    source: 'cdk8s/lib/crd.ts (from cdk8s/lib/values.ts)',
    content: marketIndexerCrdYaml,
  },
  {
    path: 'charts/market-indexer/files/crds/marketindexer.yaml',
    source: 'cdk8s/lib/crd.ts (the chart installs the CRD with the operator)',
    content: marketIndexerCrdYaml,
  },
  {
    path: 'charts/market-indexer/files/service.json',
    source: 'core/constants.ts, core/config/settings.ts, core/telemetry/metrics.ts',
    content: serviceFactsJson,
  },
  {
    path: 'charts/market-indexer/files/rules.json',
    source: 'cdk8s/lib/alerts.ts, observability/prometheus/rules.ts',
    content: rulesTemplateJson,
  },
  {
    path: 'observability/prometheus/rules.yaml',
    source: 'observability/prometheus/rules.ts',
    content: plainRulesYaml,
  },
  {
    path: 'observability/prometheus/rules.test.yaml',
    source: 'observability/prometheus/rule-tests.ts',
    content: plainRuleTestsYaml,
  },
  // The deprecated alias operations of the OpenAPI documents (D-168), from the alias list and the route tables.
  {
    path: 'api-reference/openapi.yaml',
    part: 'the deprecated alias operations',
    source: 'server/http/aliases.ts, server/routes (the route table), the canonical operations',
    content: () => withAliasOperations(read('api-reference/openapi.yaml'), v1Presentation, { requireNamedSchemas: true }),
  },
  {
    path: 'api-reference/openapi-legacy.yaml',
    part: 'the deprecated alias operations and the v1 operations it serves too',
    source: 'server/http/aliases.ts, server/routes/legacy (its route table), the canonical operations; the v1 operations it serves too from openapi.yaml (D-177)',
    content: () =>
      withAliasOperations(
        withV1Operations(read('api-reference/openapi-legacy.yaml'), read('api-reference/openapi.yaml'), legacyPresentation.prefix, legacyV1Routes({ chainId: 'devnet' } as RouteDeps)),
        legacyPresentation,
      ),
  },
  // The SDK's types (D-523): openapi-typescript's reading of the document, after its aliases above.
  {
    path: 'client/src/openapi.ts',
    source: 'api-reference/openapi.yaml (openapi-typescript)',
    content: () => execFileSync(path.join(ROOT, 'node_modules/.bin/openapi-typescript'), [path.join(ROOT, 'api-reference/openapi.yaml')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }),
  },
  // The program facts the SDK's transaction check needs (D-532): the service's IDL and routes.
  {
    path: 'client/src/check/idl.ts',
    source: 'core/events/idl.json, server/routes/tx.ts, core/domain',
    content: clientIdlTs,
  },
  // The SDK is released with the service: one version (D-523).
  {
    path: 'client/package.json',
    part: 'its version',
    source: 'package.json (its version)',
    content: () => read('client/package.json').replace(/^(  "version": )"[^"]*"/m, `$1"${RELEASE_VERSION}"`),
  },
  // Dashboards: as plain JSON for import, and inside the chart (it can only read its own files).
  ...DASHBOARDS.flatMap((d) =>
    ['observability/grafana/dashboards', 'charts/market-indexer/files/dashboards'].map((dir) => ({
      path: `${dir}/${d.slug}.json`,
      source: 'observability/grafana/dashboards.ts',
      content: () => dashboardJson(d),
    })),
  ),
  // The kit's typed kinds: `cdk8s import` of the CRDs, third-party ones trimmed to what the kit renders (D-207); `npm run kit:import` writes only these.
  ...KIT_IMPORTS.map((imp) => ({ path: imp.output, source: imp.source, content: () => imported(imp.output) })),
  // The k6 scripts, bundled, inside the chart (its load-test ConfigMap; the kit reads the same
  // files): the shared module (helpers and tweetnacl) once, each script importing it (D-206).
  ...[K6_SHARED, ...LOAD_TEST_SCRIPTS].map((name) => ({
    path: `${K6_CHART_DIR}/${name}.js`,
    source: name === K6_SHARED ? 'loadtest/k6/lib.ts, loadtest/k6/lib/, tweetnacl' : `loadtest/k6/${name}.ts`,
    content: () => bundle(`${name}.js`),
  })),
];
