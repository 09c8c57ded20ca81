// Errors that become Kubernetes Status responses. Messages follow upstream's wording so
// clients that match on them (and humans used to kubectl) see familiar text.
import { qualifiedResource } from './kinds.ts';
import type { KindInfo } from './kinds.ts';

export type StatusReason =
  | 'NotFound' | 'AlreadyExists' | 'Conflict' | 'Invalid' | 'BadRequest' | 'Expired' | 'Gone'
  | 'MethodNotAllowed' | 'UnsupportedMediaType' | 'NotAcceptable' | 'Forbidden' | 'InternalError';

export interface StatusCause {
  readonly reason: string;
  readonly message: string;
  readonly field?: string;
}

export interface StatusDetails {
  readonly name?: string;
  readonly group?: string;
  readonly kind?: string;
  readonly causes?: readonly StatusCause[];
}

export class ApiError extends Error {
  readonly code: number;
  readonly reason: StatusReason;
  readonly details?: StatusDetails;
  override readonly name = 'ApiError';
  constructor(
    code: number,
    reason: StatusReason,
    message: string,
    details?: StatusDetails,
  ) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.details = details;
  }
}

function detailsFor(info: KindInfo, name: string): StatusDetails {
  return { name, ...(info.group ? { group: info.group } : {}), kind: info.resource };
}

export function notFound(info: KindInfo, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualifiedResource(info)} "${name}" not found`, detailsFor(info, name));
}

export function alreadyExists(info: KindInfo, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualifiedResource(info)} "${name}" already exists`, detailsFor(info, name));
}

export function conflict(info: KindInfo, name: string, why: string): ApiError {
  return new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(info)} "${name}": ${why}`, detailsFor(info, name));
}

export const STALE_OBJECT = 'the object has been modified; please apply your changes to the latest version and try again';

/** 422 with one cause per offending field, e.g. `spec.ports[0].port: Invalid value: 0: must be ...`. */
export function invalid(info: KindInfo, name: string, causes: readonly StatusCause[]): ApiError {
  const text = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message)).join(', ');
  const message = `${info.kind} "${name}" is invalid: ${causes.length > 1 ? `[${text}]` : text}`;
  return new ApiError(422, 'Invalid', message, { ...detailsFor(info, name), kind: info.kind, causes });
}

export function fieldInvalid(field: string, value: unknown, why: string): StatusCause {
  return { reason: 'FieldValueInvalid', field, message: `Invalid value: ${JSON.stringify(value)}: ${why}` };
}

export function fieldRequired(field: string, detail?: string): StatusCause {
  return { reason: 'FieldValueRequired', field, message: detail ? `Required value: ${detail}` : 'Required value' };
}

export function fieldNotSupported(field: string, value: unknown, supported: readonly string[]): StatusCause {
  return { reason: 'FieldValueNotSupported', field, message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}` };
}

export function fieldDuplicate(field: string, value: unknown): StatusCause {
  return { reason: 'FieldValueDuplicate', field, message: `Duplicate value: ${JSON.stringify(value)}` };
}

export function fieldTooMany(field: string, count: number, max: number): StatusCause {
  return { reason: 'FieldValueTooMany', field, message: `Too many: ${count}: must have at most ${max} items` };
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

/** The 410 a watch or continue token gets once the history it needs is gone. */
export function expired(message: string): ApiError {
  return new ApiError(410, 'Expired', message);
}

/** The Status object the API returns for an error (also the ERROR watch event payload). */
export function statusOf(err: ApiError): Record<string, unknown> {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: err.message,
    reason: err.reason,
    ...(err.details ? { details: err.details } : {}),
    code: err.code,
  };
}
