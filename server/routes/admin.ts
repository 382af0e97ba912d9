import { setTimeout as delay } from 'node:timers/promises';
import Joi from 'joi';
import { createApiKeyStore, type ApiKeyInfo } from '../../core/api-keys';
import { buildProgressOf, projectionBuildState } from '../../core/db/projection-build-state';
import { reindexDue } from '../../core/db/projection-version';
import { RETRY_CHANNEL, WRITER_LOCK_APPLICATION, writerLockKey } from '../../core/indexer-admin';
import { PLAN_NAMES } from '../../core/plans';
import { ApiError } from '../http/errors';
import { limit, NO_PARAMS, offset } from '../http/validate';
import { auditPage, deadLetterCounts, deadLettersPage, indexerState, requestRetry, retryById, revokeAttestation, writerLockSessions, type RetryRow } from '../read/queries/admin';
import { route, type RouteDef, type RouteDeps } from './table';

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : null);
const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/** The longest a retry waits for the indexer's writer before answering 202 (D-164). */
export const RETRY_WAIT_MS = 5_000;
const RETRY_POLL_MS = 50;

const retryPayload = (r: RetryRow) => ({
  id: Number(r.id),
  deadLetterId: Number(r.dead_letter_id),
  outcome: r.outcome ?? 'pending',
  reason: r.reason,
  detail: r.detail,
  requestedBy: r.requested_by,
  requestedAt: iso(r.requested_at),
  doneAt: iso(r.done_at),
});

const keyPayload = (k: ApiKeyInfo) => ({ keyId: k.keyId, plan: k.plan, label: k.label, createdAt: k.createdAt.toISOString(), revokedAt: k.revokedAt?.toISOString() ?? null });
const ID = (what: string) => Joi.string().pattern(/^\d{1,18}$/, what).required();

/**
 * `/admin/*` (D-146): wallet-signed by an ADMIN_WALLETS wallet, sensitive tier, every call
 * audited. Reads the indexer's state as PostgreSQL holds it; never writes the indexer's tables.
 */
