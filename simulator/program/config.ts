import { BPS_SCALE } from '../../core/domain';
import type { Handlers } from './handler';

/** The program's configuration (fee curve and split, tick size: the admin's) and the referral program. */
export const configHandlers: Handlers<'set_fee_config' | 'set_tick_size' | 'lock_referral' | 'claim_referral'> = {
  set_fee_config: {
    check: (s, c) => (c.signer === s.admin ? undefined : 'InvalidAccount'),
    /** The curve is always stored; a split that does not add up to 100 % is reported (the event) but not applied. */
    run(s, { args }) {
      s.feeCurve = { feeCapBps: args.feeCapBps, decayRateBps: args.decayRateBps };
      const split = { protocolShareBps: args.protocolShareBps, creatorShareBps: args.creatorShareBps, referralShareBps: args.referralShareBps };
      if (split.protocolShareBps + split.creatorShareBps + split.referralShareBps === BPS_SCALE) s.feeSplit = split;
      return [{ kind: 'FeeConfigChanged', data: { ...args } }];
    },
  },
  set_tick_size: {
    check(s, { signer, args }) {
      if (signer !== s.admin) return 'InvalidAccount';
      return args.tickSizeBps >= 1 && BPS_SCALE % args.tickSizeBps === 0 ? undefined : 'InvalidArgument';
    },
    run(s, { args }) {
      s.tickSize = args.tickSizeBps;
      return [{ kind: 'TickSizeChanged', data: { tickSizeBps: args.tickSizeBps } }];
    },
  },
  lock_referral: {
    check: (_s, { signer, args }) => (args.referrer !== signer ? undefined : 'InvalidArgument'),
    run(s, { signer, args }) {
      s.locks.set(signer, { referrer: args.referrer, expiresAt: Number(args.expiresAt) });
      return [{ kind: 'ReferralLocked', data: { wallet: signer, referrer: args.referrer, expiresAt: args.expiresAt } }];
    },
  },
  /** The whole balance: the instruction takes no amount. */
  claim_referral: {
    check(s, { signer, accounts }) {
      const e = s.earnings.get(`${signer}:${accounts.settlement_mint}`);
      return e && e.accumulated > 0n ? undefined : 'NothingToClaim';
    },
    run(s, { signer, accounts }) {
      const e = s.earnings.get(`${signer}:${accounts.settlement_mint}`)!;
      const amount = e.accumulated;
      e.accumulated = 0n;
      e.claimed += amount;
      return [{ kind: 'ReferrerClaimed', data: { referrer: e.wallet, settlementMint: e.mint, tokenAccount: accounts.referrer_token_account!, amount } }];
    },
  },
};
