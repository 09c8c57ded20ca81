// Kubernetes timestamps: RFC 3339 in UTC with second precision (metav1.Time).

/** `2026-01-01T00:00:05Z` for the given epoch milliseconds (sub-second part dropped). */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** Epoch milliseconds of an RFC 3339 timestamp, or undefined when it does not parse. */
export function parseTimestamp(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * A short age like kubectl prints it: `45s`, `3m12s`, `17m`, `5h3m`, `30h`, `3d4h`, `12d`,
 * `400d`. Negative ages (clock skew) print as `0s`.
 */
export function humanAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const m = Math.floor(s / 60);
  const h = Math.floor(m / 60);
  const d = Math.floor(h / 24);
  if (s < 120) return `${s}s`;
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  if (h < 192) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
  return `${d}d`;
}
