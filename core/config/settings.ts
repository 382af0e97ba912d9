import Joi from 'joi';
import { parseRedisUrl, REDIS_URL_SCHEMES } from '../redis/url';

/**
 * The settings catalog: every environment variable the processes read, declared once.
 *
 * The env schema (`envSchema`), the `Config` mapping (`./index.ts`), the table in
 * `docs/configuration.md`, the deployment kit's ConfigMap/Secret wiring and the Helm chart's
 * `values.schema.json` for `settings` all derive from this list; a container env var that is
 * not in it fails `npm run synth`.
 *
 * Each kind constructor (`int`, `text`, …) carries three views of one rule: the Joi rule the
 * process validates with, the JSON Schema a values file is validated with, and the sentence
 * the documentation shows. An empty variable counts as unset.
 */

/** The API's presentations (D-155): the spec's contract and the appendix's. A tenant serves one. */
export const API_VARIANTS = ['v1', 'legacy'] as const;
export type ApiVariant = (typeof API_VARIANTS)[number];

/**
 * The programs that read settings. `migrate` is `npm run migrate` (the kit's init container).
 * Single-process mode (`npm start`) runs the API and the indexer in one process and reads what
 * they read; `embedded` marks what only it reads. `operator` is the MarketIndexer controller,
 * `chain` the simulated chain's node (`npm run chain`, a simulator-source tenant's chain).
 */
export type ProcessName = 'api' | 'indexer' | 'embedded' | 'migrate' | 'operator' | 'chain';

