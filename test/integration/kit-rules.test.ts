import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { ENVIRONMENTS } from '../../cdk8s/environments';
import { synthEnvironment } from '../../cdk8s/synth';
import { METRIC_SERVICES } from '../../core/telemetry/metrics';
import { plainCases, promtoolTest, promtoolTests, type Case } from '../../observability/prometheus/rule-tests';
import { PLAIN_JOBS, plainRuleGroups, plainRulesYaml } from '../../observability/prometheus/plain';
import { ALERTS, alertsOf, RUNBOOK_BASE_URL, type RuleGroup } from '../../observability/prometheus/rules';
import { ROOT, type Manifest } from '../support/kit';

// The real promtool (Debian's prometheus package; scripts/ensure-services.sh installs it)
// checks every rule's PromQL and runs the rules on synthetic series: each alert must fire when
// it should and stay quiet when it should not.
jest.setTimeout(180_000);
const run = promisify(execFile);
const promtool = async (args: string[]) => {
  const res = await run('promtool', args, { maxBuffer: 16 << 20 }).catch((err: { stdout: string; stderr: string }) => err);
  return `${res.stdout}${res.stderr}`;
};
const dir = mkdtempSync(path.join(os.tmpdir(), 'kit-rules-'));

const tenantRules = (env: 'staging' | 'prod', tenant: string): RuleGroup[] => {
  const objects = synthEnvironment(ENVIRONMENTS[env]!, env).flatMap((f) => f.objects as Manifest[]);
  const rule = objects.find((o) => o.kind === 'PrometheusRule' && o.metadata.namespace === `mi-${tenant}`) as unknown as { spec: { groups: RuleGroup[] } };
  return rule.spec.groups;
};

