/**
 * The kinds of setting (`int`, `text`, `oneOf`, …) and the spec each builds. A kind constructor
 * carries three views of one rule: the Joi rule the process validates with, the JSON Schema a
 * values file is validated with, and the sentence the documentation shows. An empty variable
 * counts as unset.
 */
import bs58 from 'bs58';
import Joi from 'joi';
import { publicKeyProblem } from '../../ed25519';
import { parseRedisUrl, REDIS_URL_SCHEMES } from '../../redis/url';
import type { ProcessName, Requirement } from './readers';

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

/** What every entry states besides its rule. */
export type SettingOptions<T> = {
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

/** A spec from the three views of its rule; the kinds below build one, and an entry of a kind of its own may too. */
export function spec<T, const C extends SettingOptions<T> = SettingOptions<T>>(rule: Joi.Schema, jsonSchema: JsonSchema, ruleText: string, c: C): SettingSpec<T> & WithDefault<C> {
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

export function int<const C extends SettingOptions<number> & { min?: number; max?: number }>(c: C) {
  let rule = Joi.number().integer();
  if (c.min !== undefined) rule = rule.min(c.min);
  if (c.max !== undefined) rule = rule.max(c.max);
  return spec<number, C>(rule, { type: 'integer', minimum: c.min, maximum: c.max }, `integer ${range(c.min, c.max)}`.trim(), c);
}

export function oneOf<const V extends string, const C extends SettingOptions<V> = SettingOptions<V>>(values: readonly V[], c: C) {
  return spec<V, C>(Joi.string().valid(...values), { type: 'string', enum: values }, values.map((v) => `\`${v}\``).join(', '), c);
}

export function flag<const C extends SettingOptions<boolean>>(c: C) {
  return spec<boolean, C>(Joi.boolean().truthy('true', '1').falsy('false', '0'), { type: 'boolean' }, '`true`/`false`', c);
}

export function text<const C extends SettingOptions<string> & { maxLength?: number }>(pattern: RegExp, name: string, c: C) {
  let rule = Joi.string().pattern(pattern, name);
  if (c.maxLength) rule = rule.max(c.maxLength);
  return spec<string, C>(rule, { type: 'string', pattern: pattern.source, maxLength: c.maxLength }, name, c);
}

export function uri<const C extends SettingOptions<string>>(schemes: readonly string[], c: C) {
  return spec<string, C>(
    Joi.string().uri({ scheme: [...schemes] }),
    { type: 'string', pattern: `^(${schemes.join('|')})://` },
    schemes.map((s) => `\`${s}://\``).join(' or ') + ' URI',
    c,
  );
}

/** `REDIS_URL`: one Redis or a Redis Cluster's seed nodes (core/redis/url.ts). */
export function redisUri<const C extends SettingOptions<string>>(c: C) {
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

export function secretText<const C extends SettingOptions<string>>(minLength: number, c: C) {
  return spec<string, C>(Joi.string().min(minLength), { type: 'string', minLength }, `at least ${minLength} characters`, { ...c, secret: true });
}

const WALLET_LIST = /^[1-9A-HJ-NP-Za-km-z]{32,44}(,[1-9A-HJ-NP-Za-km-z]{32,44})*$/;

/**
 * Wallets, as comma-separated base58 addresses: each a 32-byte Ed25519 public key that is
 * canonical and not of small order (D-452), since a placeholder such as the all-zero key
 * `11111111111111111111111111111111` would let a fixed signature pass for that wallet.
 */
export function walletList<const C extends SettingOptions<string>>(c: C) {
  const rule = Joi.string()
    .pattern(WALLET_LIST, 'comma-separated base58 addresses')
    .custom((value: string, helpers) => {
      for (const address of value.split(',')) {
        const key = bs58.decode(address);
        const problem = key.length === 32 ? publicKeyProblem(key) : `is ${key.length} bytes, not 32`;
        if (problem) return helpers.message({ custom: `{{#label}}: ${address} ${problem}, not a wallet's key` });
      }
      return value;
    });
  return spec<string, C>(
    rule,
    { type: 'string', pattern: WALLET_LIST.source },
    'comma-separated base58 addresses of Ed25519 public keys (32 bytes, canonical, not of small order)',
    c,
  );
}