export function adminRoutes({ primary: db, tenantId, requestTimeoutMs, apiKeyRevoked }: RouteDeps): RouteDef[] {
  const admin = { by: 'wallet', tier: 'sensitive' } as const;
  const keys = createApiKeyStore(db);
  // Well inside the handler timeout, whatever it is set to.
  const retryWaitMs = Math.min(RETRY_WAIT_MS, Math.floor(requestTimeoutMs / 2));
  return [
    route({
      method: 'GET',
      path: '/admin/indexer',
      access: admin,
      admin: true,
      errors: ['FORBIDDEN'],
      query: NO_PARAMS,
      handler: async (_req, res) => {
        const [s, counts, sessions, b] = await Promise.all([
          indexerState(db),
          deadLetterCounts(db),
          writerLockSessions(db, writerLockKey(tenantId), WRITER_LOCK_APPLICATION),
          projectionBuildState(db),
        ]);
        const session = (x: (typeof sessions)[number]) => ({
          pid: x.pid,
          // `market-indexer-writer-lock <host>:<pid>`: the instance after the prefix, when PostgreSQL lets us see it.
          instance: x.application_name?.slice(WRITER_LOCK_APPLICATION.length + 1) || null,
          since: iso(x.backend_start),
          clientAddr: x.client_addr,
        });
        const last = num(s?.last_processed_slot);
        const tip = num(s?.chain_tip_slot);
        const projection = { release: num(s?.writer_projection_version), tables: num(s?.tables_projection_version) };
        res.json({
          data: {
            cursor: { lastProcessedSlot: last === null ? null : String(last), lastSignature: (s?.last_signature as string | null) ?? null, lastActivityAt: iso(s?.last_activity_at) },
            writer: {
              id: (s?.writer_id as string | null) ?? null, startedAt: iso(s?.started_at), heartbeatAt: iso(s?.heartbeat_at), lockHeld: sessions.some((x) => x.granted),
              // Who may commit (D-300): a hung writer still holds its lock until a standby takes the expired lease.
              lease: { holder: (s?.lease_holder as string | null) ?? null, token: num(s?.lease_token) ?? 0, expiresAt: iso(s?.lease_expires_at), current: s?.lease_current === true },
            },
            standby: sessions.filter((x) => !x.granted).map(session),
            recentBatches: (s?.recent_batches as unknown[] | null) ?? [],
            chainTipSlot: tip,
            slotLag: tip !== null && last !== null ? Math.max(0, tip - last) : null,
            rpcConnected: (s?.rpc_connected as boolean | null) ?? false,
            deadLetters: Object.fromEntries(counts.map((c) => [c.reason, c.n])),
            // Which projection built the tables, and the writer's (D-331).
            projection: { ...projection, recordedAt: iso(s?.projection_recorded_at), reindexDue: reindexDue(projection) },
            // A projection schema being built beside the live one (D-411), until it is switched to.
            build: b ? { ...buildProgressOf(b), writerId: b.writer_id, heartbeatAt: iso(b.heartbeat_at) } : null,
          },
        });
      },
    }),
    route({
      method: 'GET',
      path: '/admin/dead-letters',
      access: admin,
      admin: true,
      errors: ['FORBIDDEN'],
      query: Joi.object<{ reason?: string; resolved?: boolean; limit: number; offset: number }>({
        reason: Joi.string().pattern(/^[a-z_]{1,64}$/),
        // `false`: what still needs a retry or a fix; `true`: what retries applied (D-164).
        resolved: Joi.boolean().truthy('true').falsy('false'),
        limit: limit(50, 100),
        offset: offset(),
      }),
      handler: async (_req, res, { query: q }) => {
        const page = await deadLettersPage(db, q);
        res.json({
          data: {
            deadLetters: page.rows.map((r) => ({
              id: Number(r.id), signature: r.signature, eventIndex: Number(r.event_index), slot: num(r.slot), kind: r.kind ?? null,
              reason: r.reason, detail: r.detail ?? null, source: r.source, createdAt: iso(r.created_at), resolvedAt: iso(r.resolved_at),
            })),
            total: page.total, limit: q.limit, offset: q.offset,
          },
        });
      },
    }),
    route({
      method: 'POST',
      path: '/admin/dead-letters/:id/retry',
      access: admin,
      admin: true,
      accepted: true,
      errors: ['FORBIDDEN', 'NOT_FOUND'],
      query: NO_PARAMS,
      params: Joi.object<{ id: string }>({ id: ID('dead letter id') }),
      handler: async (req, res, { params }) => {
        // Recorded here, applied by the indexer's writer through the projection (D-164).
        let r = await requestRetry(db, params.id, req.wallet!, RETRY_CHANNEL);
        if (!r) throw new ApiError('NOT_FOUND', 'No dead letter with this id');
        const until = Date.now() + retryWaitMs;
        // A client that left stops the wait (its call is audited as closed, D-186); the request stays queued.
        while (r.outcome === null && Date.now() < until && !res.destroyed) {
          await delay(RETRY_POLL_MS);
          r = { ...(await retryById(db, r.id, r.schema)), schema: r.schema };
        }
        res.status(r.outcome === null ? 202 : 200).json({ data: { retry: retryPayload(r) } });
      },
    }),
    route({
      method: 'GET',
      path: '/admin/api-keys',
      access: admin,
      admin: true,
      errors: ['FORBIDDEN'],
      query: NO_PARAMS,
      handler: async (_req, res) => {
        res.json({ data: { apiKeys: (await keys.list(tenantId)).map(keyPayload) } });
      },
    }),
    route({
      method: 'POST',
      path: '/admin/api-keys',
      access: admin,
      admin: true,
      errors: ['FORBIDDEN'],
      query: NO_PARAMS,
      body: Joi.object({ plan: Joi.string().valid(...PLAN_NAMES).required(), label: Joi.string().trim().min(1).max(100).pattern(/^[\x20-\x7e]+$/, 'printable') }),
      handler: async (_req, res, { body }) => {
        const b = body as { plan: string; label?: string };
        const { key, info } = await keys.create({ tenant: tenantId, plan: b.plan, label: b.label });
        // The only time the key is shown: only its hash is stored (D-153); no cache keeps it.
        res.setHeader('Cache-Control', 'no-store');
        res.json({ data: { apiKey: { ...keyPayload(info), key } } });
      },
    }),
    route({
      method: 'POST',
      path: '/admin/api-keys/:id/revoke',
      access: admin,
      admin: true,
      errors: ['FORBIDDEN', 'NOT_FOUND', 'CONFLICT'],
      query: NO_PARAMS,
      params: Joi.object<{ id: string }>({ id: Joi.string().pattern(/^[0-9a-f]{12}$/, 'key id').required() }),
      handler: async (_req, res, { params }) => {
        const revoked = await keys.revoke({ tenant: tenantId, keyId: params.id });
        const k = (await keys.list(tenantId)).find((x) => x.keyId === params.id);
        if (!k) throw new ApiError('NOT_FOUND', 'No API key with this id');
        if (!revoked) throw new ApiError('CONFLICT', 'API key already revoked');
        // Its open /ws connections are closed on every replica, its cached verdict dropped (D-190).
        await apiKeyRevoked?.(params.id);
        res.json({ data: { apiKey: keyPayload(k) } });
      },
    }),
    route({
      method: 'GET',
      path: '/admin/audit',
      access: admin,
      admin: true,
      errors: ['FORBIDDEN'],
      query: Joi.object<{ limit: number; offset: number }>({ limit: limit(50, 100), offset: offset() }),
      handler: async (_req, res, { query: q }) => {
        const page = await auditPage(db, q);
        res.json({
          data: {
            entries: page.rows.map((r) => ({ id: Number(r.id), at: iso(r.at), wallet: r.wallet ?? null, action: r.action, status: Number(r.status), outcome: r.outcome })),
            total: page.total, limit: q.limit, offset: q.offset,
          },
        });
      },
    }),
    route({
      method: 'POST',
      path: '/admin/attestations/:id/revoke',
      access: admin,
      admin: true,
      errors: ['FORBIDDEN', 'NOT_FOUND', 'CONFLICT'],
      query: NO_PARAMS,
      params: Joi.object<{ id: string }>({ id: ID('attestation id') }),
      handler: async (req, res, { params }) => {
        const r = await revokeAttestation(db, params.id, req.wallet!);
        if (r === null) throw new ApiError('NOT_FOUND', 'No attestation with this id');
        if (r === 'already') throw new ApiError('CONFLICT', 'Attestation already revoked');
        res.json({ data: { attestation: { id: Number(r.id), wallet: r.wallet, country: r.country, revokedAt: iso(r.revoked_at), revokedBy: r.revoked_by } } });
      },
    }),
  ];
}