describe('alert and recording rules (promtool)', () => {
  const plainFile = path.join(dir, 'rules.yaml');
  writeFileSync(plainFile, plainRulesYaml());
  const ruleCount = plainRuleGroups().reduce((n, g) => n + g.rules.length, 0);

  it('are valid Prometheus rules: the plain file and every tenant of staging and prod', async () => {
    expect(await promtool(['check', 'rules', plainFile])).toContain(`SUCCESS: ${ruleCount} rules found`);
    for (const [env, tenants] of [['staging', ['alpha', 'beta']], ['prod', ['alpha', 'beta', 'gamma']]] as const) {
      for (const tenant of tenants) {
        const file = path.join(dir, `${env}-${tenant}.yaml`);
        writeFileSync(file, stringify({ groups: tenantRules(env, tenant) }));
        expect(await promtool(['check', 'rules', file])).toContain(`SUCCESS: ${ruleCount} rules found`);
      }
    }
  });

  it('each fire when they should and stay quiet when they should not (promtool test rules)', async () => {
    const all = promtoolTests(plainFile, plainRuleGroups(), plainCases(PLAIN_JOBS));
    // Four day-long SLO cases take nearly all of promtool's 30 s (1,500 evaluations each), and
    // one promtool runs on one core: every other case in each of two files, run side by side.
    const outs = await Promise.all(
      [0, 1].map((half) => {
        const file = path.join(dir, `rules-${half}.test.yaml`);
        writeFileSync(file, stringify({ ...all, tests: all.tests.filter((_, i) => i % 2 === half) }));
        return promtool(['test', 'rules', file]);
      }),
    );
    for (const out of outs) {
      expect(out).toContain('SUCCESS');
      expect(out).not.toContain('FAILED');
    }
  });

  it('every alert has a case where it fires and one where it stays quiet', () => {
    const checks = plainCases(PLAIN_JOBS).flatMap((c) => c.checks);
    for (const alert of ALERTS) {
      expect([alert, checks.some((c) => c.alert === alert && c.expect.length > 0)]).toEqual([alert, true]);
      // Quiet: an empty expectation, or a case in which another tenant's series do not fire it.
      const quiet = checks.some((c) => c.alert === alert && c.expect.length === 0);
      expect([alert, quiet]).toEqual([alert, true]);
    }
    expect(alertsOf(plainRuleGroups()).map((a) => a.alert).sort()).toEqual([...ALERTS].sort());
  });

  it('the unit tests can fail: a rule with a wrong threshold is caught', async () => {
    const broken = plainRulesYaml().replace(/> 100\n/, '> 400\n');
    expect(broken).not.toBe(plainRulesYaml());
    const brokenFile = path.join(dir, 'broken.yaml');
    writeFileSync(brokenFile, broken);
    const cases = plainCases(PLAIN_JOBS).filter((c) => c.name.startsWith('slot lag'));
    const file = path.join(dir, 'broken.test.yaml');
    writeFileSync(file, stringify({ rule_files: [brokenFile], evaluation_interval: '1m', tests: cases.map((c) => promtoolTest(c, plainRuleGroups())) }));
    expect(await promtool(['test', 'rules', file])).toContain('FAILED');
  });

  it("the kit's rules fire for their own tenant only, at the thresholds its environment sets", async () => {
    // prod: critical at 500 (cdk8s/environments/prod.ts); alpha's rules must ignore beta.
    const rulesFile = path.join(dir, 'prod-alpha-rules.yaml');
    const groups = tenantRules('prod', 'alpha');
    writeFileSync(rulesFile, stringify({ groups }));
    const indexer = (tenant: string) => ({ service: METRIC_SERVICES.indexer, tenant, instance: `${tenant}-0` });
    const up = (job: string, tenant: string) => ({ job, namespace: `mi-${tenant}`, instance: `${tenant}-${job}` });
    const c: Case = {
      name: 'prod alpha',
      series: [
        { metric: 'indexerSlotLag', labels: indexer('alpha'), values: '0 0 300x9 900x10' },
        { metric: 'indexerIsWriter', labels: indexer('alpha'), values: '1x21' },
        { metric: 'indexerSlotLag', labels: indexer('beta'), values: '5000x21' },
        { metric: 'indexerIsWriter', labels: indexer('beta'), values: '0x21' },
        { metric: 'up', labels: up('market-indexer-api', 'alpha'), values: '1x21' },
        { metric: 'up', labels: up('market-indexer-indexer', 'alpha'), values: '1x21' },
        // beta's API is down and its indexer not scraped: none of alpha's business.
        { metric: 'up', labels: up('market-indexer-api', 'beta'), values: '0x21' },
      ],
      checks: [
        { at: '5m', alert: 'MarketIndexerSlotLagHigh', expect: [] },
        { at: '8m', alert: 'MarketIndexerSlotLagHigh', expect: [{ labels: { tenant: 'alpha' }, value: 300 }] },
        { at: '11m', alert: 'MarketIndexerSlotLagCritical', expect: [] },
        { at: '18m', alert: 'MarketIndexerSlotLagCritical', expect: [{ labels: { tenant: 'alpha' }, value: 900 }] },
        { at: '18m', alert: 'MarketIndexerNoWriter', expect: [] },
        { at: '18m', alert: 'MarketIndexerTargetDown', expect: [] },
        { at: '18m', alert: 'MarketIndexerTargetAbsent', expect: [] },
      ],
    };
    const gone: Case = {
      name: 'alpha not scraped at all',
      series: [{ metric: 'indexerSlotLag', labels: indexer('beta'), values: '1x20' }],
      checks: [
        { at: '5m', alert: 'MarketIndexerNoWriter', expect: [{ labels: { tenant: 'alpha', service: 'indexer' }, value: 1 }] },
        {
          at: '15m',
          alert: 'MarketIndexerTargetAbsent',
          expect: [
            { labels: { tenant: 'alpha', namespace: 'mi-alpha', job: 'market-indexer-api' }, value: 1 },
            { labels: { tenant: 'alpha', namespace: 'mi-alpha', job: 'market-indexer-indexer' }, value: 1 },
          ],
        },
      ],
    };
    const file = path.join(dir, 'prod-alpha.test.yaml');
    writeFileSync(file, stringify({ rule_files: [rulesFile], evaluation_interval: '1m', tests: [c, gone].map((x) => promtoolTest(x, groups)) }));
    const out = await promtool(['test', 'rules', file]);
    expect(out).toContain('SUCCESS');
    expect(out).not.toContain('FAILED');
  });

  it('every alert names its runbook, which says what it means, how to confirm and what to do', () => {
    for (const a of alertsOf(plainRuleGroups())) {
      expect(a.annotations.runbook_url).toBe(`${RUNBOOK_BASE_URL}/${a.alert}.md`);
      expect(Object.keys(a.annotations).sort()).toEqual(['description', 'runbook_url', 'summary']);
      expect(['warning', 'critical']).toContain(a.labels.severity);
      const file = path.join(ROOT, 'docs/runbooks', `${a.alert}.md`);
      expect([a.alert, existsSync(file)]).toEqual([a.alert, true]);
      const text = readFileSync(file, 'utf8');
      expect(text.startsWith(`# ${a.alert}\n`)).toBe(true);
      for (const section of ['## What it means', '## How to confirm', '## What to do']) expect([a.alert, text.includes(section)]).toEqual([a.alert, true]);
    }
  });
});
