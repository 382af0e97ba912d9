import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { beginsWith, valuesRows, valuesTable, withValuesTable, BEGIN, END } from '../../scripts/generated/chart-readme';

const ROOT = path.resolve(__dirname, '../..');
const problemsOf = (yaml: string) => {
  try {
    valuesRows(yaml);
  } catch (err) {
    return (err as Error).message.split('\n').slice(1);
  }
  return [];
};

describe("the chart README's parameters table (scripts/generated/chart-readme.ts)", () => {
  it("reads helm-docs' comments: dotted paths, types, defaults, @default, (type), documented maps, full paths", () => {
    const yaml = [
      '# -- Environment name, a label on every object.',
      'environment: default',
      'api:',
      '  # -- Replicas when autoscaling is off,',
      '  # continued on the next line.',
      '  replicas: 2',
      '  ingress:',
      "    # -- Annotations of both Ingresses; the timeouts, the CDN's allow-list and any snippet are the kit's to set or refuse.",
      '    annotations:',
      '      nginx.ingress.kubernetes.io/proxy-body-size: "1m"',
      'monitoring:',
      '  # -- API objectives of the multi-window, multi-burn-rate alerts.',
      '  slo:',
      '    # -- Share of API requests (probes and scrapes aside) that must not fail with 5xx.',
      '    availability: 0.999',
      '    latency: 0.99',
      '  # -- ServiceMonitors and the PrometheusRule (needs the prometheus-operator CRDs).',
      '  enabled: true',
      'networkPolicy:',
      '  # -- Address blocks allowed to post to the indexer\'s webhook route.',
      '  webhookSenders: []',
      '  egress:',
      '    database:',
      '      # -- TCP ports.',
      '      ports: [5432]',
      'source:',
      '  # webhookSecretRef: {name: market-indexer, key: WEBHOOK_SECRET}',
      '  # source.webhookSecretRef -- (object) Secret key holding WEBHOOK_SECRET.',
      '  # @default -- unset',
      '  # an ordinary comment after it',
      '',
      '  # -- (string) Market program address.',
      '  programId: null',
      '# -- Settings for this tenant\'s processes.',
      'settings: {}',
    ].join('\n');
    expect(valuesRows(yaml)).toEqual([
      { key: 'api.ingress.annotations', type: 'object', default: '`{"nginx.ingress.kubernetes.io/proxy-body-size":"1m"}`', description: "Annotations of both Ingresses; the timeouts, the CDN's allow-list and any snippet are the kit's to set or refuse." },
      { key: 'api.replicas', type: 'int', default: '`2`', description: 'Replicas when autoscaling is off, continued on the next line.' },
      { key: 'environment', type: 'string', default: '`"default"`', description: 'Environment name, a label on every object.' },
      { key: 'monitoring.enabled', type: 'bool', default: '`true`', description: 'ServiceMonitors and the PrometheusRule (needs the prometheus-operator CRDs).' },
      { key: 'monitoring.slo', type: 'object', default: '`{"availability":0.999,"latency":0.99}`', description: 'API objectives of the multi-window, multi-burn-rate alerts.' },
      // A key of a documented map is a row only with a description of its own (latency is not).
      { key: 'monitoring.slo.availability', type: 'float', default: '`0.999`', description: 'Share of API requests (probes and scrapes aside) that must not fail with 5xx.' },
      { key: 'networkPolicy.egress.database.ports', type: 'list', default: '`[5432]`', description: 'TCP ports.' },
      { key: 'networkPolicy.webhookSenders', type: 'list', default: '`[]`', description: "Address blocks allowed to post to the indexer's webhook route." },
      { key: 'settings', type: 'object', default: '`{}`', description: "Settings for this tenant's processes." },
      { key: 'source.programId', type: 'string', default: '`null`', description: 'Market program address.' },
      { key: 'source.webhookSecretRef', type: 'object', default: 'unset', description: 'Secret key holding WEBHOOK_SECRET.' },
    ]);
  });

  it('quotes a key holding a dot, as helm-docs does, and escapes pipes in the table', () => {
    const yaml = ['api:', '  ingress:', '    annotations:', '      # -- One | two.', '      a.b/c: "x"'].join('\n');
    expect(valuesRows(yaml)).toEqual([{ key: 'api.ingress.annotations."a.b/c"', type: 'string', default: '`"x"`', description: 'One | two.' }]);
    expect(valuesTable(yaml)).toContain('| api.ingress.annotations."a.b/c" | string | `"x"` | One \\| two. |');
  });

  it('refuses, naming each key: no description, one that does not begin with the schema\'s, and comments that document nothing', () => {
    const yaml = [
      'api:',
      '  # -- The number of API pods.',
      '  replicas: 2',
      '  autoscaling:',
      '    enabled: false',
      '# -- Orphan: a blank line follows.',
      '',
      'variant: v1',
      'source:',
      '  # source.rpcWsUrlSecretRef -- (object) no default given.',
      '  # source.rpcWsUrlSecretRf -- (object) a misspelt path.',
      '  # @default -- unset',
    ].join('\n');
    expect(problemsOf(yaml)).toEqual([
      'values.yaml line 6: a `# --` comment documents no key (one must follow it on the next line)',
      'values.yaml line 2: the description of api.replicas must begin with the schema\'s (cdk8s/lib/values.ts): "replicas when autoscaling is off"',
      'values.yaml: api.autoscaling.enabled has no `# --` description',
      'values.yaml: variant has no `# --` description',
      // Only comments under it: YAML reads `source` as null, a value without a description.
      'values.yaml: source has no `# --` description',
      'values.yaml line 10: source.rpcWsUrlSecretRef is not in values.yaml, so its description needs a (type) and a @default',
      'values.yaml line 11: source.rpcWsUrlSecretRf is not a field of the values schema (cdk8s/lib/values.ts)',
    ]);
  });

  it('compares with the schema up to the first letter\'s case and a final period, at a word boundary', () => {
    expect(beginsWith('Replicas when autoscaling is off: the API\'s.', 'replicas when autoscaling is off')).toBe(true);
    expect(beginsWith('TCP ports.', 'TCP ports.')).toBe(true);
    expect(beginsWith('TCP portsmouth', 'TCP ports')).toBe(false);
    expect(beginsWith('tcp Ports', 'TCP ports')).toBe(false);
    expect(beginsWith('Address  blocks\n (a NetworkPolicy ipBlock each) of Redis', 'address blocks (a NetworkPolicy ipBlock each)')).toBe(true);
  });

  it("documents every value of the chart's values.yaml, and the README holds exactly that table", () => {
    const yaml = readFileSync(path.join(ROOT, 'charts/market-indexer/values.yaml'), 'utf8');
    const rows = valuesRows(yaml);
    const keys = new Set(rows.map((r) => r.key));
    // Every leaf is a row, or under a documented map.
    const leaves = (v: unknown, p: string[]): string[] =>
      v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length ? Object.entries(v).flatMap(([k, x]) => leaves(x, [...p, k])) : [p.join('.')];
    for (const leaf of leaves(parse(yaml), [])) {
      const covered = leaf.split('.').some((_, i, parts) => keys.has(parts.slice(0, i + 1).join('.')));
      expect([leaf, covered]).toEqual([leaf, true]);
    }
    expect(rows.every((r) => r.description.length > 0)).toBe(true);
    // The optional references values.yaml leaves out are documented too.
    expect([...keys]).toEqual(expect.arrayContaining(['source.rpcWsUrlSecretRef', 'source.webhookSecretRef']));
    const readme = readFileSync(path.join(ROOT, 'charts/market-indexer/README.md'), 'utf8');
    expect(readme.slice(readme.indexOf(BEGIN), readme.indexOf(END) + END.length)).toBe(valuesTable(yaml));
    expect(() => withValuesTable('no markers', yaml)).toThrow(/lacks the markers/);
  });
});
