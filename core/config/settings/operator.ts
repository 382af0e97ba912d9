/**
 * The MarketIndexer operator's settings (operator/, docs/operator.md): its API server, port,
 * environment, defaults file, leader election, resync and status polling.
 */

import { int, text, type SettingSpec } from './kinds';

export const OPERATOR_SETTINGS = {
  KUBECONFIG: text(/^[^\0]+$/, 'path', {
    defaultText: 'in a pod: its service account; elsewhere `~/.kube/config`',
    readBy: ['operator'],
    maxLength: 4096,
    description: 'kubeconfig of the API server the operator works against (`--kubeconfig` overrides it)',
  }),
  OPERATOR_PORT: int({ min: 0, max: 65535, default: 3002, readBy: ['operator'], description: 'operator port (`/metrics`, `/healthz`, `/readyz`)' }),
  OPERATOR_ENVIRONMENT: text(/^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$/, 'environment name', {
    default: 'default',
    readBy: ['operator'],
    description: 'environment label (`marketindexer.dev/environment`) of the tenants the operator renders',
  }),
  OPERATOR_DEFAULTS_FILE: text(/^[^\0]+$/, 'path', {
    readBy: ['operator'],
    maxLength: 4096,
    description:
      'YAML or JSON file of the environment\'s values for every tenant (the shape of an environment file without `tenants`) and, under `policy`, what a MarketIndexer may ask beyond them (`platform.operator.policy`, D-200); the kit mounts it from a ConfigMap',
  }),
  OPERATOR_NAMESPACE: text(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'namespace', {
    default: 'market-indexer-system',
    readBy: ['operator'],
    maxLength: 63,
    description: 'namespace of the operator\'s leader-election Lease',
  }),
  OPERATOR_LEASE_SECONDS: int({
    min: 3,
    max: 300,
    default: 15,
    readBy: ['operator'],
    description: 'leader-election lease: a standby takes over this long after the leader last renewed (renewed every third of it)',
  }),
  OPERATOR_RESYNC_SECONDS: int({
    min: 1,
    max: 86_400,
    default: 36_000,
    readBy: ['operator'],
    description: 'every tenant is reconciled at least this often, changed or not (an idle reconcile writes nothing); long, as watches are the source of change (D-322)',
  }),
  OPERATOR_STATUS_SECONDS: int({
    min: 1,
    max: 3600,
    default: 30,
    readBy: ['operator'],
    description: 'how often the operator reads each tenant indexer\'s `/status` into the MarketIndexer status',
  }),
  OPERATOR_LAG_THRESHOLD: int({
    min: 1,
    max: 10_000_000,
    default: 100,
    readBy: ['operator'],
    description: 'slot lag above which a MarketIndexer\'s `IndexerLagging` condition is True (100: where `/status` stops calling the indexer synced)',
  }),
  OPERATOR_STATUS_URL: text(/^https?:\/\/\S+$/, 'URL template with {namespace}', {
    default: 'http://market-indexer-indexer.{namespace}.svc:3001/status',
    readBy: ['operator'],
    maxLength: 2048,
    description: 'where a tenant indexer\'s `/status` is read; `{namespace}` and `{tenant}` are replaced',
  }),
} as const satisfies Record<string, SettingSpec<any>>;
