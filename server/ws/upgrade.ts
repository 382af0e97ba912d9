/**
 * Admission of a `/ws` upgrade, before the handshake (spec 7.3, design 5): refused with an
 * HTTP response in the presentation's error shape (D-50, D-160) for another path, while
 * shutting down, when the process is full, or when the client IP (the appendix variant: the
 * API key's plan, D-158) holds its cluster-wide connection quota. An admitted upgrade holds a
 * connection lease.
 */
import type http from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import proxyaddr from 'proxy-addr';
import { WS_PATH } from '../../core/constants';
import { ApiError } from '../../core/http/errors';
import { planOf, type PlanName } from '../../core/plans';
import type { ErrorWriter } from '../http/errors';
import type { PlanLimits } from '../limits/plan-limits';
import { admitUpgrade } from './api-key';
import type { ConnectionLeases, Lease } from './ip-leases';
import type { RefusalReason } from './limits';

/** An upgrade refused with an HTTP response, its body in the presentation's error shape (D-50, D-160). */
export function refuse(socket: Duplex, write: ErrorWriter, err: ApiError, extra: string[] = []): void {
  const status = err.status;
  const json = JSON.stringify(write(err));
  socket.end(
    [`HTTP/1.1 ${status} ${STATUS_CODES[status]}`, 'Content-Type: application/json; charset=utf-8', `Content-Length: ${Buffer.byteLength(json)}`, 'Connection: close', ...extra, '', json].join('\r\n'),
  );
}

/** An upgrade let through: the connection's client IP, lease and (appendix variant) plan and key. */
export interface Admitted {
  ip: string;
  lease: Lease;
  plan: PlanName | undefined;
  keyId: string | undefined;
}

/**
 * Admits an upgrade or answers it (then resolves to `undefined`). The caller hands an admitted
 * one to the handshake in the same turn, or releases its lease if the socket went away or the
 * server began shutting down while it waited.
 */
export function createUpgradeAdmission(deps: {
  /** The compiled `trust proxy` of the Express app, so the client IP is the one rate limits use. */
  trust: (addr: string, i: number) => boolean;
  leases: ConnectionLeases;
  plans: PlanLimits | undefined;
  writeError: ErrorWriter;
  maxClients: number;
  clientCount: () => number;
  accepting: () => boolean;
  refused: (reason: RefusalReason) => void;
}): (req: http.IncomingMessage, socket: Duplex) => Promise<Admitted | undefined> {
  const { leases, plans, writeError, refused } = deps;
  // Upgrades between admission and the handshake count against the process's capacity too.
  let upgrading = 0;
  return async (req, socket) => {
    socket.on('error', () => socket.destroy());
    const path = (req.url ?? '').split('?')[0];
    if (path !== WS_PATH) {
      refuse(socket, writeError, new ApiError('NOT_FOUND', 'Route not found'));
      return undefined;
    }
    if (!deps.accepting()) {
      refused('shutting_down');
      refuse(socket, writeError, new ApiError('SERVICE_UNAVAILABLE', 'Server is shutting down'));
      return undefined;
    }
    if (deps.clientCount() + upgrading >= deps.maxClients) {
      refused('max_clients');
      refuse(socket, writeError, new ApiError('SERVICE_UNAVAILABLE', 'WebSocket server is at capacity'), ['Retry-After: 1']);
      return undefined;
    }
    const ip = proxyaddr(req, deps.trust);
    upgrading += 1;
    let lease: Lease | undefined;
    let plan: PlanName | undefined;
    let keyId: string | undefined;
    try {
      if (plans) {
        const a = await admitUpgrade(req, ip, plans);
        if (!a.ok) {
          refused(a.reason);
          refuse(socket, writeError, a.error, a.headers);
          return undefined;
        }
        plan = a.caller.plan;
        keyId = a.caller.keyId;
        lease = await leases.acquire(a.caller.subject, planOf(a.caller.plan).wsConnections);
      } else {
        lease = await leases.acquire(ip);
      }
    } finally {
      upgrading -= 1;
    }
    if (!lease) {
      refused('per_ip');
      if (plan) plans?.refused(plan, 'ws_connections');
      refuse(socket, writeError, new ApiError('RATE_LIMITED', plans ? 'Too many WebSocket connections for this plan' : 'Too many WebSocket connections from this address'), ['Retry-After: 10']);
      return undefined;
    }
    return { ip, lease, plan, keyId };
  };
}
