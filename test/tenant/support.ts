import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { K8sObject } from '../../local/tenant/manifests';

/** What the suite asks its Prometheus: an instant query's series. */
export interface Series {
  metric: Record<string, string>;
  value: [number, string];
}

export async function query(prometheus: string, expr: string): Promise<Series[]> {
  const res = await fetch(`${prometheus}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await res.json()) as { status: string; error?: string; data?: { result: Series[] } };
  if (body.status !== 'success') throw new Error(`query failed: ${body.error} (${expr})`);
  return body.data!.result;
}

export interface ActiveAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing';
  value: string;
}

export async function alerts(prometheus: string): Promise<ActiveAlert[]> {
  const body = (await (await fetch(`${prometheus}/api/v1/alerts`)).json()) as { data: { alerts: ActiveAlert[] } };
  return body.data.alerts;
}

/** Polls until `check` returns a value (every 500 ms), up to `ms`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined | false>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`gave up after ${ms / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Every panel query of a dashboard ConfigMap the platform renders, with its panel's title. */
export function dashboardQueries(platform: K8sObject[]): { dashboard: string; panel: string; expr: string }[] {
  return platform
    .filter((o): o is K8sObject & { data: Record<string, string> } => o.kind === 'ConfigMap' && o.metadata.name.startsWith('market-indexer-dashboard-'))
    .flatMap((cm) =>
      Object.values(cm.data).flatMap((json) => {
        const d = JSON.parse(json) as { title: string; panels: { title: string; targets?: { expr?: string }[]; panels?: { title: string; targets?: { expr?: string }[] }[] }[] };
        const panels = d.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
        return panels.flatMap((p) => (p.targets ?? []).filter((t) => t.expr).map((t) => ({ dashboard: d.title, panel: p.title, expr: t.expr! })));
      }),
    );
}

/**
 * Grafana's variables as a user viewing this tenant sets them: its environment and tenant, and
 * the intervals Grafana derives from a 5 s scrape over the last minutes.
 */
export function withVariables(expr: string, v: { environment: string; tenant: string }): string {
  return expr
    .replace(/\$__rate_interval/g, '1m')
    .replace(/\$__interval/g, '15s')
    .replace(/\$\{?environment\}?/g, v.environment)
    .replace(/\$\{?tenant\}?/g, v.tenant);
}

export const runbookExists = (url: string) => {
  const m = /\/docs\/runbooks\/([A-Za-z]+\.md)$/.exec(url);
  if (!m) return false;
  try {
    readFileSync(path.resolve(__dirname, '../../docs/runbooks', m[1]!));
    return true;
  } catch {
    return false;
  }
};
