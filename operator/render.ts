import { createHash } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { App, Chart } from 'cdk8s';
import { API_VERSION, KIND, type MarketIndexer } from '../cdk8s/lib/crd';
import { MarketIndexerTenant } from '../cdk8s/lib/tenant';
import { goJson } from '../cdk8s/lib/settings-env';
import type { TenantInput, TenantValues } from '../cdk8s/lib/values';
import { MANAGED_BY } from './informers';
import type { KubeObject } from './kube/client';

/** The annotation holding a hash of what the operator last applied to an object. */
export const APPLIED_HASH = 'marketindexer.dev/applied-hash';

export interface Rendered {
  values: TenantValues;
  namespace: string;
  objects: KubeObject[];
}

export const hashOf = (o: unknown) => createHash('sha256').update(goJson(o)).digest('hex').slice(0, 32);

/**
 * A MarketIndexer's objects, rendered in process by the kit's own construct: the environment's
 * values for every tenant (the operator's defaults file), then the resource's spec. Each object
 * is owned by the MarketIndexer (its controller), labelled as the operator's, and annotated with
 * a hash of itself, so a later reconcile can tell a change without sending it. Throws the kit's
 * KitInputError for a spec that cannot be deployed.
 */
export function renderTenant(mi: MarketIndexer, opts: { environment: string; defaults: TenantInput; platformNamespace?: string }): Rendered {
  const { tenant, deletionPolicy: _d, ...spec } = mi.spec;
  const app = new App();
  const chart = new Chart(app, 'tenant', { disableResourceNameHashes: true });
  const construct = new MarketIndexerTenant(chart, 'tenant', {
    ...(spec as TenantInput),
    tenant,
    environment: opts.environment,
    managedBy: MANAGED_BY,
    platformNamespace: opts.platformNamespace,
    baseLayers: [opts.defaults],
  });
  const owner = { apiVersion: API_VERSION, kind: KIND, name: mi.metadata.name, uid: mi.metadata.uid!, controller: true, blockOwnerDeletion: true };
  // The chart's objects as JSON (its dependencies resolved and every construct validated, as
  // `synthYaml` does), without the YAML text a manifest file needs: writing it and parsing it
  // back was two thirds of a render. The JSON copy leaves plain data (no undefined values), as
  // the YAML had.
  const objects = (JSON.parse(JSON.stringify(chart.toJson())) as KubeObject[]).map((o) => {
    o.metadata.ownerReferences = [owner];
    o.metadata.annotations = { ...o.metadata.annotations, [APPLIED_HASH]: hashOf(o) };
    return o;
  });
  return { values: construct.values, namespace: construct.context.namespace, objects };
}

/**
 * `renderTenant` cached by what a render depends on: the resource (its uid and generation: the
 * API server bumps the generation at each change of its spec) and the options (the environment,
 * its defaults and the platform namespace: fixed for a process, the image among the defaults).
 * A resync then re-renders nothing: rendering is the dearest step of a reconcile (about 40 ms a
 * tenant on an idle machine). One entry per MarketIndexer name, kept deflated (a render is
 * about 140 KiB of heap as objects, 38 KiB as JSON, a few KiB deflated; read back in well under
 * a millisecond); `forget` drops it when the resource goes.
 */
export function createRenderCache(renderer: typeof renderTenant = renderTenant) {
  const entries = new Map<string, { key: string; packed: Buffer }>();
  const render = (mi: MarketIndexer, opts: Parameters<typeof renderTenant>[1]): Rendered => {
    const key = `${mi.metadata.uid}/${mi.metadata.generation}/${hashOf(opts)}`;
    const hit = entries.get(mi.metadata.name);
    if (hit?.key === key) return JSON.parse(inflateRawSync(hit.packed).toString('utf8')) as Rendered;
    const rendered = renderer(mi, opts);
    entries.set(mi.metadata.name, { key, packed: deflateRawSync(JSON.stringify(rendered), { level: 1 }) });
    return rendered;
  };
  return {
    render,
    forget: (name: string) => void entries.delete(name),
    get size() {
      return entries.size;
    },
    /** Bytes the cache holds (its deflated renders). */
    get bytes() {
      let n = 0;
      for (const e of entries.values()) n += e.packed.length;
      return n;
    },
  };
}
