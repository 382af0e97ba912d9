/**
 * The settings catalog: every environment variable the processes read, declared once.
 *
 * The env schema (`envSchema`), the `Config` mapping (`./index.ts`), the table in
 * `docs/configuration.md`, the deployment kit's ConfigMap/Secret wiring and the Helm chart's
 * `values.schema.json` for `settings` all derive from this list; a container env var that is
 * not in it fails `npm run synth`.
 *
 * The entries live in `settings/`, one file per area, built with the kind constructors of
 * `settings/kinds.ts` (each kind carries the Joi rule, the JSON Schema and the sentence of one
 * rule); who reads them is `settings/readers.ts`. This file puts the areas together in the
 * order the documentation lists them, and derives what the rest of the code asks of the catalog.
 */
import Joi from 'joi';
import { ACCESS_SETTINGS } from './settings/access';
import { IDENTITY_SETTINGS } from './settings/identity';
import type { SettingSpec } from './settings/kinds';
import { LISTEN_SETTINGS } from './settings/listen';
import { OPERATOR_SETTINGS } from './settings/operator';
import { RATE_LIMIT_SETTINGS } from './settings/rate-limits';
import type { ProcessName, Requirement, SourceType } from './settings/readers';
import { REQUEST_SETTINGS } from './settings/requests';
import { STORE_SETTINGS } from './settings/stores';
import { TELEMETRY_SETTINGS } from './settings/telemetry';
import { WRITER_SETTINGS } from './settings/writer';
import { WS_SETTINGS } from './settings/ws';

export { API_VARIANTS, TENANT_PATTERN, tenantIdProblem, type ApiVariant } from './settings/identity';
export type { JsonSchema, SettingSpec } from './settings/kinds';
export { DEFAULT_INDEXER_CACHE_ROWS } from './settings/listen';
export { SOURCE_TYPES, type ProcessName, type Requirement, type SourceType } from './settings/readers';
export { DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from './settings/stores';

/** Every setting, area by area; this order is the order of `docs/configuration.md` and the schemas. */
export const SETTINGS = {
  ...IDENTITY_SETTINGS,
  ...STORE_SETTINGS,
  ...ACCESS_SETTINGS,
  ...LISTEN_SETTINGS,
  ...WRITER_SETTINGS,
  ...RATE_LIMIT_SETTINGS,
  ...WS_SETTINGS,
  ...REQUEST_SETTINGS,
  ...TELEMETRY_SETTINGS,
  ...OPERATOR_SETTINGS,
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
