import Joi from 'joi';
import { ApiError } from '../http/errors';
import { limit, NO_PARAMS, offset } from '../http/validate';
import { auditPage, deadLetterCounts, deadLettersPage, indexerState, revokeAttestation } from '../read/queries/admin';
import { route, type RouteDef, type RouteDeps } from './table';

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : null);
const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/**
 * `/admin/*` (D-146): wallet-signed by an ADMIN_WALLETS wallet, sensitive tier, every call
 * audited. Reads the indexer's state as PostgreSQL holds it; never writes the indexer's tables.
 */
export function adminRoutes({ db }: RouteDeps): RouteDef[] {
  const admin = { by: 'wallet', tier: 'sensitive' } as const;
  return [
    route({
      method: 'GET',
      path: '/admin/indexer',
      access: admin,
      admin: true,
      errors: ['FORBIDDEN'],
      query: NO_PARAMS,
      handler: async (_req, res) => {
        const [s, counts] = await Promise.all([indexerState(db), deadLetterCounts(db)]);
        const last = num(s?.last_processed_slot);
        const tip = num(s?.chain_tip_slot);
        res.json({
          data: {
            cursor: { lastProcessedSlot: last === null ? null : String(last), lastSignature: (s?.last_signature as string | null) ?? null, lastActivityAt: iso(s?.last_activity_at) },
            writer: { id: (s?.writer_id as string | null) ?? null, startedAt: iso(s?.started_at), heartbeatAt: iso(s?.heartbeat_at) },
            chainTipSlot: tip,
            slotLag: tip !== null && last !== null ? Math.max(0, tip - last) : null,
            rpcConnected: (s?.rpc_connected as boolean | null) ?? false,
            deadLetters: Object.fromEntries(counts.map((c) => [c.reason, c.n])),
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
      query: Joi.object<{ reason?: string; limit: number; offset: number }>({ reason: Joi.string().pattern(/^[a-z_]{1,64}$/), limit: limit(50, 100), offset: offset() }),
      handler: async (_req, res, { query: q }) => {
        const page = await deadLettersPage(db, q);
        res.json({
          data: {
            deadLetters: page.rows.map((r) => ({
              id: Number(r.id), signature: r.signature, eventIndex: Number(r.event_index), slot: num(r.slot), kind: r.kind ?? null,
              reason: r.reason, detail: r.detail ?? null, source: r.source, createdAt: iso(r.created_at),
            })),
            total: page.total, limit: q.limit, offset: q.offset,
          },
        });
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
      params: Joi.object<{ id: string }>({ id: Joi.string().pattern(/^\d{1,18}$/, 'attestation id').required() }),
      handler: async (req, res, { params }) => {
        const r = await revokeAttestation(db, params.id, req.wallet!);
        if (r === null) throw new ApiError('NOT_FOUND', 'No attestation with this id');
        if (r === 'already') throw new ApiError('CONFLICT', 'Attestation already revoked');
        res.json({ data: { attestation: { id: Number(r.id), wallet: r.wallet, country: r.country, revokedAt: iso(r.revoked_at), revokedBy: r.revoked_by } } });
      },
    }),
  ];
}