/** Where the indexer reads transactions from (`--source`, a tenant's `source.type`). */
export const SOURCE_TYPES = ['rpc', 'webhook', 'simulator'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

/**
 * Who cannot do its job on a setting's default, so a deployment must supply it: a process
 * whatever its source (`api`, `migrate`, `chain`), or the indexer with one source
 * (`indexer:rpc`). In production (`NODE_ENV=production`) such a process refuses to start
 * without it, and the kit's synth refuses a tenant whose rendered environment lacks it (D-210).
 */
export type Requirement = 'api' | 'migrate' | 'chain' | `indexer:${SourceType}`;

export type JsonSchema = Record<string, unknown>;

export interface SettingSpec<T = unknown> {
  /** Validates and converts the raw string; has no default of its own. */
  rule: Joi.Schema;
  /** JSON Schema of the value as written in a values or environment file (not as a string). */
  jsonSchema: JsonSchema;
  /** The rule in words, for docs/configuration.md. */
  ruleText: string;
  default?: T;
  /** Shown instead of `default` where the effective default is derived (e.g. from another setting). */
  defaultText?: string;
  readBy: readonly ProcessName[];
  /** Who must be given it explicitly (see `Requirement`); none by default. */
  requiredBy: readonly Requirement[];
  /** Never written into a ConfigMap or a literal env value: only a Secret reference. */
  secret: boolean;
  description: string;
  /** Phantom: the value type after validation. */
  readonly __type?: T;
}

type Common<T> = {
  readBy: readonly ProcessName[];
  requiredBy?: readonly Requirement[];
  description: string;
  secret?: boolean;
  default?: T;
  defaultText?: string;
  ruleText?: string;
};

/** Keeps, in the type, whether a setting has a default (then its validated value is never undefined). */
type WithDefault<C> = C extends { default: infer D } ? { default: D } : unknown;

function spec<T, const C extends Common<T> = Common<T>>(rule: Joi.Schema, jsonSchema: JsonSchema, ruleText: string, c: C): SettingSpec<T> & WithDefault<C> {
  return {
    rule: rule.empty(''),
    jsonSchema,
    ruleText: c.ruleText ?? ruleText,
    default: c.default,
    defaultText: c.defaultText,
    readBy: c.readBy,
    requiredBy: c.requiredBy ?? [],
    secret: c.secret ?? false,
    description: c.description,
  } as SettingSpec<T> & WithDefault<C>;
}

const range = (min: number | undefined, max: number | undefined): string =>
  min !== undefined && max !== undefined ? `${min}–${max}` : min !== undefined ? `≥ ${min}` : max !== undefined ? `≤ ${max}` : '';

function int<const C extends Common<number> & { min?: number; max?: number }>(c: C) {
  let rule = Joi.number().integer();
  if (c.min !== undefined) rule = rule.min(c.min);
  if (c.max !== undefined) rule = rule.max(c.max);
  return spec<number, C>(rule, { type: 'integer', minimum: c.min, maximum: c.max }, `integer ${range(c.min, c.max)}`.trim(), c);
}

function oneOf<const V extends string, const C extends Common<V> = Common<V>>(values: readonly V[], c: C) {
  return spec<V, C>(Joi.string().valid(...values), { type: 'string', enum: values }, values.map((v) => `\`${v}\``).join(', '), c);
}

function flag<const C extends Common<boolean>>(c: C) {
  return spec<boolean, C>(Joi.boolean().truthy('true', '1').falsy('false', '0'), { type: 'boolean' }, '`true`/`false`', c);
}

function text<const C extends Common<string> & { maxLength?: number }>(pattern: RegExp, name: string, c: C) {
  let rule = Joi.string().pattern(pattern, name);
  if (c.maxLength) rule = rule.max(c.maxLength);
  return spec<string, C>(rule, { type: 'string', pattern: pattern.source, maxLength: c.maxLength }, name, c);
}

function uri<const C extends Common<string>>(schemes: readonly string[], c: C) {
  return spec<string, C>(
    Joi.string().uri({ scheme: [...schemes] }),
    { type: 'string', pattern: `^(${schemes.join('|')})://` },
    schemes.map((s) => `\`${s}://\``).join(' or ') + ' URI',
    c,
  );
}

/** `REDIS_URL`: one Redis or a Redis Cluster's seed nodes (core/redis/url.ts). */
function redisUri<const C extends Common<string>>(c: C) {
  const rule = Joi.string().custom((value: string, helpers) => {
    const target = parseRedisUrl(value);
    return 'error' in target ? helpers.message({ custom: `{{#label}} ${target.error}` }) : value;
  });
  return spec<string, C>(
    rule,
    { type: 'string', pattern: `^(${REDIS_URL_SCHEMES.map((s) => s.replace('+', '\\+')).join('|')})://` },
    REDIS_URL_SCHEMES.map((s) => `\`${s}://\``).join(' or ') + ' URI',
    c,
  );
}

function secretText<const C extends Common<string>>(minLength: number, c: C) {
  return spec<string, C>(Joi.string().min(minLength), { type: 'string', minLength }, `at least ${minLength} characters`, { ...c, secret: true });
}

export const TENANT_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;
const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const COUNTRY_LIST = /^[A-Z]{2}(,[A-Z]{2})*$/;
const HOST_LIST = /^[A-Za-z0-9.-]+(:[0-9]+)?(,[A-Za-z0-9.-]+(:[0-9]+)?)*$/;

/**
 * Rows the indexer's row cache holds (D-62). Measured at 700–2,000 bytes of heap per cached
 * row or wallet, so about 70–200 MB when full; the working set of the simulated chain of
 * `npm run bench -- indexer` is a few thousand.
 */
export const DEFAULT_INDEXER_CACHE_ROWS = 100_000;
export const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 1_000;

const BOTH = ['api', 'indexer'] as const;
const EVERY_PROCESS = ['api', 'indexer', 'operator', 'chain'] as const;
const INDEXER_SOURCES = SOURCE_TYPES.map((s) => `indexer:${s}` as const);

export const SETTINGS = {
  NODE_ENV: oneOf(['development', 'production', 'test'] as const, {
    default: 'development',
    readBy: EVERY_PROCESS,
    description: '`production` refuses embedded or in-memory stores unless explicitly allowed',
  }),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, {
    default: 'info',
    readBy: EVERY_PROCESS,
    ruleText: '`fatal` … `trace`, `silent`',
    description: 'pino log level; logs are JSON lines on stdout',
  }),
  TENANT_ID: text(TENANT_PATTERN, 'lowercase DNS label of at most 40 characters', {
    default: 'default',
    readBy: [...BOTH, 'chain'],
    description: 'tenant; every Redis key and channel lives under `t:{TENANT_ID}:`',
  }),
  API_VARIANT: oneOf(API_VARIANTS, {
    default: 'v1',
    readBy: ['api'],
    description: "the API's shape: `v1` (the spec's contract) or `legacy` (the spec appendix's envelope, cursor pagination and plans by API key, D-155); a tenant serves one (the kit sets it from the tenant's `variant`, D-159)",
  }),
  CHAIN_ID: text(/^[a-z0-9][a-z0-9:_-]{0,63}$/, 'chain identifier', {
    default: 'solana-mainnet',
    readBy: ['api'],
    ruleText: 'lowercase identifier',
    description: 'the single supported chain identifier: `chain` of auth messages, `?chain=` of `/markets`',
  }),
  PROGRAM_ID: text(BASE58_ADDRESS, 'base58 address', {
    default: 'HnWM49tJ92G7gTfFSkwnoyC7yMaJNatS9d7Vn1v5BEWy',
    readBy: [...BOTH, 'chain'],
    description: 'the market program whose events are indexed (the address in `core/events/idl.json`)',
  }),

  DATABASE_URL: uri(['postgres', 'postgresql'], {
    readBy: ['api', 'indexer', 'migrate'],
    requiredBy: ['api', 'migrate', ...INDEXER_SOURCES],
    secret: true,
    description: 'PostgreSQL of the tenant; unset means embedded PostgreSQL (single-process mode)',
  }),
  DATABASE_POOL_MAX: int({ min: 1, max: 200, default: 10, readBy: BOTH, description: 'connections per process' }),
  REDIS_URL: redisUri({
    readBy: BOTH,
    // ALLOW_EMBEDDED_STORES waives it for a process, deliberately (D-54); the kit never does.
    requiredBy: ['api', ...INDEXER_SOURCES],
    secret: true,
    description:
      'Redis shared by the API replicas and the indexer: `redis://[user:password@]host:port[/db]` for one Redis, `redis+cluster://[user:password@]host:port,host:port,…` for a Redis Cluster (seed nodes; D-92), `rediss` for TLS; unset means in-memory nonce store, rate limiter and bus (one process only)',
  }),
  REDIS_COMMAND_TIMEOUT_MS: int({
    min: 10,
    max: 60_000,
    default: DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
    readBy: BOTH,
    description:
      'a Redis command without a reply by then fails: rate limits fall back to the per-process insurance limiter, signed requests get 503, the indexer\'s publish is given up (D-66)',
  }),
  DATA_DIR: text(/^[^\0]+$/, 'path', {
    default: '.data',
    maxLength: 4096,
    readBy: ['embedded', 'chain'],
    description:
      'Single-process mode (`npm start`) and the simulated chain (`npm run chain`): where embedded PostgreSQL keeps its files and the chain its genesis and the transactions it accepted; survives restarts (`--fresh` deletes it)',
  }),
  ALLOW_EMBEDDED_STORES: flag({
    default: false,
    readBy: ['api', 'indexer', 'embedded'],
    description:
      'With `NODE_ENV=production`, lets a process run without `REDIS_URL` (per-process nonces, rate limits, bus) or in single-process mode (embedded PostgreSQL); refused otherwise',
  }),
  // RPC endpoints usually carry the provider's API key in their path or query: secrets.
  RPC_URL: uri(['http', 'https'], {
    default: 'http://127.0.0.1:8899',
    readBy: BOTH,
    // The default is a local validator's (or `npm start`'s chain): never a deployment's RPC.
    requiredBy: ['api', 'indexer:rpc'],
    secret: true,
    description: 'Solana JSON-RPC endpoint: the indexer reads the program\'s transactions, the API reads recent blockhashes for `/tx/*`',
  }),
  RPC_WS_URL: uri(['ws', 'wss'], {
    defaultText: '`RPC_URL` with the `ws` scheme',
    readBy: ['indexer'],
    secret: true,
    description: 'Solana RPC WebSocket endpoint (`logsSubscribe`)',
  }),

  // The jurisdiction policy (D-144): off until a country list is set.
  GEO_BLOCKED_COUNTRIES: text(COUNTRY_LIST, 'comma-separated ISO 3166-1 alpha-2 codes', {
    readBy: ['api'],
    description: 'requests from these countries get 451 `GEO_BLOCKED` on the `GEO_POLICY_PATHS` routes; the country is read from `GEO_COUNTRY_HEADER` (D-144)',
  }),
  ATTESTATION_REQUIRED_COUNTRIES: text(COUNTRY_LIST, 'comma-separated ISO 3166-1 alpha-2 codes', {
    readBy: ['api'],
    description: 'requests from these countries get 451 `ATTESTATION_REQUIRED` on the `GEO_POLICY_PATHS` routes until the wallet has an attestation (`POST /attestations`, D-145)',
  }),
  GEO_COUNTRY_HEADER: text(/^[A-Za-z0-9-]{1,64}$/, 'header name', {
    readBy: ['api'],
    description:
      'the header a trusted edge sets to the client\'s country (`CF-IPCountry`); believed only from a peer whose address `TRUST_PROXY` lists (a hop count lists none: the API refuses to start with the policy on), otherwise the country is unknown; a malformed or repeated value is blocked (D-144, D-192)',
  }),
  GEO_POLICY_PATHS: text(/^\/[A-Za-z0-9/_*:-]*(,\/[A-Za-z0-9/_*:-]*)*$/, 'comma-separated route paths', {
    default: '/tx/*',
    readBy: ['api'],
    ruleText: 'comma-separated route paths under the API prefix; a trailing `*` matches a prefix',
    description: 'the routes the jurisdiction policy applies to (D-144)',
  }),
  ADMIN_WALLETS: text(/^[1-9A-HJ-NP-Za-km-z]{32,44}(,[1-9A-HJ-NP-Za-km-z]{32,44})*$/, 'comma-separated base58 addresses', {
    readBy: ['api'],
    description: 'the wallets whose signed requests may call `/admin/*`; unset, every admin call is 403 `FORBIDDEN` (D-146)',
  }),
  PUBLIC_HOSTS: text(HOST_LIST, 'comma-separated host names', {
    default: 'localhost',
    readBy: ['api'],
    description: 'host names accepted as the `domain` of wallet-auth messages',
  }),
  TRUST_PROXY: {
    rule: Joi.alternatives()
      .try(
        Joi.boolean().truthy('true').falsy('false'),
        Joi.number().integer().min(0).max(10),
        Joi.string().pattern(/^[0-9a-fA-F:./,a-z]+$/, 'hop count, true/false, or comma-separated addresses/subnets'),
      )
      .empty(''),
    jsonSchema: {
      oneOf: [{ type: 'boolean' }, { type: 'integer', minimum: 0, maximum: 10 }, { type: 'string', pattern: '^[0-9a-fA-F:./,a-z]+$' }],
    },
    ruleText: '`true`, `false`, hop count 0–10, or comma-separated addresses/subnets',
    default: false,
    readBy: ['api'],
    requiredBy: [],
    secret: false,
    description: 'Express `trust proxy`: which proxies may set the client IP through `X-Forwarded-For`',
  } as SettingSpec<boolean | number | string> & { default: boolean | number | string },

  API_HOST: spec<string, Common<string> & { default: string }>(Joi.string().hostname(), { type: 'string' }, 'host name or address', {
    default: '0.0.0.0',
    readBy: [...BOTH, 'chain'],
    description: 'listen address of the API, of the indexer\'s own port and of the simulated chain\'s RPC',
  }),
  API_PORT: int({
    min: 0,
    max: 65535,
    default: 3000,
    defaultText: '`PORT` when set, else `3000`',
    readBy: ['api'],
    description: 'API port (REST and `/ws`); 0 picks a free port',
  }),
  // Platforms (Heroku, Cloud Run, Render, Fly, …) tell a process its port in PORT (D-78).
  PORT: int({
    min: 0,
    max: 65535,
    readBy: ['api'],
    description: 'alias of `API_PORT` for platforms that set `PORT`; `API_PORT` wins when both are set (D-78)',
  }),
  INDEXER_PORT: int({
    min: 0,
    max: 65535,
    default: 3001,
    readBy: ['indexer'],
    description: 'indexer port (`/health`, `/ready`, `/metrics`, internal webhook ingest)',
  }),
  CHAIN_RPC_PORT: int({
    min: 0,
    max: 65535,
    default: 8899,
    readBy: ['chain', 'embedded'],
    description:
      "the simulated chain's Solana JSON-RPC port, HTTP and WebSocket on one port (8899, a local validator's); `npm start` serves it beside the API, `npm run chain` alone (D-211)",
  }),
  INDEXER_CACHE_ROWS: int({
    min: 0,
    max: 10_000_000,
    default: DEFAULT_INDEXER_CACHE_ROWS,
    readBy: ['indexer'],
    description:
      'rows the indexer keeps in memory to apply the next batch while one commits (D-62; 700–2,000 bytes each as measured); `0` turns that off',
  }),

  // Redis counts whole seconds: windows are rounded up to a whole number of seconds.
  RATE_LIMIT_WINDOW_MS: int({
    min: 1000,
    default: 60_000,
    readBy: ['api'],
    description: 'window of every rate-limit tier; counted in whole seconds (rounded up)',
  }),
  PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: int({ min: 1, default: 300, readBy: ['api'], description: 'public market reads per IP per window' }),
  PUBLIC_READ_RATE_LIMIT_WINDOW_MS: int({
    min: 1000,
    defaultText: 'follows `RATE_LIMIT_WINDOW_MS`',
    readBy: ['api'],
    description: 'window of the public market-read tier',
  }),
  RATE_LIMIT_MAX_REQUESTS: int({
    min: 1,
    default: 100,
    readBy: ['api'],
    description: 'other public requests per IP per window; authenticated callers get 2×, writes ½',
  }),
  RATE_LIMIT_SENSITIVE_MAX: int({ min: 1, default: 20, readBy: ['api'], description: '`/orders`, `/positions`, `/tx/*`, `/admin/*` per window' }),
  RATE_LIMIT_COMPLIANCE_MAX: int({ min: 1, default: 5, readBy: ['api'], description: 'compliance tier per window' }),
  RATE_LIMIT_WALLETS_PER_IP: int({
    min: 1,
    max: 1000,
    default: 5,
    readBy: ['api'],
    description:
      'wallet-signed requests also spend a bucket of their client IP: this many wallets\' worth of the tier per window (sensitive 100, authenticated 1,000, compliance 25 by default), so new keypairs from one address buy nothing more (D-187)',
  }),

  WS_MAX_CONNECTIONS_PER_IP: int({
    min: 1,
    default: 10,
    readBy: ['api'],
    description: 'WebSocket connections per client IP, across all API replicas',
  }),
  WS_MAX_CLIENTS: int({ min: 1, default: 1000, readBy: ['api'], description: 'WebSocket clients per API process' }),
  WS_PING_INTERVAL_MS: int({
    min: 100,
    max: 300_000,
    default: 30_000,
    readBy: ['api'],
    description: 'Ping frame interval; a client that has not answered the previous ping is dropped',
  }),
  WS_IP_LEASE_MS: int({
    min: 300,
    max: 600_000,
    default: 60_000,
    readBy: ['api'],
    description: 'How long a dead replica\'s connections keep counting against their IP\'s quota (leases are renewed every third of it)',
  }),

  REQUEST_TIMEOUT_MS: int({
    min: 1,
    max: 300_000,
    default: 30_000,
    readBy: ['api'],
    description: 'handler timeout, then 504 `TIMEOUT`; also the API\'s PostgreSQL `statement_timeout` (D-65)',
  }),
  HEALTH_CHECK_CACHE_MS: int({
    min: 0,
    max: 60_000,
    default: 1_000,
    readBy: ['api'],
    description: 'how long the API reuses its last dependency check for `/ready` and `/health` (at most one database check per interval, however many probes arrive; D-101)',
  }),
  SHUTDOWN_GRACE_MS: int({
    min: 1,
    max: 120_000,
    default: 10_000,
    readBy: ['api'],
    description: 'how long SIGTERM waits for in-flight requests (the kit sets the pod\'s termination grace period from it)',
  }),
  NONCE_TTL_SECONDS: int({
    min: 330,
    max: 86_400,
    default: 330,
    readBy: ['api'],
    description: 'how long a used auth nonce is remembered (at least the whole 5 min + 30 s acceptance window)',
  }),

  WEBHOOK_SECRET: secretText(32, {
    readBy: ['indexer'],
    requiredBy: ['indexer:webhook'],
    description: 'shared secret of the internal webhook ingest route; unset disables the route',
  }),

  OTEL_EXPORTER_OTLP_ENDPOINT: uri(['http', 'https'], {
    readBy: BOTH,
    description: 'OTLP/HTTP collector; traces are exported to `{endpoint}/v1/traces` only when set',
  }),
  OTEL_SERVICE_NAME: text(/^[A-Za-z0-9._-]{1,64}$/, 'service name', {
    defaultText: '`market-indexer-api` / `market-indexer-indexer`',
    readBy: BOTH,
    ruleText: 'letters, digits, `._-`',
    description: 'service name on exported spans',
  }),
  // Read by the OpenTelemetry SDK itself; validated here so a typo fails at start, not silently.
  OTEL_TRACES_SAMPLER: oneOf(
    ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const,
    {
      defaultText: 'the SDK\'s `parentbased_always_on`',
      readBy: BOTH,
      ruleText: 'an OpenTelemetry sampler name (`parentbased_traceidratio`, `always_off`, …)',
      description: 'which traces are kept; `parentbased_traceidratio` with `OTEL_TRACES_SAMPLER_ARG=0.1` keeps one in ten',
    },
  ),
  OTEL_TRACES_SAMPLER_ARG: spec<string>(
    Joi.number().min(0).max(1).raw(),
    { type: 'number', minimum: 0, maximum: 1 },
    'number 0–1',
    { readBy: BOTH, description: 'the ratio of the `traceidratio` samplers' },
  ),

  // The operator (operator/, docs/operator.md).
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
    default: 300,
    readBy: ['operator'],
    description: 'every tenant is reconciled at least this often, changed or not (an idle reconcile writes nothing)',
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

export type SettingName = keyof typeof SETTINGS;
export type SettingValue<K extends SettingName> = (typeof SETTINGS)[K] extends SettingSpec<infer T> ? T : never;
/** A validated environment: defaults applied; a setting without one may be `undefined`. */
export type SettingValues = {
  [K in SettingName]: (typeof SETTINGS)[K] extends { default: {} } ? SettingValue<K> : SettingValue<K> | undefined;
};

export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];

