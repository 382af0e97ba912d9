/**
 * The catalog's first entries: what a process is and whom it serves: its environment and log
 * level, its tenant, the API's presentation, the chain and the program it indexes.
 */

import { oneOf, text, type SettingSpec } from './kinds';
import { BOTH, EVERY_PROCESS } from './readers';

/** The API's presentations (D-155): the spec's contract and the appendix's. A tenant serves one. */
export const API_VARIANTS = ['v1', 'legacy'] as const;
export type ApiVariant = (typeof API_VARIANTS)[number];

export const TENANT_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;
const TENANT_RULE = 'lowercase DNS label of at most 40 characters';
const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/** Why `value` is not a tenant id, for an error line that names where it came from; undefined when it is one. */
export const tenantIdProblem = (value: string): string | undefined => (TENANT_PATTERN.test(value) ? undefined : `"${value}" is not a tenant id (${TENANT_RULE})`);

export const IDENTITY_SETTINGS = {
  NODE_ENV: oneOf(['development', 'production', 'test'] as const, {
    default: 'development',
    readBy: EVERY_PROCESS,
    description: '`production` refuses embedded or in-memory stores unless explicitly allowed',
  }),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, {
    default: 'info',
    readBy: EVERY_PROCESS,
    ruleText: '`fatal` … `trace`, `silent`',
    description: 'pino log level',
  }),
  LOG_FORMAT: oneOf(['auto', 'json', 'pretty'] as const, {
    default: 'auto',
    readBy: EVERY_PROCESS,
    ruleText: '`auto`, `json` or `pretty`',
    description: 'logs on stdout: `json` lines, or `pretty` (pino-pretty) for a person; `auto` is pretty on a terminal, JSON otherwise',
  }),
  TENANT_ID: text(TENANT_PATTERN, TENANT_RULE, {
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
} as const satisfies Record<string, SettingSpec<any>>;
