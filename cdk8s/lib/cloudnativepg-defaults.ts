import type { TenantValues } from './values';

/**
 * A tenant's CloudNativePG Cluster unless its environment says otherwise (D-500, D-502): off
 * (bring your own PostgreSQL), one instance, asynchronous. An environment states its own
 * instances (the shipped prod: three, synchronous).
 */
export const CLOUDNATIVEPG_DEFAULTS: TenantValues['database']['cloudnativepg'] = {
  enabled: false,
  instances: 1,
  // PostgreSQL 15, the major version the project's migrations and tests run on.
  imageName: 'ghcr.io/cloudnative-pg/postgresql:15.14-system-trixie',
  storage: { size: '10Gi', storageClass: '' },
  // One standby acknowledges each commit; `required` never loses one (D-503).
  synchronous: { enabled: false, number: 1, dataDurability: 'required' },
  // The indexer bench measured PostgreSQL at 23–28 µs of CPU per indexed event against the
  // indexer's 28–42 (docs/benchmarks.md): about as much CPU as the writer, whose idle use is
  // 33m (tenant-cost), so the same 100m floor; the limit lets a backfill at full speed (about
  // 0.6 core of PostgreSQL) run unthrottled. Memory: shared_buffers 128MB (CloudNativePG's
  // default) plus connections and the page cache's working set (D-501).
  resources: { requests: { cpu: '100m', memory: '512Mi' }, limits: { cpu: '2', memory: '1Gi' } },
  // Where CloudNativePG's own manifest and Helm chart install it.
  operatorNamespace: 'cnpg-system',
  apiServer: { ipBlocks: [{ cidr: '0.0.0.0/0' }], ports: [443, 6443] },
};
