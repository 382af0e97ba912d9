import { INDEXER_STATUS_PATH, OPS_PATHS, WEBHOOK_PATH } from '../core/constants';
import { timingSafeEqual, createHash } from 'node:crypto';
import http from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Common } from '../core/common';
import { pingDatabase, type Db } from '../core/db';
import { buildHealth } from '../core/health';
import { indexerHealthInputs, statusBody } from '../core/indexer-state';
import { serverSpans } from '../core/telemetry/http-span';
import type { RawTransaction } from '../core/events';
import type { Indexer } from './indexer';
import type { Source } from './sources/types';
import { webhookBodySchema, type TransactionSink } from './sources/webhook';

export { WEBHOOK_PATH } from '../core/constants';
export const WEBHOOK_BODY_LIMIT = '5mb';

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

  app.get(OPS_PATHS.health, async (_req, res) => {
    const body = buildHealth(await inputs());
    res.status(body.status === 'unhealthy' ? 503 : 200).json({ ...body, role: indexer.status().role });
  });
  app.get(OPS_PATHS.ready, async (_req, res) => {
    const i = await inputs();
    const ready = i.dbConnected && i.indexerRunning;
    res.status(ready ? 200 : 503).json({ ready, dbConnected: i.dbConnected, indexerRunning: i.indexerRunning });
  });
  // The tenant's indexing as stored in PostgreSQL, whichever replica answers: the spec's status
  // data plus the writer's identity. The operator reads it into its MarketIndexer's status.
  app.get(INDEXER_STATUS_PATH, async (_req, res) => {
    const i = await indexerHealthInputs(db, startedAt);
    res.status(i.dbConnected ? 200 : 503).json({ ...statusBody(i, buildHealth(i)), writer: i.writer });
  });
  app.get(OPS_PATHS.metrics, async (_req, res) => {
    res.type(common.metrics.registry.contentType).send(await common.metrics.registry.metrics());
  });

  const secret = common.config.webhookSecret;
  app.post(
    WEBHOOK_PATH,
    (req, res, next) => {
      // Authenticate before reading a large body.
      if (!secret || !sink) return res.status(404).json({ error: 'Not found', code: 'NOT_FOUND' });
      if (!secretMatches(req.get('authorization'), secret)) return res.status(401).json({ error: 'Invalid webhook secret', code: 'UNAUTHORIZED' });
      next();
    },
    express.json({ limit: WEBHOOK_BODY_LIMIT, strict: true }),
    (req, res) => {
      const { error, value } = webhookBodySchema.validate(req.body, { abortEarly: true });
      if (error) {
        return res.status(400).json({ error: `Invalid webhook body: ${error.message}`, code: 'VALIDATION_ERROR' });
      }
      const txs = value as RawTransaction[];
      sink!.offer(txs);
      res.status(202).json({ accepted: txs.length });
    },
  );

  app.use((_req, res) => res.status(404).json({ error: 'Not found', code: 'NOT_FOUND' }));
  // Body-parser failures (bad JSON, too large) and anything unexpected: the documented shape only.
  app.use((err: { type?: string; status?: number }, _req: Request, res: Response, _next: NextFunction) => {
    if (err.type === 'entity.too.large') return res.status(400).json({ error: `Body larger than ${WEBHOOK_BODY_LIMIT}`, code: 'LIMIT_EXCEEDED' });
    if (err.type === 'entity.parse.failed') return res.status(400).json({ error: 'Body is not valid JSON', code: 'INVALID_REQUEST_BODY' });
    common.logger.error({ err }, 'indexer http error');
    res.status(500).json({ error: 'Internal error', code: 'INTERNAL_ERROR' });
  });
  return http.createServer(app);
}
