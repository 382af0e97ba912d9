import Joi from 'joi';
import type { Response } from 'express';
import { MarketState, orderPriceProblem, orderQuantityProblem, SIDE_LABELS, type SideLabel } from '../../core/domain';
import { buildProgramTransaction, ChainUnavailableError, type BuiltTransaction, type ChainAccess, type InstructionArgs, type InstructionName } from '../../core/tx';
import { ApiError, type ErrorDetail } from '../http/errors';
import { base58Address, NO_PARAMS } from '../http/validate';
import { liveProgramConfig } from '../read/queries/config';
import { marketByKey } from '../read/queries/markets';
import { orderInMarket, positionInMarket, recordCancelRequest, referrerAccumulated } from '../read/queries/tx';
import type { DbRow } from '../read/queries/rows';
import { route, type RouteDef, type RouteDeps } from './table';

/** The `/tx/*` routes, each building one program instruction (D-140). */
export const TX_ROUTES = {
  'place-order': 'place_order',
  'cancel-order': 'cancel_order',
  'claim-payout': 'claim_payout',
  'claim-referral': 'claim_referral',
  'claim-creator-fees': 'claim_creator_fees',
} as const satisfies Record<string, InstructionName>;

const marketKey = Joi.alternatives().try(base58Address, Joi.string().pattern(/^\d{1,20}$/, 'numeric market id')).required();
const u64String = Joi.string().pattern(/^\d{1,20}$/, 'decimal integer');
const BODIES = {
  'place-order': Joi.object({
    market: marketKey,
    side: Joi.string().valid(...SIDE_LABELS).required(),
    priceBps: Joi.number().integer().strict().required(),
    quantity: u64String.required(),
    orderType: Joi.number().integer().valid(0, 1, 2).strict().default(0),
  }),
  'cancel-order': Joi.object({ market: marketKey, orderId: u64String.required() }),
  'claim-payout': Joi.object({ market: marketKey }),
  'claim-referral': Joi.object({ settlementMint: base58Address.required() }),
  'claim-creator-fees': Joi.object({ market: marketKey }),
};

const refuse = (details: ErrorDetail[]): never => {
  throw new ApiError('VALIDATION_ERROR', details[0]!.message, details);
};
const check = (field: string, problem: string | undefined): ErrorDetail[] => (problem ? [{ field: `body.${field}`, message: problem }] : []);

/** The chain's latest blockhash, or 503 when the tenant's RPC cannot give one. */
async function recent(chain: ChainAccess | undefined) {
  if (!chain) throw new ApiError('SERVICE_UNAVAILABLE', 'No chain RPC is configured for transaction building');
  try {
    return await chain.recentBlockhash();
  } catch (err) {
    if (err instanceof ChainUnavailableError) throw new ApiError('SERVICE_UNAVAILABLE', 'The chain RPC is unavailable; retry shortly');
    throw err;
  }
}

const send = (res: Response, b: BuiltTransaction) =>
  res.json({ data: { transaction: b.transaction, blockhash: b.blockhash, lastValidBlockHeight: Number(b.lastValidBlockHeight), accounts: b.accounts } });

/**
 * `POST /tx/<name>`: checks the request against the indexed state (400 VALIDATION_ERROR with
 * `details`), then returns an unsigned v0 transaction for the signing wallet to sign and send
 * itself. The service holds no key and sends nothing (issue 22).
 */
