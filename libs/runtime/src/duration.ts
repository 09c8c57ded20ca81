// Human-written durations (Go's time.ParseDuration subset) <-> milliseconds.

const UNIT_MS = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 } as const;
const WHOLE = /^(?:\d+(?:\.\d+)?(?:ms|h|m|s))+$/;
const PART = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;

/**
 * Parses `'500ms'`, `'1s'`, `'1.5s'`, `'2m'`, `'1h30m'` or `'0'` into milliseconds (possibly
 * fractional). Throws Error with the reason for anything else: a bare number other than 0,
 * a negative value, an unknown unit, or the empty string.
 */
export function parseDuration(text: string): number {
  if (text === '0') return 0;
  if (!WHOLE.test(text)) throw new Error('not a duration (e.g. 500ms, 1s, 2m, 1h30m)');
  let ms = 0;
  for (const [, amount, unit] of text.matchAll(PART)) ms += Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
  return ms;
}

/** Formats milliseconds the way parseDuration reads them: 90000 → '1m30s', 0 → '0s'. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  let out = '';
  for (const unit of ['h', 'm', 's'] as const) {
    const n = Math.floor(rest / UNIT_MS[unit]);
    if (n > 0) out += `${n}${unit}`;
    rest -= n * UNIT_MS[unit];
  }
  if (rest > 0) out += `${Number(rest.toFixed(3))}ms`;
  return sign + out;
}