export const isSettingName = (name: string): name is SettingName => Object.hasOwn(SETTINGS, name);

export function settingSpec(name: SettingName): SettingSpec {
  return SETTINGS[name] as SettingSpec;
}

/** The settings a process needs given, for the indexer's source (see `Requirement`). */
export function requiredSettings(process: 'api' | 'indexer' | 'migrate' | 'chain', source: SourceType = 'rpc'): SettingName[] {
  const who: Requirement = process === 'indexer' ? `indexer:${source}` : process;
  return SETTING_NAMES.filter((n) => settingSpec(n).requiredBy.includes(who));
}

/** The settings a process reads. */
export function settingsReadBy(process: ProcessName): SettingName[] {
  return SETTING_NAMES.filter((n) => settingSpec(n).readBy.includes(process));
}

/**
 * The env schema every process validates with. Unknown variables pass (a process environment
 * holds many); the kit refuses a container env var outside the catalog instead.
 */
export const envSchema = Joi.object(
  Object.fromEntries(
    SETTING_NAMES.map((name) => {
      const s = settingSpec(name);
      return [name, s.default === undefined ? s.rule : s.rule.default(s.default)];
    }),
  ),
)
  .unknown(true)
  .prefs({ convert: true, abortEarly: false, errors: { wrap: { label: false } } });

/** A value as an environment variable string (what a ConfigMap holds). */
export function settingToEnv(value: string | number | boolean): string {
  return String(value);
}
