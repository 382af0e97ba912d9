/**
 * The errors the test API server answers with, worded as the real one words them: `ApiError`
 * carries what a `Status` object says (code, reason, message, details), and one builder per
 * refusal the store makes about an object.
 */
import type { FieldError } from './crd-schema';
import type { Json } from './fields';
import type { ResourceType } from './resources';

/** An error the API server answers with a `Status` object. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details: Json = {},
  ) {
    super(message);
  }
}

/** `plural` or `plural.group`, as messages name a resource. */
const resourceName = (t: ResourceType) => `${t.plural}${t.group ? `.${t.group}` : ''}`;

export function detailsOf(t: ResourceType, name: string): Json {
  return { name, ...(t.group ? { group: t.group } : {}), kind: t.plural };
}

export function notFound(t: ResourceType, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${resourceName(t)} "${name}" not found`, detailsOf(t, name));
}

export function alreadyExists(t: ResourceType, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${resourceName(t)} "${name}" already exists`, detailsOf(t, name));
}

export function conflict(t: ResourceType, name: string): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${resourceName(t)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    detailsOf(t, name),
  );
}

export function invalid(t: ResourceType, name: string, errors: FieldError[]): ApiError {
  const what = `${t.kind}${t.group ? `.${t.group}` : ''} "${name}"`;
  return new ApiError(422, 'Invalid', `${what} is invalid: ${errors.map((e) => `${e.field}: ${e.message}`).join(', ')}`, {
    ...detailsOf(t, name),
    kind: t.kind,
    causes: errors.map((e) => ({ reason: 'FieldValueInvalid', message: e.message, field: e.field })),
  });
}
