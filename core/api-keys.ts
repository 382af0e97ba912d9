import { createHash, randomBytes } from 'node:crypto';
import type { Db } from './db';
import { isPlanName, PLAN_NAMES, type PlanName } from './plans';

/**
 * API keys (D-153): `mik_<key id>_<secret>`, the id 6 random bytes in hex (public: listed,
 * revoked by), the secret 32 random bytes in base64url. Only the SHA-256 of the whole key is
 * stored: a 256-bit random secret needs no slow hash, and a database dump gives no usable key.
 */
const KEY_FORMAT = /^mik_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$/;

export const hashApiKey = (key: string): string => createHash('sha256').update(key).digest('hex');

/** Whether `key` has the form of a key (`mik_<12 hex>_<43 base64url>`); anything else is refused without a lookup. */
export const isWellFormedApiKey = (key: string): boolean => KEY_FORMAT.test(key);

export interface ApiKeyInfo {
  keyId: string;
  tenant: string;
  plan: PlanName;
  label: string | null;
  createdAt: Date;
  revokedAt: Date | null;
}

export class ApiKeyError extends Error {
  override name = 'ApiKeyError';
}

export interface ApiKeyStore {
  /** A new key on `plan`; the only time the key exists outside the caller. */
  create(opts: { tenant: string; plan: string; label?: string }): Promise<{ key: string; info: ApiKeyInfo }>;
  /** True when the key was active and is now revoked. */
  revoke(opts: { tenant: string; keyId: string }): Promise<boolean>;
  list(tenant: string): Promise<ApiKeyInfo[]>;
  /** The active key's id and plan for `tenant`, or null: malformed, unknown, revoked or another tenant's. */
  lookup(tenant: string, key: string): Promise<{ keyId: string; plan: PlanName } | null>;
  /** Which of `keyIds` are still active keys of `tenant` (not revoked, on a declared plan): one query. */
  active(tenant: string, keyIds: readonly string[]): Promise<Set<string>>;
}

type Row = { key_id: string; tenant: string; plan: string; label: string | null; created_at: Date; revoked_at: Date | null };
const info = (r: Row): ApiKeyInfo => ({
  keyId: r.key_id,
  tenant: r.tenant,
  plan: r.plan as PlanName,
  label: r.label,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});

export function createApiKeyStore(db: Db): ApiKeyStore {
  return {
    async create({ tenant, plan, label }) {
      if (!isPlanName(plan)) throw new ApiKeyError(`unknown plan "${plan}"; plans: ${PLAN_NAMES.join(', ')}`);
      const keyId = randomBytes(6).toString('hex');
      const key = `mik_${keyId}_${randomBytes(32).toString('base64url')}`;
      const row = await db.one<Row>(
        `INSERT INTO api_keys (key_id, tenant, key_hash, plan, label) VALUES ($1, $2, $3, $4, $5)
         RETURNING key_id, tenant, plan, label, created_at, revoked_at`,
        [keyId, tenant, hashApiKey(key), plan, label ?? null],
      );
      return { key, info: info(row) };
    },
    async revoke({ tenant, keyId }) {
      const r = await db.result('UPDATE api_keys SET revoked_at = now() WHERE tenant = $1 AND key_id = $2 AND revoked_at IS NULL', [tenant, keyId]);
      return r.rowCount === 1;
    },
    async list(tenant) {
      const rows = await db.any<Row>('SELECT key_id, tenant, plan, label, created_at, revoked_at FROM api_keys WHERE tenant = $1 ORDER BY created_at, key_id', [tenant]);
      return rows.map(info);
    },
    async lookup(tenant, key) {
      const m = KEY_FORMAT.exec(key);
      if (!m) return null;
      const r = await db.oneOrNone<{ key_id: string; plan: string }>(
        'SELECT key_id, plan FROM api_keys WHERE key_hash = $1 AND tenant = $2 AND revoked_at IS NULL',
        [hashApiKey(key), tenant],
      );
      // A plan dropped from core/plans.ts no longer admits its keys.
      return r && isPlanName(r.plan) ? { keyId: r.key_id, plan: r.plan } : null;
    },
    async active(tenant, keyIds) {
      if (!keyIds.length) return new Set();
      const rows = await db.any<{ key_id: string; plan: string }>(
        'SELECT key_id, plan FROM api_keys WHERE tenant = $1 AND key_id = ANY($2::text[]) AND revoked_at IS NULL',
        [tenant, keyIds],
      );
      return new Set(rows.filter((r) => isPlanName(r.plan)).map((r) => r.key_id));
    },
  };
}
