/**
 * Who may call the API: the jurisdiction policy (D-144, D-145), the admin wallets (D-146), the
 * host names wallet-auth messages may name, and which proxies may set the client IP.
 */

import Joi from 'joi';
import { text, walletList, type SettingSpec } from './kinds';

const COUNTRY_LIST = /^[A-Z]{2}(,[A-Z]{2})*$/;
const HOST_LIST = /^[A-Za-z0-9.-]+(:[0-9]+)?(,[A-Za-z0-9.-]+(:[0-9]+)?)*$/;

export const ACCESS_SETTINGS = {
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
  ADMIN_WALLETS: walletList({
    readBy: ['api'],
    description: 'the wallets whose signed requests may call `/admin/*`; unset, every admin call is 403 `FORBIDDEN` (D-146)',
  }),
  PUBLIC_HOSTS: text(HOST_LIST, 'comma-separated host names', {
    default: 'localhost',
    readBy: ['api'],
    description: 'host names accepted as the `domain` of wallet-auth messages',
  }),
  CORS_ALLOWED_ORIGINS: text(/^(\*|https?:\/\/[A-Za-z0-9.-]+(:[0-9]{1,5})?(,https?:\/\/[A-Za-z0-9.-]+(:[0-9]{1,5})?)*)$/, 'comma-separated origins, or *', {
    readBy: ['api'],
    ruleText: 'comma-separated origins (`https://app.example`, scheme, host and port, no path), or `*` for any',
    description:
      'the web origins whose pages may send the signed (`x-wallet-*`) and API-key requests from a browser (CORS); public reads answer any origin whatever this says; unset: no page may send them (D-521)',
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
} as const satisfies Record<string, SettingSpec<any>>;
