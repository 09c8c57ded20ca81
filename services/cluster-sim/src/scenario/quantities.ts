// Durations ("5s", "1m30s", "250ms", or a bare number of seconds) and CPU quantities
// ("4", "3500m", 0.5) as scenarios write them.

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds, or undefined when `v` is not a duration. */
export function parseDuration(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 ? Math.round(v * 1000) : undefined;
  if (typeof v !== 'string') return undefined;
  const text = v.trim();
  if (text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  let total = 0;
  let rest = text;
  while (rest !== '') {
    const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)/.exec(rest);
    if (!m) return undefined;
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    rest = rest.slice(m[0].length);
  }
  return Math.round(total);
}

/** Millicores, or undefined when `v` is not a CPU quantity. */
export function parseCpu(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 ? Math.round(v * 1000) : undefined;
  if (typeof v !== 'string') return undefined;
  const m = /^(\d+(?:\.\d+)?)(m?)$/.exec(v.trim());
  if (!m) return undefined;
  return m[2] === 'm' ? Math.round(Number(m[1])) : Math.round(Number(m[1]) * 1000);
}

/** Canonical quantity text: whole cores as `4`, otherwise millicores as `3500m`. */
export function formatCpu(millis: number): string {
  return millis % 1000 === 0 ? String(millis / 1000) : `${millis}m`;
}