export function txRoutes({ db, primary, programId, chain }: RouteDeps): RouteDef[] {
  async function market(key: string, states: readonly number[], stateProblem: string): Promise<DbRow> {
    const m = await marketByKey(db, key);
    if (!m) refuse(check('market', 'market not found'));
    if (!states.includes(Number(m!.state))) refuse(check('market', stateProblem));
    return m!;
  }
  async function build<N extends InstructionName>(name: N, signer: string, accounts: Record<string, string>, args: InstructionArgs[N]) {
    const r = await recent(chain);
    return { built: await buildProgramTransaction({ programId, name, signer, accounts, args, recent: r }), slot: r.slot };
  }

  const handlers: Record<keyof typeof TX_ROUTES, (wallet: string, body: any, res: Response) => Promise<void>> = { // eslint-disable-line @typescript-eslint/no-explicit-any
    'place-order': async (wallet, b: { market: string; side: SideLabel; priceBps: number; quantity: string; orderType: number }, res) => {
      const m = await market(b.market, [MarketState.Trading], 'market is not trading');
      const { tickSizeBps } = await liveProgramConfig(db);
      const quantity = BigInt(b.quantity);
      const problems = [...check('priceBps', orderPriceProblem(b.priceBps, tickSizeBps)), ...check('quantity', orderQuantityProblem(quantity))];
      if (problems.length) refuse(problems);
      const { built } = await build('place_order', wallet, { owner: wallet, market: String(m.address), settlement_mint: String(m.settlement_mint) }, {
        side: SIDE_LABELS.indexOf(b.side), priceBps: b.priceBps, quantity, orderType: b.orderType,
      });
      send(res, built);
    },
    'cancel-order': async (wallet, b: { market: string; orderId: string }, res) => {
      const m = await market(b.market, [MarketState.Trading], 'market is not trading');
      const o = await orderInMarket(db, String(m.address), b.orderId);
      // Another wallet's order reads as absent: no hint of what others hold.
      if (!o || o.owner !== wallet) refuse(check('orderId', 'no order with this id belongs to the signing wallet in this market'));
      if (![0, 4, 5].includes(Number(o!.status_code))) refuse(check('orderId', 'order is not resting on the book'));
      const { built, slot } = await build('cancel_order', wallet, { owner: wallet, market: String(m.address) }, { orderId: BigInt(b.orderId) });
      await recordCancelRequest(primary, { market: String(m.address), orderId: b.orderId, owner: wallet, validUntilSlot: slot + CANCEL_VALID_SLOTS });
      send(res, built);
    },
    'claim-payout': async (wallet, b: { market: string }, res) => {
      const m = await market(b.market, [MarketState.Resolved, MarketState.Closed], 'market is not resolved');
      const p = await positionInMarket(db, String(m.address), wallet);
      if (!p) refuse(check('market', 'the signing wallet has no position in this market'));
      if (p!.settled) refuse(check('market', 'position already claimed'));
      const { built } = await build('claim_payout', wallet, { owner: wallet, market: String(m.address), settlement_mint: String(m.settlement_mint) }, {});
      send(res, built);
    },
    'claim-referral': async (wallet, b: { settlementMint: string }, res) => {
      const e = await referrerAccumulated(db, wallet, b.settlementMint);
      if (!e || BigInt(e.accumulated) <= 0n) refuse(check('settlementMint', 'no referral earnings to claim in this mint'));
      const { built } = await build('claim_referral', wallet, { referrer: wallet, settlement_mint: b.settlementMint }, {});
      send(res, built);
    },
    'claim-creator-fees': async (wallet, b: { market: string }, res) => {
      const m = await market(b.market, [MarketState.Resolved, MarketState.Closed], 'market is not resolved');
      if (BigInt(String(m.accumulated_creator_fees)) <= 0n) refuse(check('market', 'no creator fees to claim'));
      const { built } = await build('claim_creator_fees', wallet, {
        caller: wallet, market: String(m.address), creator: String(m.creator), settlement_mint: String(m.settlement_mint),
      }, {});
      send(res, built);
    },
  };

  return (Object.keys(TX_ROUTES) as (keyof typeof TX_ROUTES)[]).map((name) =>
    route({
      method: 'POST',
      path: `/tx/${name}`,
      access: { by: 'wallet', tier: 'sensitive' },
      // 451 under the jurisdiction policy, which covers /tx/* by default (D-144).
      errors: ['GEO_BLOCKED'],
      query: NO_PARAMS,
      body: BODIES[name],
      handler: async (req, res, { body }) => handlers[name](req.wallet!, body, res),
    }),
  );
}

/** D-8: a built cancel that has not landed within this many slots of its blockhash failed. */
export const CANCEL_VALID_SLOTS = 150;
