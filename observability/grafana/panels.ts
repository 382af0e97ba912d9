import * as common from '@grafana/grafana-foundation-sdk/common';
import {
  DashboardBuilder,
  DashboardCursorSync,
  DatasourceVariableBuilder,
  QueryVariableBuilder,
  ThresholdsConfigBuilder,
  ThresholdsMode,
  VariableRefresh,
  VariableSort,
  type Dashboard,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { DataqueryBuilder } from '@grafana/grafana-foundation-sdk/prometheus';
import { PanelBuilder } from '@grafana/grafana-foundation-sdk/timeseries';
import { METRIC_LABELS } from '../../core/telemetry/metrics';
import { re, type Matchers } from '../promql';

/** The Prometheus data source of every panel: a dashboard variable, so one JSON fits any Grafana. */
export const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };

/**
 * Labels the dashboards select on besides the processes' own: `environment` is an external label
 * of each environment's Prometheus (kube-prometheus-stack `prometheusSpec.externalLabels`, or a
 * Thanos/Mimir in front of several); where it is absent, the variable's "All" (`.*`) matches.
 */
export const EXTERNAL_LABELS = { environment: 'environment' } as const;
/** Labels Prometheus adds to every scraped series (the target's). */
export const TARGET_LABELS = ['instance', 'job'] as const;

/** The scope of every query: the chosen environment and tenants. */
export const SCOPE: Matchers = { [EXTERNAL_LABELS.environment]: re('$environment'), [METRIC_LABELS.tenant]: re('$tenant') };

export interface Query {
  expr: string;
  legend: string;
}

export const q = (expr: string, legend: string): Query => ({ expr, legend });

export interface TimeseriesOptions {
  unit?: string;
  /** Threshold lines (drawn dashed), the first step green. */
  thresholds?: { value: number; color: string }[];
  min?: number;
  max?: number;
  stack?: boolean;
  width?: number;
  description?: string;
}

/** A time-series panel of Prometheus queries. */
export function timeseries(title: string, queries: Query[], o: TimeseriesOptions = {}): PanelBuilder {
  const p = new PanelBuilder()
    .title(title)
    .datasource(DATASOURCE)
    .height(8)
    .span(o.width ?? 12)
    .unit(o.unit ?? 'short')
    .lineWidth(1)
    .fillOpacity(o.stack ? 30 : 5)
    .legend(new common.VizLegendOptionsBuilder().displayMode(common.LegendDisplayMode.Table).placement(common.LegendPlacement.Bottom).showLegend(true).calcs(['lastNotNull', 'max']));
  if (o.description) p.description(o.description);
  if (o.min !== undefined) p.min(o.min);
  if (o.max !== undefined) p.max(o.max);
  if (o.stack) p.stacking(new common.StackingConfigBuilder().mode(common.StackingMode.Normal));
  if (o.thresholds) {
    p.thresholds(
      new ThresholdsConfigBuilder().mode(ThresholdsMode.Absolute).steps([{ value: null as unknown as number, color: 'green' }, ...o.thresholds]),
    ).thresholdsStyle(new common.GraphThresholdsStyleConfigBuilder().mode(common.GraphThresholdsStyleMode.Dashed));
  }
  queries.forEach((x, i) => p.withTarget(new DataqueryBuilder().expr(x.expr).legendFormat(x.legend).refId(String.fromCharCode(65 + i))));
  return p;
}

/** The data source, environment and tenant variables (tenants of the chosen environment). */
export function withScopeVariables(d: DashboardBuilder, tenantMetric: string): DashboardBuilder {
  const env = EXTERNAL_LABELS.environment;
  const tenant = METRIC_LABELS.tenant;
  return d
    .withVariable(new DatasourceVariableBuilder('datasource').label('Data source').type('prometheus'))
    .withVariable(
      new QueryVariableBuilder(env)
        .label('Environment')
        .datasource(DATASOURCE)
        .query(`label_values(${tenantMetric}, ${env})`)
        .refresh(VariableRefresh.OnTimeRangeChanged)
        .sort(VariableSort.AlphabeticalAsc)
        .includeAll(true)
        .allValue('.*')
        .multi(true),
    )
    .withVariable(
      new QueryVariableBuilder(tenant)
        .label('Tenant')
        .datasource(DATASOURCE)
        .query(`label_values(${tenantMetric}{${env}=~"$${env}"}, ${tenant})`)
        .refresh(VariableRefresh.OnTimeRangeChanged)
        .sort(VariableSort.AlphabeticalAsc)
        .includeAll(true)
        .allValue('.*')
        .multi(true),
    );
}

export function dashboard(uid: string, title: string, description: string, tags: string[]): DashboardBuilder {
  return new DashboardBuilder(title)
    .uid(uid)
    .description(description)
    .tags(['market-indexer', ...tags])
    .time({ from: 'now-6h', to: 'now' })
    .refresh('30s')
    .timezone('browser')
    .tooltip(DashboardCursorSync.Crosshair)
    .editable();
}

/** Every PromQL expression of a dashboard's panels (the live-scrape test checks them). */
export function exprsOf(d: Dashboard): { panel: string; expr: string }[] {
  const out: { panel: string; expr: string }[] = [];
  const walk = (panels: unknown[]) => {
    for (const p of panels as { title?: string; targets?: { expr?: string }[]; panels?: unknown[] }[]) {
      for (const t of p.targets ?? []) if (t.expr) out.push({ panel: p.title ?? '', expr: t.expr });
      if (p.panels) walk(p.panels);
    }
  };
  walk((d.panels ?? []) as unknown[]);
  return out;
}

/** Queries of the template variables. */
export function variableQueriesOf(d: Dashboard): string[] {
  return (d.templating?.list ?? []).filter((v) => v.type === 'query').map((v) => String(typeof v.query === 'string' ? v.query : (v.query as { query?: string })?.query ?? ''));
}
