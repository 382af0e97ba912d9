import Joi from 'joi';
import type { RawTransaction } from '../../core/events';

/** Anything that accepts pushed transactions: the webhook source, or the RPC source's cache. */
export interface TransactionSink {
  offer(transactions: RawTransaction[]): void;
}

const base58 = Joi.string().pattern(/^[1-9A-HJ-NP-Za-km-z]+$/).max(100);
const instruction = Joi.object({
  programIdIndex: Joi.number().integer().min(0).max(255),
  programId: base58,
  accounts: Joi.array().max(256),
  data: Joi.string().allow('').max(20_000),
  stackHeight: Joi.number().integer().allow(null),
}).unknown(true);

/** The `getTransaction` shape as far as the indexer reads it; other fields pass through. */
export const webhookBodySchema = Joi.array()
  .items(
    Joi.object({
      slot: Joi.number().integer().min(0).max(Number.MAX_SAFE_INTEGER).required(),
      blockTime: Joi.number().integer().allow(null).required(),
      version: Joi.alternatives().try(Joi.string().valid('legacy'), Joi.number().valid(0)),
      transaction: Joi.object({
        signatures: Joi.array().items(base58.min(32).required()).min(1).required(),
        message: Joi.object({
          accountKeys: Joi.array().items(base58, Joi.object({ pubkey: base58.required() }).unknown(true)).max(256).required(),
          instructions: Joi.array().items(instruction).max(256).required(),
        })
          .unknown(true)
          .required(),
      })
        .unknown(true)
        .required(),
      meta: Joi.object({
        err: Joi.any(),
        logMessages: Joi.array().items(Joi.string().max(20_000)).max(10_000).allow(null),
        innerInstructions: Joi.array()
          .items(Joi.object({ index: Joi.number().integer().min(0).required(), instructions: Joi.array().items(instruction).required() }).unknown(true))
          .allow(null),
        loadedAddresses: Joi.object({ writable: Joi.array().items(base58).required(), readonly: Joi.array().items(base58).required() })
          .unknown(true)
          .allow(null),
      })
        .unknown(true)
        .allow(null)
        .required(),
    }).unknown(true),
  )
  .min(1)
  .max(1_000);
