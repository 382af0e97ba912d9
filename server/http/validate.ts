import Joi from 'joi';
import { ApiError, clip, MAX_ECHO } from './errors';

/** Longest message of one rejected parameter, echoed values included (D-79). */
const MAX_MESSAGE = 256;

/**
 * Joi's message with the client's input in it (the value, and the name of an unknown
 * parameter) cut to MAX_ECHO characters (D-79): a 14 KB value used to come back twice.
 */
export function boundedMessage(d: Joi.ValidationErrorItem): string {
  let m = d.message;
  for (const echoed of [d.context?.value, d.context?.label, d.context?.key]) {
    if (typeof echoed === 'string' && echoed.length > MAX_ECHO) m = m.split(echoed).join(clip(echoed));
  }
  return clip(m, MAX_MESSAGE);
}

/** Validates `req.query` or `req.params`; unknown keys and wrong values are 400 INVALID_PARAMETER. */
export function parse<T>(schema: Joi.ObjectSchema<T>, input: unknown, where: 'query' | 'path'): T {
  const { value, error } = schema.validate(input ?? {}, { abortEarly: false, convert: true, errors: { wrap: { label: false } } });
  if (error) {
    const details = error.details.map((d) => ({ field: clip(`${where}.${d.path.join('.')}`, MAX_ECHO + 8), message: boundedMessage(d) }));
    throw new ApiError('INVALID_PARAMETER', `Invalid ${where} parameter: ${details[0]?.message ?? 'invalid value'}`, details);
  }
  return value as T;
}

/** Validates a JSON body; unknown fields and wrong values are 400 VALIDATION_ERROR with one detail each (D-14). */
export function parseBody<T>(schema: Joi.ObjectSchema<T>, input: unknown): T {
  const { value, error } = schema.validate(input ?? {}, { abortEarly: false, convert: false, errors: { wrap: { label: false } } });
  if (error) {
    const details = error.details.map((d) => ({ field: clip(`body.${d.path.join('.')}`, MAX_ECHO + 8), message: boundedMessage(d) }));
    throw new ApiError('VALIDATION_ERROR', `Invalid request body: ${details[0]?.message ?? 'invalid value'}`, details);
  }
  return value as T;
}

/** For endpoints that take no query parameters: any parameter is refused. Built once. */
export const NO_PARAMS = Joi.object({});

export const limit = (dflt: number, max: number) => Joi.number().integer().min(1).max(max).default(dflt);
export const offset = (max = 1_000_000) => Joi.number().integer().min(0).max(max).default(0);
export const base58Address = Joi.string().pattern(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'base58 address');
export const base58Signature = Joi.string().pattern(/^[1-9A-HJ-NP-Za-km-z]{64,90}$/, 'base58 signature');
