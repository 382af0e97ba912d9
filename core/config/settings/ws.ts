/**
 * The `/ws` limits that are settings: connections per client IP across the replicas, clients
 * per process, the ping interval and how long a dead replica's IP leases count. The others are
 * in `core/limits.ts`.
 */

import { int, type SettingSpec } from './kinds';

export const WS_SETTINGS = {
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
} as const satisfies Record<string, SettingSpec<any>>;
