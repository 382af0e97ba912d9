import type { NextFunction, Request, Response } from 'express';
import type { NonceStore } from '../../core/redis/nonce-store';
import type { Logger } from '../../core/telemetry/logger';
import { requestAction } from '../auth/http-auth';
import type { SignatureVerifier } from '../../core/ed25519';
import { verifyWalletAuth, type AuthFailure } from '../auth/wallet-auth';
import { ApiError, type ErrorCode } from '../http/errors';
import type { PlanLimits } from '../limits/plan-limits';
import type { RateLimits, Tier } from '../limits/rate-limit';

type Middleware = (req: Request, res: Response, next: NextFunction) => Promise<void>;

export interface Guards {
  /** Public route limited per client IP in `tier`. */
  ip(tier: Tier): Middleware;
  /**
   * Wallet-signed route: refused (429) without verifying when the client IP's failed
   * authentications have spent its budget (D-77), or when this process has seen the IP spend
   * the tier's per-address bucket (D-187); verified; then limited per wallet in `tier` (decision
   * D-43) and per client IP in the tier's per-address bucket. A failure counts against the IP's
   * budget.
   */
  wallet(tier: Tier): Middleware;
  /** API-key plan limits (the appendix variant); only where the app was given plan limits. */
  plan(): Middleware;
}

const CODES: Record<AuthFailure, ErrorCode> = {
  missing: 'MISSING_AUTH_HEADERS',
  bad_signature: 'INVALID_SIGNATURE',
  expired: 'MESSAGE_EXPIRED',
  invalid_public_key: 'UNAUTHORIZED',
  invalid_message: 'UNAUTHORIZED',
  domain: 'UNAUTHORIZED',
  chain: 'UNAUTHORIZED',
  action: 'UNAUTHORIZED',
  nonce: 'UNAUTHORIZED',
};

export function createGuards(opts: {
  limits: RateLimits;
  nonceStore: NonceStore;
  publicHosts: string[];
  chainId: string;
  logger: Logger;
  verify?: SignatureVerifier;
  plans?: PlanLimits;
}): Guards {
  const planMiddleware = opts.plans?.middleware();
  return {
    plan: () => {
      if (!planMiddleware) throw new Error('a route limited by API-key plans needs the app to be given plan limits');
      return planMiddleware;
    },
    ip: (tier) => opts.limits.byIp(tier),
    wallet: (tier) => async (req, res, next) => {
      // Checked first: a signature costs more CPU than a request should buy once the budget is spent.
      if (opts.limits.authFailures.spent(req.ip, res)) return;
      // New keypairs cost nothing: once the address has spent the tier's bucket, nothing it signs is looked at.
      if (opts.limits.addresses.spent(tier, req.ip, res)) return;
      const result = await verifyWalletAuth(
        {
          publicKey: req.get('x-wallet-pubkey'),
          signature: req.get('x-wallet-signature'),
          message: req.get('x-wallet-message'),
          chainHeader: req.get('x-wallet-chain'),
          fromHeader: true,
        },
        { publicHosts: opts.publicHosts, chainId: opts.chainId, nonceStore: opts.nonceStore, expectedAction: requestAction(req), verify: opts.verify },
      ).catch((err: unknown) => {
        // Only the nonce store can fail (Redis down or not answering). Without it a replay
        // cannot be ruled out, so the request is refused, as something to retry.
        opts.logger.warn({ err }, 'nonce store unavailable: signed request refused');
        throw new ApiError('SERVICE_UNAVAILABLE', 'A required service is unavailable');
      });
      if (!result.ok) {
        // Failed attempts count against the caller's IP, so bad signatures cannot flood.
        if (!(await opts.limits.authFailures.record(req.ip, res))) return;
        throw new ApiError(CODES[result.reason], result.message);
      }
      req.wallet = result.wallet;
      if (await opts.limits.consumeSigned(tier, result.wallet, req.ip, res)) next();
    },
  };
}
