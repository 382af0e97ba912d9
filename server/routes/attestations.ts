import bs58 from 'bs58';
import Joi from 'joi';
import { verifyEd25519 } from '../../core/ed25519';
import { ApiError } from '../http/errors';
import { base58Signature, NO_PARAMS } from '../http/validate';
import { insertAttestation } from '../read/queries/attestations';
import { route, type RouteDef, type RouteDeps } from './table';

const body = Joi.object<{ country: string; statement: string; signature: string }>({
  country: Joi.string().pattern(/^[A-Z]{2}$/, 'ISO 3166-1 alpha-2 code').required(),
  // Printable text, one screen at most: what the wallet showed its user to sign.
  statement: Joi.string().min(20).max(2_000).pattern(/^[\x20-\x7e\n]+$/, 'printable ASCII').required(),
  signature: base58Signature.required(),
});

/**
 * `POST /attestations` (D-145): the signing wallet's statement of jurisdiction, itself signed by
 * the wallet (Ed25519 over the statement's UTF-8 bytes), naming the wallet and the country so a
 * signature cannot be moved to another wallet or country. Stored with its signature.
 */
export function attestationsRoutes({ primary: db }: RouteDeps): RouteDef[] {
  return [
    route({
      method: 'POST',
      path: '/attestations',
      access: { by: 'wallet', tier: 'compliance' },
      query: NO_PARAMS,
      body,
      handler: async (req, res, { body: b }) => {
        const wallet = req.wallet!;
        const details = [];
        if (!b.statement.includes(wallet)) details.push({ field: 'body.statement', message: 'statement must name the signing wallet' });
        if (!new RegExp(`\\b${b.country}\\b`).test(b.statement)) details.push({ field: 'body.statement', message: 'statement must name the country' });
        const sig = bs58.decode(b.signature);
        if (sig.length !== 64 || !verifyEd25519(Buffer.from(b.statement, 'utf8'), sig, bs58.decode(wallet))) {
          details.push({ field: 'body.signature', message: "signature is not the wallet's Ed25519 signature of the statement" });
        }
        if (details.length) throw new ApiError('VALIDATION_ERROR', details[0]!.message, details);
        const row = await insertAttestation(db, { wallet, country: b.country, statement: b.statement, signature: b.signature });
        res.json({ data: { attestation: { id: Number(row.id), wallet, country: b.country, createdAt: row.created_at.toISOString() } } });
      },
    }),
  ];
}
