import type { Db } from '../../../core/db';

/** Whether the wallet has an unrevoked attestation for the country (D-145). */
export const hasAttestation = async (db: Db, wallet: string, country: string): Promise<boolean> =>
  (await db.oneOrNone('SELECT 1 FROM attestations WHERE wallet = $1 AND country = $2 AND revoked_at IS NULL LIMIT 1', [wallet, country])) !== null;

export const insertAttestation = (db: Db, a: { wallet: string; country: string; statement: string; signature: string }) =>
  db.one<{ id: string; created_at: Date }>(
    'INSERT INTO attestations (wallet, country, statement, signature) VALUES ($1, $2, $3, $4) RETURNING id, created_at',
    [a.wallet, a.country, a.statement, a.signature],
  );
