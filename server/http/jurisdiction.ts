import type { Request, RequestHandler } from 'express';
import proxyaddr from 'proxy-addr';
import type { Config, TrustProxy } from '../../core/config';
import { ApiError } from './errors';

/** A route path pattern of GEO_POLICY_PATHS: exact, or a prefix when it ends in `*`. */
const matcher = (pattern: string) => (pattern.endsWith('*') ? (p: string) => p.startsWith(pattern.slice(0, -1)) : (p: string) => p === pattern);

/** What the trusted edge said about a request's country. */
export type Country =
  /** No header, or one from a peer that is not a listed proxy: nobody vouched for a country. */
  | { kind: 'unknown' }
  | { kind: 'code'; code: string }
  /** A listed proxy sent the header, but not one ISO 3166-1 alpha-2 code (empty, repeated, `T1`, `USA`): treated as blocked (D-192). */
  | { kind: 'malformed' };

/**
 * The proxies whose country header is believed: TRUST_PROXY's addresses and subnets (the list
 * proxy-addr compiles for Express, `loopback`/`linklocal`/`uniquelocal` included). A hop count
 * or `true` names no address: with them the peer at hop 0 is trusted whoever it is, a client
 * that reached the API directly included, so no header can be believed (D-192); undefined then.
 */
export function headerProxies(trustProxy: TrustProxy): ((addr: string) => boolean) | undefined {
  if (typeof trustProxy !== 'string') return undefined;
  const trust = proxyaddr.compile(trustProxy.split(',').map((s) => s.trim()));
  return (addr) => trust(addr, 0);
}

/**
 * The client's country as a listed proxy reported it (D-144, D-192). Anyone can send the header,
 * so from any other peer it is ignored. From a listed proxy, a value that is not exactly one
 * two-letter code (two header lines, a comma-joined list, an empty value) is `malformed`: the
 * edge is broken or a client's header got through beside its own, and letting it pass as
 * unknown would let a client choose its jurisdiction.
 */
export function countryOf(req: Request, header: string | undefined, proxies: ((addr: string) => boolean) | undefined): Country {
  if (!header || !proxies || !proxies(req.socket.remoteAddress ?? '')) return { kind: 'unknown' };
  const values = req.headersDistinct[header.toLowerCase()];
  if (!values) return { kind: 'unknown' };
  const v = values.length === 1 ? values[0]!.trim().toUpperCase() : '';
  return /^[A-Z]{2}$/.test(v) ? { kind: 'code', code: v } : { kind: 'malformed' };
}

/**
 * The tenant's jurisdiction policy (D-144, D-145, D-192) as middleware for the routes it names:
 * 451 `GEO_BLOCKED` for a blocked country or a malformed country header; 451
 * `ATTESTATION_REQUIRED` for a country that requires an attestation the signing wallet has not
 * made (or that was revoked). It runs after the route's access check, so the wallet is known
 * and refused requests still spend their rate limit. Undefined when the policy is off, or for
 * routes it does not name. A policy that could never see a country (no header named, or a
 * TRUST_PROXY that lists no proxy address) is refused when the API starts, naming the setting.
 */
export function createJurisdictionPolicy(opts: {
  geo: Config['geo'];
  trustProxy: TrustProxy;
  hasAttestation: (wallet: string, country: string) => Promise<boolean>;
}): (path: string) => RequestHandler | undefined {
  const { geo } = opts;
  const blocked = new Set(geo.blockedCountries);
  const attest = new Set(geo.attestationCountries);
  if (!blocked.size && !attest.size) return () => undefined;
  const proxies = headerProxies(opts.trustProxy);
  if (!geo.countryHeader) {
    throw new Error('GEO_BLOCKED_COUNTRIES / ATTESTATION_REQUIRED_COUNTRIES need GEO_COUNTRY_HEADER: without it no country is ever known (D-192)');
  }
  if (!proxies) {
    throw new Error(
      `GEO_COUNTRY_HEADER is believed only from the proxies TRUST_PROXY lists by address; TRUST_PROXY=${String(opts.trustProxy)} names none: set it to the proxies' addresses or subnets (e.g. 10.0.0.0/8) (D-192)`,
    );
  }
  const covered = geo.paths.map(matcher);
  const handler: RequestHandler = async (req, _res, next) => {
    const country = countryOf(req, geo.countryHeader, proxies);
    switch (country.kind) {
      case 'unknown':
        return next();
      case 'malformed':
        throw new ApiError('GEO_BLOCKED', 'This operation is not available: the jurisdiction of this request could not be determined');
      case 'code':
        if (blocked.has(country.code)) throw new ApiError('GEO_BLOCKED', 'This operation is not available in your jurisdiction');
        if (attest.has(country.code) && !(req.wallet && (await opts.hasAttestation(req.wallet, country.code)))) {
          throw new ApiError('ATTESTATION_REQUIRED', 'A jurisdiction attestation is required first (POST /attestations)');
        }
        return next();
      default: {
        const never: never = country;
        throw new Error(`unhandled country ${JSON.stringify(never)}`);
      }
    }
  };
  return (path) => (covered.some((m) => m(path)) ? handler : undefined);
}
