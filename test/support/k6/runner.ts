// The k6 test adapter's runner process (test support, not a k6 replacement): runs one bundled
// k6 script like `k6 run` would, for a small fixed number of VUs and iterations: setup() once,
// default() per VU and iteration, teardown(); then aggregates checks and metrics, evaluates the
// script's thresholds and prints a k6-like summary. Started by adapter.ts.
import path from 'node:path';
import { tsWorker, type CheckSample, type Sample } from './modules';
import type { VuJob, VuReport } from './vu';

export interface RunRequest {
  bundle: string;
  env: Record<string, string>;
  vus: number;
  iterations: number;
}

export interface ThresholdResult {
  metric: string;
  expression: string;
  ok: boolean;
  actual: number | undefined;
  /** Whether the metric measures time (its verdict depends on the machine, not on behaviour). */
  isTime: boolean;
}

export interface RunSummary {
  checks: { name: string; group: string; passes: number; fails: number }[];
  thresholds: ThresholdResult[];
  metrics: Record<string, { type: string; count: number; values: Record<string, number> }>;
  errors: string[];
  text: string;
}

function runVu(job: VuJob, sink: (s: (Sample | CheckSample)[]) => void, errors: string[]): Promise<{ options?: unknown; data?: unknown }> {
  return new Promise((resolve, reject) => {
    const w = tsWorker(path.join(__dirname, 'vu.ts'), { workerData: job });
    let result: { options?: unknown; data?: unknown } | undefined;
    w.on('message', (m: VuReport) => {
      if (m.kind === 'samples') sink(m.samples);
      else if (m.kind === 'error') errors.push(`${job.role}${job.role === 'default' ? ` (VU ${job.vu})` : ''}: ${m.message}`);
      else {
        result = { options: m.options, data: m.data };
        void w.terminate();
      }
    });
    w.on('error', reject);
    w.on('exit', () => (result ? resolve(result) : reject(new Error(`VU ${job.vu} (${job.role}) exited before it finished: ${errors.join('\n')}`))));
  });
}

const percentile = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]! : NaN);

/** The statistics a threshold expression can name, for one metric's samples. */
function stats(type: string, values: number[], seconds: number): Record<string, number> {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = values.reduce((a, b) => a + b, 0);
  switch (type) {
    case 'counter':
      return { count: sum, rate: sum / seconds };
    case 'rate':
      return { rate: values.length ? sum / values.length : 0, passes: sum, fails: values.length - sum };
    case 'gauge':
      return { value: values.at(-1) ?? 0, min: sorted[0] ?? 0, max: sorted.at(-1) ?? 0 };
    default:
      return { avg: values.length ? sum / values.length : NaN, min: sorted[0] ?? NaN, max: sorted.at(-1) ?? NaN, med: percentile(sorted, 50), count: values.length };
  }
}

const OPS: Record<string, (a: number, b: number) => boolean> = {
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '>': (a, b) => a > b,
  '>=': (a, b) => a >= b,
  '==': (a, b) => a === b,
  '===': (a, b) => a === b,
  '!=': (a, b) => a !== b,
};

/** `p(95)<300` on samples: k6's threshold expression grammar (aggregation, operator, number). */
function evaluate(expression: string, type: string, values: number[], seconds: number): { ok: boolean; actual: number | undefined } {
  const m = /^\s*(p\(\d+(?:\.\d+)?\)|[a-z]+)\s*(<=|>=|===|==|!=|<|>)\s*(-?[\d.]+)\s*$/.exec(expression);
  if (!m) throw new Error(`the k6 test adapter cannot read threshold ${JSON.stringify(expression)}`);
  const [, agg, op, bound] = m as unknown as [string, string, string, string];
  const p = /^p\(([\d.]+)\)$/.exec(agg);
  const actual = p ? percentile([...values].sort((a, b) => a - b), Number(p[1])) : stats(type, values, seconds)[agg];
  if (actual === undefined) throw new Error(`threshold ${JSON.stringify(expression)}: ${agg} does not apply to a ${type}`);
  return { ok: !Number.isNaN(actual) && OPS[op]!(actual, Number(bound)), actual: Number.isNaN(actual) ? undefined : actual };
}

