import Joi from 'joi';
import { ApiError } from './errors';

/** Validates `req.query` or `req.params`; unknown keys and wrong values are 400 INVALID_PARAMETER. */
export function parse<T>(schema: Joi.ObjectSchema<T>, input: unknown, where: 'query' | 'path'): T {
  const { value, error } = schema.validate(input ?? {}, { abortEarly: false, convert: true, errors: { wrap: { label: false } } });
  if (error) {
    throw new ApiError(
      'INVALID_PARAMETER',
      `Invalid ${where} parameter: ${error.details[0]?.message ?? 'invalid value'}`,
      error.details.map((d) => ({ field: `${where}.${d.path.join('.')}`, message: d.message })),
    );
  }
  return value as T;
}

/** For endpoints that take no query parameters: any parameter is refused. Built once. */
export const NO_PARAMS = Joi.object({});

export const limit = (dflt: number, max: number) => Joi.number().integer().min(1).max(max).default(dflt);
export const offset = (max = 1_000_000) => Joi.number().integer().min(0).max(max).default(0);
export const base58Address = Joi.string().pattern(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'base58 address');
export const base58Signature = Joi.string().pattern(/^[1-9A-HJ-NP-Za-km-z]{64,90}$/, 'base58 signature');
