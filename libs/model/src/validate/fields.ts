// Typed readers for untrusted JSON. Every reader takes the value, its JSON path and the
// context naming the object, and either returns the typed value or throws an
// InvalidObjectError pointing at that path. Readers build fresh values and never touch their
// input, so a rejected object leaves nothing half-normalised behind.
//
// What counts as unset follows the API server's Go decoding (docs/rules.md, F.13): JSON `null`
// for any optional field, an empty optional list or map, and — for plain Go fields, marked with
// the helpers of zero-values.ts — "", 0 and false.

import { InvalidObjectError } from '../errors.ts';

/** Which object is being read, e.g. `Service default/web` or `item 3 (kind Pod)`. */
export interface Ctx {
  readonly object: string;
}

/** Longest string accepted where no sharper rule applies. */
export const MAX_STRING = 1024;
/** Longest array accepted where the API sets no sharper limit. */
export const MAX_ARRAY = 20_000;
/** Upper bound on map entries (labels, selectors, allocatable) where the API sets none. */
export const MAX_MAP_ENTRIES = 1000;

export type JsonObject = Readonly<Record<string, unknown>>;

export function fail(ctx: Ctx, path: string, reason: string): never {
  throw new InvalidObjectError(ctx.object, path, reason);
}

/**
 * A short, single-line, ASCII-only rendering of an untrusted string for error messages:
 * JSON-style quoting with every non-printable or non-ASCII character escaped, cut at 64.
 */
export function quote(s: string): string {
  const cut = s.length > 64 ? s.slice(0, 64) : s;
  let out = '"';
  for (const ch of cut) {
    const c = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (c >= 0x20 && c < 0x7f) out += ch;
    else if (c <= 0xffff) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += `\\u{${c.toString(16)}}`;
  }
  return `${out}"${s.length > 64 ? `... (${s.length} characters)` : ''}`;
}

/** Renders a JSON type for "must be a string (got number)" messages. */
export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

export const isAbsent = (v: unknown): v is null | undefined => v === null || v === undefined;

export function isPlainObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function reqObject(ctx: Ctx, v: unknown, path: string): JsonObject {
  if (!isPlainObject(v)) fail(ctx, path, isAbsent(v) ? 'is required' : `must be an object (got ${typeName(v)})`);
  return v;
}

export function optObject(ctx: Ctx, v: unknown, path: string): JsonObject | undefined {
  return isAbsent(v) ? undefined : reqObject(ctx, v, path);
}

// With the `u` flag a well-formed surrogate pair is one code point, so only lone halves match.
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * Why `s` cannot be kept, or null. Postgres (text and jsonb alike) refuses U+0000 and lone UTF-16
 * surrogates, so an object holding one would fail every write of the batch it is in, again on
 * every redelivery, and stall its partition: it is rejected here instead. The API server accepts
 * U+0000 in free text (annotation values, say) — a deliberate difference; a lone surrogate it can
 * never send (Go decodes one to U+FFFD), so only a hostile server or publisher has one.
 */
export function unstorableProblem(s: string): string | null {
  if (s.includes('\u0000')) return 'must not contain U+0000 (NUL): it cannot be stored';
  if (LONE_SURROGATE.test(s)) return 'must not contain a lone UTF-16 surrogate: it is not Unicode text';
  return null;
}

/** A string of at most `max` characters, its content not yet checked. */
function reqText(ctx: Ctx, v: unknown, path: string, max: number): string {
  if (typeof v !== 'string') fail(ctx, path, isAbsent(v) ? 'is required' : `must be a string (got ${typeName(v)})`);
  if (v.length > max) fail(ctx, path, `must be at most ${max} characters (got ${v.length})`);
  return v;
}

export function reqString(ctx: Ctx, v: unknown, path: string, max = MAX_STRING): string {
  const s = reqText(ctx, v, path, max);
  const bad = unstorableProblem(s);
  if (bad !== null) fail(ctx, path, bad);
  return s;
}

export function optString(ctx: Ctx, v: unknown, path: string, max = MAX_STRING): string | undefined {
  return isAbsent(v) ? undefined : reqString(ctx, v, path, max);
}

/** A string checked by a `…Problem` rule from names.ts (or any rule of that shape). */
export function reqChecked(ctx: Ctx, v: unknown, path: string, problem: (s: string) => string | null): string {
  // The field's own rule first: its reason is the API server's.
  const s = reqText(ctx, v, path, MAX_STRING);
  const p = problem(s) ?? unstorableProblem(s);
  if (p !== null) fail(ctx, path, `${quote(s)} ${p}`);
  return s;
}

export function optChecked(ctx: Ctx, v: unknown, path: string, problem: (s: string) => string | null): string | undefined {
  return isAbsent(v) ? undefined : reqChecked(ctx, v, path, problem);
}

export function optBool(ctx: Ctx, v: unknown, path: string): boolean | undefined {
  if (isAbsent(v)) return undefined;
  if (typeof v !== 'boolean') fail(ctx, path, `must be a boolean (got ${typeName(v)})`);
  return v;
}

