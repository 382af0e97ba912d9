import type { ReferralLocked, ReferrerClaimed, ReferrerCredited } from '../../core/events';
import { check, type EventContext } from './context';
import type { ReferrerEarningsRow } from './rows';
import { earningsKey, type BatchState } from './state';

export function referralLocked(state: BatchState, e: ReferralLocked, ctx: EventContext): void {
  check(e.wallet !== e.referrer, 'invalid_value', 'a wallet cannot refer itself');
  check(e.expiresAt >= 0n && e.expiresAt < 253_402_300_800n, 'invalid_value', `expiresAt ${e.expiresAt}`);
  const expiresAt = new Date(Number(e.expiresAt) * 1000);
  const lock = state.locks.get(e.wallet);
  if (lock) {
    // A renewed lock to the same referrer keeps its creation time; a new referrer starts over.
    if (lock.referrer !== e.referrer) lock.createdAt = ctx.blockTime;
    lock.referrer = e.referrer;
    lock.expiresAt = expiresAt;
    lock.updatedAt = ctx.blockTime;
    lock.slot = ctx.slot;
    lock.txSignature = ctx.signature;
    state.locks.touch(e.wallet);
  } else {
    state.locks.insert(e.wallet, {
      wallet: e.wallet,
      referrer: e.referrer,
      expiresAt,
      createdAt: ctx.blockTime,
      updatedAt: ctx.blockTime,
      slot: ctx.slot,
      txSignature: ctx.signature,
    });
  }
}

function earnings(state: BatchState, wallet: string, mint: string): ReferrerEarningsRow {
  const key = earningsKey(wallet, mint);
  let row = state.earnings.get(key);
  if (!row) {
    row = { wallet, settlementMint: mint, accumulated: 0n, totalEarned: 0n, totalClaimed: 0n, lastCreditAt: null };
    state.earnings.insert(key, row);
  } else {
    state.earnings.touch(key);
  }
  return row;
}

export function referrerCredited(state: BatchState, e: ReferrerCredited, ctx: EventContext): void {
  check(e.referrer !== e.referee, 'invalid_value', 'a wallet cannot refer itself');
  const row = earnings(state, e.referrer, e.settlementMint);
  row.accumulated += e.amount;
  row.totalEarned += e.amount;
  row.lastCreditAt = ctx.blockTime;
  state.referrerCredits.push({
    id: state.nextId('referrer_credits'),
    referrer: e.referrer,
    referee: e.referee,
    marketAddress: e.market,
    settlementMint: e.settlementMint,
    amount: e.amount,
    creditedAt: ctx.blockTime,
    slot: ctx.slot,
    txSignature: ctx.signature,
    eventIndex: ctx.eventIndex,
  });
}

export function referrerClaimed(state: BatchState, e: ReferrerClaimed, ctx: EventContext): void {
  const existing = state.earnings.get(earningsKey(e.referrer, e.settlementMint));
  const available = existing?.accumulated ?? 0n;
  check(e.amount <= available, 'negative_balance', `claim of ${e.amount} exceeds ${available} accumulated`);
  const row = earnings(state, e.referrer, e.settlementMint);
  row.accumulated -= e.amount;
  row.totalClaimed += e.amount;
  state.referrerClaims.push({
    id: state.nextId('referrer_claims'),
    wallet: e.referrer,
    settlementMint: e.settlementMint,
    tokenAccount: e.tokenAccount,
    amount: e.amount,
    claimedAt: ctx.blockTime,
    slot: ctx.slot,
    txSignature: ctx.signature,
    eventIndex: ctx.eventIndex,
  });
}
