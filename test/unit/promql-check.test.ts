import { parseExposition, problemsOf, readsOf } from '../support/promql-check';

describe('PromQL reads (the live-scrape check)', () => {
  it('finds metric selectors, their matched labels and the grouping labels', () => {
    expect(
      readsOf('histogram_quantile(0.99, sum by (le, route) (rate(x_bucket{service="api",route!~"/health|/ready",le="0.25"}[5m]))) / ignoring(limit) max(y) and on(instance) z offset 5m'),
    ).toEqual({
      selectors: [
        { metric: 'x_bucket', labels: ['service', 'route', 'le'] },
        { metric: 'y', labels: [] },
        { metric: 'z', labels: [] },
      ],
      grouping: ['le', 'route', 'limit', 'instance'],
    });
    // Words inside label values are not metrics.
    expect(readsOf('a{b="rate(c) by d"}').selectors).toEqual([{ metric: 'a', labels: ['b'] }]);
  });

  it('reports a metric that is not exposed, a label it lacks, and a grouping label none has', () => {
    const e = parseExposition(
      ['# TYPE m counter', 'm{service="api",route="/x"} 1', '# TYPE h histogram', 'h_bucket{le="1",service="api"} 1', 'h_count{service="api"} 1', '# TYPE quiet counter'].join('\n'),
    );
    const opts = { extraLabels: ['instance'], declared: (f: string) => (f === 'quiet' ? ['reason'] : undefined), skip: (m: string) => m === 'up' };
    expect(problemsOf('sum by (route, instance) (rate(m{route="/x"}[5m]))', e, opts)).toEqual([]);
    expect(problemsOf('histogram_quantile(0.5, sum by (le) (rate(h_bucket{service="api"}[5m])))', e, opts)).toEqual([]);
    expect(problemsOf('rate(quiet{reason="x"}[5m]) + up{job="a"}', e, opts)).toEqual([]);
    expect(problemsOf('rate(mm[5m])', e, opts)).toEqual(['mm: not exposed']);
    expect(problemsOf('m{routez="x"}', e, opts)).toEqual(['m: no label routez']);
    expect(problemsOf('sum by (tier) (m)', e, opts)).toEqual(['grouping by tier, which none of its metrics has']);
    expect(problemsOf('quiet{tier="x"}', e, opts)).toEqual(['quiet: no label tier']);
  });
});