export async function run(req: RunRequest): Promise<RunSummary> {
  const samples: Sample[] = [];
  const checks = new Map<string, { name: string; group: string; passes: number; fails: number }>();
  const errors: string[] = [];
  const sink = (batch: (Sample | CheckSample)[]) => {
    for (const s of batch) {
      if (s.kind === 'sample') samples.push(s);
      else {
        const key = `${s.group}\u0000${s.name}`;
        const c = checks.get(key) ?? { name: s.name, group: s.group, passes: 0, fails: 0 };
        if (s.ok) c.passes += 1;
        else c.fails += 1;
        checks.set(key, c);
      }
    }
  };
  const started = performance.now();
  const base = { bundle: req.bundle, env: req.env };
  const { options } = await runVu({ ...base, role: 'init', vu: 0 }, sink, errors);
  const { data } = await runVu({ ...base, role: 'setup', vu: 0 }, sink, errors);
  if (!errors.length) {
    await Promise.all(Array.from({ length: req.vus }, (_, i) => runVu({ ...base, role: 'default', vu: i + 1, iterations: req.iterations, data }, sink, errors)));
  }
  await runVu({ ...base, role: 'teardown', vu: 0, iterations: 1, data }, sink, errors);

  const seconds = (performance.now() - started) / 1000;
  const byMetric = new Map<string, Sample[]>();
  for (const s of samples) byMetric.set(s.metric, [...(byMetric.get(s.metric) ?? []), s]);
  const thresholds: ThresholdResult[] = [];
  const declared = ((options as { thresholds?: Record<string, (string | { threshold: string })[]> }).thresholds ?? {}) as Record<string, (string | { threshold: string })[]>;
  for (const [key, list] of Object.entries(declared)) {
    const m = /^([\w.]+)(?:\{(.*)\})?$/.exec(key);
    if (!m) throw new Error(`the k6 test adapter cannot read threshold metric ${key}`);
    const [, metric, filter] = m as unknown as [string, string, string | undefined];
    const want = Object.fromEntries((filter ? filter.split(',') : []).map((kv) => kv.split(':').map((x) => x.trim()) as [string, string]));
    const all = byMetric.get(metric!) ?? [];
    const matching = all.filter((s) => Object.entries(want).every(([k, v]) => s.tags[k] === v));
    // A metric no sample reached yet has the type its name implies among k6's built-ins.
    const type = all[0]?.type ?? (metric === 'checks' || metric.endsWith('_failed') ? 'rate' : metric.endsWith('_duration') ? 'trend' : 'counter');
    for (const t of list) {
      const expression = typeof t === 'string' ? t : t.threshold;
      const r = evaluate(expression, type, matching.map((s) => s.value), seconds);
      thresholds.push({ metric: key, expression, ...r, isTime: all[0]?.isTime ?? metric.endsWith('_duration') });
    }
  }
  const metrics: RunSummary['metrics'] = {};
  for (const [name, list] of [...byMetric].sort(([a], [b]) => a.localeCompare(b))) {
    const values = list.map((s) => s.value);
    metrics[name] = { type: list[0]!.type, count: list.length, values: stats(list[0]!.type, values, seconds) };
  }
  const summary: RunSummary = { checks: [...checks.values()], thresholds, metrics, errors, text: '' };
  summary.text = render(path.basename(req.bundle), req, summary);
  return summary;
}

function fmt(n: number | undefined, isTime: boolean): string {
  if (n === undefined || Number.isNaN(n)) return 'n/a';
  return isTime ? `${n.toFixed(2)}ms` : Number.isInteger(n) ? String(n) : n.toFixed(4);
}

/** A summary in the shape of k6's end-of-test summary (checks, thresholds, metrics). */
function render(script: string, req: RunRequest, s: RunSummary): string {
  const lines = [`k6 test adapter: ${script}, ${req.vus} VU(s) x ${req.iterations} iteration(s)`, ''];
  let group = '';
  for (const c of s.checks) {
    if (c.group !== group) {
      group = c.group;
      lines.push(`  █ ${group.replace(/^::/, '').replace(/::/g, ' / ')}`);
    }
    lines.push(`    ${c.fails ? '✗' : '✓'} ${c.name}${c.fails ? `\n      ↳  ${Math.round((100 * c.passes) / (c.passes + c.fails))}% — ✓ ${c.passes} / ✗ ${c.fails}` : ''}`);
  }
  lines.push('', '  THRESHOLDS', '');
  let metric = '';
  for (const t of s.thresholds) {
    if (t.metric !== metric) lines.push(`    ${(metric = t.metric)}`);
    lines.push(`    ${t.ok ? '✓' : '✗'} '${t.expression}' ${t.expression.split(/[<>=!]/)[0]}=${fmt(t.actual, t.isTime)}`);
  }
  lines.push('', '  METRICS', '');
  for (const [name, m] of Object.entries(s.metrics)) {
    const isTime = m.type === 'trend' && name !== 'checks';
    lines.push(`    ${name.padEnd(24, '.')}: ${Object.entries(m.values).map(([k, v]) => `${k}=${fmt(v, isTime && k !== 'count')}`).join(' ')}`);
  }
  for (const e of s.errors) lines.push('', `  ERROR ${e}`);
  return lines.join('\n');
}

// As a child process: one request on IPC, the summary back.
if (require.main === module) {
  process.once('message', (req: RunRequest) => {
    run(req).then(
      (summary) => {
        process.stdout.write(`${summary.text}\n`);
        process.send!({ ok: true, summary }, () => process.exit(0));
      },
      (err: unknown) => process.send!({ ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) }, () => process.exit(1)),
    );
  });
}
