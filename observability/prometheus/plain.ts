import { stringify } from 'yaml';
import { NAMES } from '../../core/names';
import { eq } from '../promql';
import { plainCases, promtoolTests } from './rule-tests';
import { asThresholds, RULE_DEFAULTS, ruleGroups, type RuleGroup } from './rules';

/**
 * The plain rules file, for a Prometheus without the operator: every tenant at once, the
 * default thresholds, scrape jobs named like the kit's Services (market-indexer-api,
 * market-indexer-indexer). Generated into observability/prometheus/rules.yaml with its unit
 * tests beside it (rules.test.yaml) by `npm run generate`.
 */
export const PLAIN_JOBS = { api: NAMES.api, indexer: NAMES.indexer } as const;

export const plainRuleGroups = (): RuleGroup[] =>
  ruleGroups({ targets: { api: { job: eq(PLAIN_JOBS.api) }, indexer: { job: eq(PLAIN_JOBS.indexer) } } }, asThresholds(RULE_DEFAULTS));

const HEADER = (what: string) => `# ${what}\n# Generated from observability/prometheus/ by \`npm run generate\`; do not edit.\n`;

export const plainRulesYaml = () => HEADER('market-indexer alert and recording rules, every tenant, default thresholds (docs/observability.md).') + stringify({ groups: plainRuleGroups() }, { lineWidth: 0 });

export const plainRuleTestsYaml = () =>
  HEADER('Unit tests of rules.yaml: promtool test rules observability/prometheus/rules.test.yaml') +
  stringify(promtoolTests('rules.yaml', plainRuleGroups(), plainCases(PLAIN_JOBS)), { lineWidth: 0 });
