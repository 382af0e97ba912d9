import type { RequestHandler } from 'express';
import type { Db } from '../../core/db';
import type { Logger } from '../../core/telemetry/logger';
import { writeAudit } from '../read/queries/admin';
import { ApiError, clip } from './errors';

export interface AdminGate {
  /** Records every `/admin/*` call once answered (who, what, when, outcome) and logs it. */
  audit: RequestHandler;
  /** After the wallet guard: 403 FORBIDDEN unless the signing wallet is in ADMIN_WALLETS. */
  check: RequestHandler;
}

/** The `/admin/*` allow-list and audit trail (D-146). */
export function createAdminGate(opts: { db: Db; logger: Logger; wallets: readonly string[] }): AdminGate {
  const allowed = new Set(opts.wallets);
  return {
    audit: (req, res, next) => {
      const json = res.json.bind(res);
      let code: string | undefined;
      res.json = (body: unknown) => {
        if (body && typeof body === 'object' && typeof (body as { code?: unknown }).code === 'string') code = (body as { code: string }).code;
        return json(body);
      };
      res.once('finish', () => {
        const entry = {
          wallet: req.wallet ?? null,
          action: clip(`${req.method} ${req.originalUrl}`, 200),
          status: res.statusCode,
          outcome: res.statusCode < 400 ? 'ok' : (code ?? `http_${res.statusCode}`),
        };
        opts.logger.info(entry, 'admin call');
        writeAudit(opts.db, entry).catch((err: unknown) => opts.logger.error({ err, ...entry }, 'admin audit row not written'));
      });
      next();
    },
    check: (req, _res, next) => {
      if (!req.wallet || !allowed.has(req.wallet)) throw new ApiError('FORBIDDEN', 'Forbidden');
      next();
    },
  };
}