export function reqInt(ctx: Ctx, v: unknown, path: string, min: number, max: number): number {
  if (typeof v !== 'number') fail(ctx, path, isAbsent(v) ? 'is required' : `must be an integer (got ${typeName(v)})`);
  if (!Number.isInteger(v)) fail(ctx, path, `must be an integer (got ${v})`);
  if (v < min || v > max) fail(ctx, path, `must be between ${min} and ${max} (got ${v})`);
  return v;
}

export function optInt(ctx: Ctx, v: unknown, path: string, min: number, max: number): number | undefined {
  return isAbsent(v) ? undefined : reqInt(ctx, v, path, min, max);
}

export function reqEnum<T extends string>(ctx: Ctx, v: unknown, path: string, allowed: readonly T[]): T {
  const s = reqText(ctx, v, path, MAX_STRING);
  if (!(allowed as readonly string[]).includes(s)) fail(ctx, path, `${quote(s)} must be one of ${allowed.join(', ')}`);
  return s as T;
}

export function optEnum<T extends string>(ctx: Ctx, v: unknown, path: string, allowed: readonly T[]): T | undefined {
  return isAbsent(v) ? undefined : reqEnum(ctx, v, path, allowed);
}

export function reqArray(ctx: Ctx, v: unknown, path: string, max = MAX_ARRAY): readonly unknown[] {
  if (!Array.isArray(v)) fail(ctx, path, isAbsent(v) ? 'is required' : `must be an array (got ${typeName(v)})`);
  if (v.length > max) fail(ctx, path, `must have at most ${max} entries (got ${v.length})`);
  return v;
}

export function optArray(ctx: Ctx, v: unknown, path: string, max = MAX_ARRAY): readonly unknown[] | undefined {
  return isAbsent(v) ? undefined : reqArray(ctx, v, path, max);
}

/**
 * Maps an optional array element by element; element paths are `path[i]`. An empty array is
 * unset: every optional list of the Kubernetes types is `omitempty`, so the server cannot tell
 * `[]` from an absent list.
 */
export function optList<T>(ctx: Ctx, v: unknown, path: string, each: (item: unknown, path: string) => T, max = MAX_ARRAY): T[] | undefined {
  const arr = optArray(ctx, v, path, max);
  if (arr === undefined || arr.length === 0) return undefined;
  return arr.map((item, i) => each(item, `${path}[${i}]`));
}

/** The path of a map entry: `metadata.labels["app"]`, quoted so hostile keys stay on one line. */
export const keyPath = (path: string, key: string): string => `${path}[${quote(key)}]`;

/**
 * A string-to-string map with checked keys and values; returns a fresh object, or undefined for
 * an empty map (unset, like an empty list). A `null` value is read as "", as Go decodes it into
 * a map of strings. `value` returns a problem string (or null) for each value.
 */
export function optStringMap(
  ctx: Ctx,
  v: unknown,
  path: string,
  key: (s: string) => string | null,
  value: (s: string) => string | null,
  maxEntries = MAX_MAP_ENTRIES,
): Record<string, string> | undefined {
  const o = optObject(ctx, v, path);
  if (o === undefined) return undefined;
  const entries = Object.entries(o);
  if (entries.length === 0) return undefined;
  if (entries.length > maxEntries) fail(ctx, path, `must have at most ${maxEntries} entries (got ${entries.length})`);
  const out: Record<string, string> = {};
  for (const [k, raw] of entries) {
    const kp = key(k) ?? unstorableProblem(k);
    if (kp !== null) fail(ctx, keyPath(path, k), `key ${quote(k)} ${kp}`);
    const val = raw === null ? '' : raw;
    if (typeof val !== 'string') fail(ctx, keyPath(path, k), `must be a string (got ${typeName(val)})`);
    const vp = value(val) ?? unstorableProblem(val);
    if (vp !== null) fail(ctx, keyPath(path, k), `${quote(val)} ${vp}`);
    out[k] = val;
  }
  return out;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** An RFC 3339 timestamp (metav1.Time / MicroTime text). */
export function optTimestamp(ctx: Ctx, v: unknown, path: string): string | undefined {
  const s = optString(ctx, v, path, 64);
  if (s === undefined) return undefined;
  if (!RFC3339.test(s) || Number.isNaN(Date.parse(s))) fail(ctx, path, `${quote(s)} must be an RFC 3339 timestamp`);
  return s;
}

/** Copies only the keys whose value is not undefined, so optional fields stay absent. */
export function compact<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  // for…in instead of Object.entries: validation runs per object in every service, and the
  // entry arrays were a measurable share of the slicer's CPU. `o` is always a plain literal.
  const src = o as Record<string, unknown>;
  for (const k in src) {
    const v = src[k];
    if (v !== undefined) out[k] = v;
  }
  return out as T;
}

/**
 * compact, or undefined when nothing is left: for a plain Go struct field (a Pod's status, a
 * Node's spec), where `{}`, `null` and an absent key all decode to the same zero struct.
 */
export function compactOrUnset<T extends object>(o: T): T | undefined {
  const out = compact(o);
  return Object.keys(out).length === 0 ? undefined : out;
}
