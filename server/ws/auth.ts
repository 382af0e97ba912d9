/**
 * Who may subscribe to a `positions:<wallet>` channel (spec 6.1 rules 1-2 and part 5): a signed
 * `auth` for that wallet and action. Each failure is counted (service_ws_auth_failures_total)
 * and spends the client IP's pre-authentication budget, shared with HTTP (D-77).
 */
import type { Common } from '../../core/common';
import type { NonceStore } from '../../core/redis/nonce-store';
import type { SignatureVerifier } from '../../core/ed25519';
import { verifyWalletAuth, type AuthFailure } from '../auth/wallet-auth';
import type { AuthFailureBudget } from '../limits/rate-limit';
import { WS_ERRORS, type Channel, type WsAuth } from './protocol';
import { createTurnGate } from './turn-gate';

const AUTH_MESSAGES: Record<Exclude<AuthFailure, 'action'>, string> = {
  missing: WS_ERRORS.authRequired,
  invalid_public_key: WS_ERRORS.walletMismatch,
  bad_signature: WS_ERRORS.badSignature,
  expired: WS_ERRORS.expired,
  nonce: WS_ERRORS.nonceUsed,
  invalid_message: WS_ERRORS.invalidAuthMessage,
  domain: WS_ERRORS.domainMismatch,
  chain: WS_ERRORS.chainMismatch,
};

/** Values of the `reason` label of service_ws_auth_failures_total. */
export const WS_AUTH_FAILURE_REASONS = ['missing', 'wallet_mismatch', 'action', ...(Object.keys(AUTH_MESSAGES) as (keyof typeof AUTH_MESSAGES)[])].filter(
  (r, i, all) => all.indexOf(r) === i,
);

export interface AuthRefusal {
  /** The `reason` label it was counted under. */
  reason: string;
  /** The error message the client is sent. */
  message: string;
}

/** The check one `/ws` server runs; resolves to the refusal, counted, or `undefined` when allowed. */
export function createSubscribeAuth(deps: {
  config: Pick<Common['config'], 'publicHosts' | 'chainId'>;
  metrics: Common['metrics'];
  nonceStore: NonceStore;
  authFailures: AuthFailureBudget;
  verifySignature?: SignatureVerifier;
}): (ip: string, channel: Channel, auth: WsAuth | undefined) => Promise<AuthRefusal | undefined> {
  const { config, metrics } = deps;
  // One signature verification per event-loop turn, across every connection (D-100).
  const verifyGate = createTurnGate();
  for (const reason of WS_AUTH_FAILURE_REASONS) metrics.wsAuthFailures.inc({ reason }, 0);

  async function check(channel: Channel, auth: WsAuth | undefined): Promise<AuthRefusal | undefined> {
    if (!auth || !auth.publicKey || !auth.signature || !auth.message) return { reason: 'missing', message: WS_ERRORS.authRequired };
    if (auth.publicKey !== channel.key) return { reason: 'wallet_mismatch', message: WS_ERRORS.walletMismatch };
    await verifyGate.pass();
    const r = await verifyWalletAuth(auth, {
      publicHosts: config.publicHosts,
      chainId: config.chainId,
      expectedAction: `WS_SUBSCRIBE ${channel.name}`,
      nonceStore: deps.nonceStore,
      verify: deps.verifySignature,
    });
    if (r.ok) return undefined;
    return { reason: r.reason, message: r.reason === 'action' ? WS_ERRORS.actionMismatch(channel.name) : AUTH_MESSAGES[r.reason] };
  }

  /**
   * The cheap wallet comparison runs before the signature check, and so does the client IP's
   * budget: once its failed authentications have spent it, a subscription is refused without
   * verifying anything. Every failure counts against it, as on HTTP.
   */
  return async (ip, channel, auth) => {
    let failure: AuthRefusal | undefined;
    if (deps.authFailures.spent(ip)) failure = { reason: 'rate_limited', message: WS_ERRORS.tooManyAuthFailures };
    else {
      failure = await check(channel, auth);
      if (failure) await deps.authFailures.record(ip);
    }
    if (failure) metrics.wsAuthFailures.inc({ reason: failure.reason });
    return failure;
  };
}
