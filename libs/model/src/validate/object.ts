// The envelope every kind shares: a JSON object with the right kind and apiVersion.

import type { Ctx, JsonObject } from './fields.ts';
import { fail, isAbsent, isPlainObject, quote, typeName } from './fields.ts';
import type { MetaRules } from './meta.ts';
import { objectLabel } from './meta.ts';
import { unsetIfEmpty } from './zero-values.ts';

/** Field path used when the value is not an object at all. */
export const ROOT_PATH = '<object>';

/**
 * Checks that `raw` is an object of `kind` (an absent or empty kind is accepted: the caller chose
 * the validator) with one of `apiVersions` (or none), and returns it with the error context.
 */
export function openObject(
  kind: string,
  raw: unknown,
  where: string,
  meta: MetaRules,
  apiVersions: readonly string[],
): { readonly ctx: Ctx; readonly o: JsonObject } {
  if (!isPlainObject(raw)) fail({ object: where }, ROOT_PATH, `must be a JSON object (got ${typeName(raw)})`);
  const ctx: Ctx = { object: objectLabel(kind, raw, where, meta.namespaced) };
  // TypeMeta's fields are plain Go strings: "" is unset, as absent (F.13).
  const k = unsetIfEmpty(raw['kind']);
  if (!isAbsent(k) && k !== kind) fail(ctx, 'kind', `must be ${kind} (got ${typeof k === 'string' ? quote(k) : typeName(k)})`);
  const v = unsetIfEmpty(raw['apiVersion']);
  if (!isAbsent(v) && !apiVersions.includes(v as string)) {
    fail(ctx, 'apiVersion', `must be ${apiVersions.join(' or ')} (got ${typeof v === 'string' ? quote(v) : typeName(v)})`);
  }
  return { ctx, o: raw };
}
