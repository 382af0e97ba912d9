/**
 * Where each process listens (the API, the indexer's own port, the simulated chain's RPC), and
 * the indexer's row cache, which the settings table lists with them.
 */

import Joi from 'joi';
import { int, spec, text, type SettingOptions, type SettingSpec } from './kinds';
import { BOTH } from './readers';

/**
 * Rows the indexer's row cache holds (D-62). Measured at 700–2,000 bytes of heap per cached
 * row or wallet, so about 70–200 MB when full; the working set of the simulated chain of
 * `npm run bench -- indexer` is a few thousand.
 */
export const DEFAULT_INDEXER_CACHE_ROWS = 100_000;

export const LISTEN_SETTINGS = {
  API_HOST: spec<string, SettingOptions<string> & { default: string }>(Joi.string().hostname(), { type: 'string' }, 'host name or address', {
    default: '0.0.0.0',
    readBy: [...BOTH],
    description: 'listen address of the API and of the indexer\'s own port',
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
  // Loopback unless told: the chain takes any signed transaction and serves every account, a
  // surface for the machine's own tools, not its network (D-270). The kit's chain pod sets it.
  CHAIN_RPC_HOST: spec<string, SettingOptions<string> & { default: string }>(Joi.string().hostname(), { type: 'string' }, 'host name or address', {
    default: '127.0.0.1',
    readBy: ['chain', 'embedded'],
    description:
      "listen address of the simulated chain's RPC; loopback unless set (`0.0.0.0`: every interface, as the kit's chain pod does); the banner says which (D-270)",
  }),
  // Off unless set: `npm start` and `npm run chain` serve one node that never lags (D-460).
  CHAIN_RPC_POOL_LAGS: text(/^\d{1,4}(,\d{1,4}){0,15}$/, 'comma-separated slot counts', {
    maxLength: 100,
    readBy: ['chain'],
    description:
      "serve the simulated chain's JSON-RPC as a provider's pool of nodes, one a number: how many slots that node's confirmed slot is behind the chain's (e.g. `0,2,5`); requests go round-robin over them and each node answers from what it has, as Agave does (D-460); unset: one node",
  }),
  INDEXER_CACHE_ROWS: int({
    min: 0,
    max: 10_000_000,
    default: DEFAULT_INDEXER_CACHE_ROWS,
    readBy: ['indexer'],
    description:
      'rows the indexer keeps in memory to apply the next batch while one commits (D-62; 700–2,000 bytes each as measured); `0` turns that off',
  }),
} as const satisfies Record<string, SettingSpec<any>>;
