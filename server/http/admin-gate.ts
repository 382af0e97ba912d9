import type { RequestHandler, Response } from 'express';
import type { Db } from '../../core/db';
import type { Logger } from '../../core/telemetry/logger';
import type { Metrics } from '../../core/telemetry/metrics';
import { writeAudit } from '../read/queries/admin';
import { ApiError, clip } from './errors';

/** Values of the `reason` label of service_admin_refusals_total: an `/admin/*` call answered before an admin was verified. */
export const ADMIN_REFUSAL_REASONS = ['unauthenticated', 'forbidden', 'rate_limited', 'unavailable', 'other'] as const;
export type AdminRefusalReason = (typeof ADMIN_REFUSAL_REASONS)[number];

/**
 * What an audit row records for a call whose client went away before its answer (D-186): the
 * action ran or is still running, its result is unknown to the client. 499 is the status proxies
 * (nginx) log for the same thing.
 */
export const CLIENT_CLOSED = { status: 499, outcome: 'client_closed' } as const;

export interface AdminGate {
  /**
   * On every `/admin/*` request, before the routes: an answer refused before an admin wallet was
   * verified (unsigned, bad signature, spent budget, another wallet) is counted by reason in
   * service_admin_refusals_total and logged at `debug`, never written to the audit table.
   */
  watch: RequestHandler;
  /**
   * After the wallet guard: 403 FORBIDDEN unless the signing wallet is in ADMIN_WALLETS; for an
   * admin, the call is audited (a row and an `info` line) on the first of the answer being sent
   * or the client closing.
   */
  check: RequestHandler;
}

const reasonOf = (status: number): AdminRefusalReason => {
  switch (status) {
    case 401:
      return 'unauthenticated';
    case 403:
      return 'forbidden';
    case 429:
      return 'rate_limited';
    case 503:
      return 'unavailable';
    default:
      return 'other';
  }
};

/** The error code of an answer body, in either presentation's envelope (v1 `{ code }`, the appendix's `{ error: { code } }`). */
function codeOf(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const b = body as { code?: unknown; error?: { code?: unknown } };
  if (typeof b.code === 'string') return b.code;
  return typeof b.error === 'object' && b.error !== null && typeof b.error.code === 'string' ? b.error.code : undefined;
}

const AUDITED = Symbol('admin call audited');
type Audited = Response & { [AUDITED]?: true };

/** The `/admin/*` allow-list and audit trail (D-146, D-186). */
export function createAdminGate(opts: { db: Db; logger: Logger; metrics: Metrics; wallets: readonly string[] }): AdminGate {
  const allowed = new Set(opts.wallets);
  const { logger, metrics } = opts;
  // Every series exists from the start, so a rate over it sees the first refusal.
  for (const reason of ADMIN_REFUSAL_REASONS) metrics.adminRefusals.inc({ reason }, 0);
  return {
    watch: (req, res, next) => {
      res.once('finish', () => {
        if ((res as Audited)[AUDITED]) return;
        const reason = reasonOf(res.statusCode);
        metrics.adminRefusals.inc({ reason });
        logger.debug({ reason, status: res.statusCode, action: clip(`${req.method} ${req.originalUrl}`, 200) }, 'admin call refused');
      });
      next();
    },
    check: (req, res, next) => {
      const wallet = req.wallet;
      if (!wallet || !allowed.has(wallet)) throw new ApiError('FORBIDDEN', 'Forbidden');
      (res as Audited)[AUDITED] = true;
      const json = res.json.bind(res);
      let code: string | undefined;
      res.json = (body: unknown) => {
        code = codeOf(body) ?? code;
        return json(body);
      };
      let written = false;
      const audit = (closed: boolean) => {
        if (written) return;
        written = true;
        const status = closed ? CLIENT_CLOSED.status : res.statusCode;
        const entry = {
          wallet,
          action: clip(`${req.method} ${req.originalUrl}`, 200),
          status,
          outcome: closed ? CLIENT_CLOSED.outcome : status < 400 ? 'ok' : (code ?? `http_${status}`),
        };
        logger.info(entry, 'admin call');
        writeAudit(opts.db, entry).catch((err: unknown) => logger.error({ err, ...entry }, 'admin audit row not written'));
      };
      // `finish` when the answer is handed to the socket; `close` also when the client left first
      // (a dead-letter retry waits up to 5 s): the action is recorded either way.
      res.once('finish', () => audit(false));
      res.once('close', () => audit(!res.writableFinished));
      next();
    },
  };
}
