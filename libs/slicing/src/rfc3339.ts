// RFC 3339 timestamps with nanosecond precision, without a clock: Kubernetes times are
// compared and re-printed (RFC3339Nano, UTC), and JavaScript Dates stop at milliseconds.

/** A point in time: whole seconds since the epoch plus 0..999999999 nanoseconds. */
export interface Instant {
  readonly seconds: number;
  readonly nanos: number;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9})\d*)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Parses an RFC 3339 timestamp; null for anything else (including the empty string). */
export function parseRFC3339(s: string | undefined | null): Instant | null {
  if (s == null) return null;
  const m = RFC3339.exec(s);
  if (!m) return null;
  const [y, mo, d, h, mi, se] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return null;
  let seconds = Date.UTC(y, mo - 1, d, h, mi, se) / 1000;
  if (m[8] === undefined) {
    const offset = (Number(m[10]) * 60 + Number(m[11])) * 60;
    seconds += m[9] === '+' ? -offset : offset;
  }
  const nanos = m[7] ? Number(m[7].padEnd(9, '0')) : 0;
  return { seconds, nanos };
}

/** Negative, zero or positive as `a` is before, equal to or after `b`. */
export function compareInstants(a: Instant, b: Instant): number {
  return a.seconds !== b.seconds ? a.seconds - b.seconds : a.nanos - b.nanos;
}

/** Go's RFC3339Nano in UTC: fractional seconds only when non-zero, trailing zeros trimmed. */
export function formatRFC3339Nano(t: Instant): string {
  const base = new Date(t.seconds * 1000).toISOString().slice(0, 19);
  if (t.nanos === 0) return `${base}Z`;
  return `${base}.${String(t.nanos).padStart(9, '0').replace(/0+$/, '')}Z`;
}
