import type { Request, RequestHandler } from 'express';
import type { Config } from '../../core/config';
import { ApiError } from './errors';

/** A route path pattern of GEO_POLICY_PATHS: exact, or a prefix when it ends in `*`. */
const matcher = (pattern: string) => (pattern.endsWith('*') ? (p: string) => p.startsWith(pattern.slice(0, -1)) : (p: string) => p === pattern);

/**
 * The client's country as the trusted edge reported it, or undefined (unknown). The header is
 * believed only when the TCP peer is a proxy that TRUST_PROXY trusts: anyone can send it, and a
 * forged `CF-IPCountry` from an untrusted address must not move a request across the policy.
 */
export function countryOf(req: Request, header: string | undefined): string | undefined {
  if (!header) return undefined;
  const trusts = req.app.get('trust proxy fn') as ((addr: string, hop: number) => boolean) | undefined;
  if (!trusts || !trusts(req.socket.remoteAddress ?? '', 0)) return undefined;
  const v = req.get(header)?.trim().toUpperCase();
  return v && /^[A-Z]{2}$/.test(v) ? v : undefined;
}

/**
 * The tenant's jurisdiction policy (D-144, D-145) as middleware for the routes it names: 451
 * `GEO_BLOCKED` for a blocked country; 451 `ATTESTATION_REQUIRED` for a country that requires an
 * attestation the signing wallet has not made (or that was revoked). It runs after the route's
 * access check, so the wallet is known and refused requests still spend their rate limit.
 * Undefined when the policy is off, or for routes it does not name.
 */
export function createJurisdictionPolicy(opts: {
  geo: Config['geo'];
  hasAttestation: (wallet: string, country: string) => Promise<boolean>;
}): (path: string) => RequestHandler | undefined {
  const { geo } = opts;
  const blocked = new Set(geo.blockedCountries);
  const attest = new Set(geo.attestationCountries);
  if (!blocked.size && !attest.size) return () => undefined;
  const covered = geo.paths.map(matcher);
  const handler: RequestHandler = async (req, _res, next) => {
    const country = countryOf(req, geo.countryHeader);
    if (country && blocked.has(country)) throw new ApiError('GEO_BLOCKED', 'This operation is not available in your jurisdiction');
    if (country && attest.has(country) && !(req.wallet && (await opts.hasAttestation(req.wallet, country)))) {
      throw new ApiError('ATTESTATION_REQUIRED', 'A jurisdiction attestation is required first (POST /attestations)');
    }
    next();
  };
  return (path) => (covered.some((m) => m(path)) ? handler : undefined);
}
