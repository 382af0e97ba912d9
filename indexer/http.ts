import { INDEXER_STATUS_PATH, WEBHOOK_PATH } from '../core/constants';
import { ERROR_STATUS, errorBody, type ErrorCode } from '../core/http/errors';
import { opsRouter } from '../core/http/ops';
import { timingSafeEqual, createHash } from 'node:crypto';
import http from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Common } from '../core/common';
import { pingDatabase, type Db } from '../core/db';
import { projectionState } from '../core/db/projection-build-state';
import { buildHealth } from '../core/health';
import { indexerHealthInputs, statusBody } from '../core/indexer-state';
import { serverSpans } from '../core/telemetry/http-span';
import type { RawTransaction } from '../core/events';
import type { BuildStatus } from './build';
import type { Indexer } from './indexer';
import type { Source } from './sources/types';
import { webhookBodySchema, type TransactionSink } from './sources/webhook';

export { WEBHOOK_PATH } from '../core/constants';
export const WEBHOOK_BODY_LIMIT = '5mb';

/** Every refusal in the documented error envelope (spec 7.2), as the API writes it. */
const fail = (res: Response, code: ErrorCode, message: string) => res.status(ERROR_STATUS[code]).json(errorBody(code, message));

const digest = (s: string) => createHash('sha256').update(s).digest();
/** Constant-time comparison of the presented secret (raw, or as a Bearer token). */
function secretMatches(header: string | undefined, secret: string): boolean {
  if (!header) return false;
  const presented = header.startsWith('Bearer ') ? header.slice(7) : header;
  return timingSafeEqual(digest(presented), digest(secret));
}

/**
 * The indexer's own port: /health, /ready, /metrics and the internal webhook ingest route.
 * Never exposed through the ingress (the deployment kit's NetworkPolicy allows only the
 * provider's egress and the scraper).
 */
export function createIndexerHttp(opts: {
  common: Common;
  db: Db;
  indexer: Indexer;
  source: Source;
  sink: TransactionSink | undefined;
  /** In build mode (D-411): the build's state, reported on `/status` beside the build's own indexing. */
  build?: { status(): BuildStatus };
}): http.Server {
  const { common, db, indexer, source, sink } = opts;
  const startedAt = Date.now();
  const app = express();
  app.disable('x-powered-by');
  if (common.config.otel.endpoint) app.use(serverSpans());

  async function inputs() {
    const dbConnected = await pingDatabase(db);
    const s = indexer.status();
    const cursor = dbConnected
      ? await db.oneOrNone<{ last_activity_at: Date | null }>('SELECT last_activity_at FROM indexer_cursor WHERE id = 1').catch(() => null)
      : null;
    return {
      dbConnected,
      rpcConnected: source.connected(),
      indexerRunning: s.role === 'writer' || s.role === 'standby',
      slotLag: s.chainTip !== null && s.lastProcessedSlot !== null ? Math.max(0, s.chainTip - s.lastProcessedSlot) : null,
      lastProcessedSlot: s.lastProcessedSlot === null ? null : String(s.lastProcessedSlot),
      lastActivityAt: cursor?.last_activity_at ?? null,
      startedAt,
    };
  }

  app.use(
    opsRouter({
      health: async () => {
        const body = buildHealth(await inputs());
        return { status: body.status === 'unhealthy' ? 503 : 200, body: { ...body, role: indexer.status().role } };
      },
      ready: async () => {
        const i = await inputs();
        const ready = i.dbConnected && i.indexerRunning;
        return { status: ready ? 200 : 503, body: { ready, dbConnected: i.dbConnected, indexerRunning: i.indexerRunning } };
      },
      registry: common.metrics.registry,
    }),
  );
  // The tenant's indexing as stored in PostgreSQL, whichever replica answers: the spec's status
  // data plus the writer's identity, and `projection`: the schema the API reads and the build in
  // progress beside it (D-435). The operator reads it into its MarketIndexer's status.
  app.get(INDEXER_STATUS_PATH, async (_req, res) => {
    const i = await indexerHealthInputs(db, startedAt);
    // Left out when it cannot be read (the migrations not applied yet): the rest still answers.
    const projection = i.dbConnected ? await projectionState(db).catch(() => undefined) : undefined;
    res.status(i.dbConnected ? 200 : 503).json({
      ...statusBody(i, buildHealth(i)),
      writer: i.writer,
      ...(projection ? { projection } : {}),
      ...(opts.build ? { build: opts.build.status() } : {}),
    });
  });

  const secret = common.config.webhookSecret;
  app.post(
    WEBHOOK_PATH,
    (req, res, next) => {
      // Authenticate before reading a large body.
      if (!secret || !sink) return fail(res, 'NOT_FOUND', 'Not found');
      if (!secretMatches(req.get('authorization'), secret)) return fail(res, 'UNAUTHORIZED', 'Invalid webhook secret');
      next();
    },
    express.json({ limit: WEBHOOK_BODY_LIMIT, strict: true }),
    (req, res) => {
      const { error, value } = webhookBodySchema.validate(req.body, { abortEarly: true });
      if (error) {
        return fail(res, 'VALIDATION_ERROR', `Invalid webhook body: ${error.message}`);
      }
      const txs = value as RawTransaction[];
      sink!.offer(txs);
      res.status(202).json({ accepted: txs.length });
    },
  );

  app.use((_req, res) => fail(res, 'NOT_FOUND', 'Not found'));
  // Body-parser failures (bad JSON, too large) and anything unexpected: the documented shape only.
  app.use((err: { type?: string; status?: number }, _req: Request, res: Response, _next: NextFunction) => {
    if (err.type === 'entity.too.large') return fail(res, 'LIMIT_EXCEEDED', `Body larger than ${WEBHOOK_BODY_LIMIT}`);
    if (err.type === 'entity.parse.failed') return fail(res, 'INVALID_REQUEST_BODY', 'Body is not valid JSON');
    common.logger.error({ err }, 'indexer http error');
    fail(res, 'INTERNAL_ERROR', 'Internal error');
  });
  return http.createServer(app);
}
