// Pure helpers of the backbone section: percentiles (also over changes that never arrived),
// the services' /metrics text and deltas of its histograms, RSS from /proc/<pid>/status, the
// targets and their verdicts, and the one-line JSON summary `--json` prints. No I/O here:
// test/bench/summary.test.ts covers it.

/** The keys of the `--json` summary, in the order they are printed. */
export const FIGURE_KEYS = [
  'burst_p99_ms',
  'sustained_rate',
  'sustained_reflected_ratio',
  'sustained_p99_ms',
  'saturation_events_per_s',
  'raw_publish_per_s',
  'one_change_100k_ms',
  'view_update_100k_ms',
  'restart_ready_100k_ms',
  'rss_mib_per_100k_pods',
] as const;

export type FigureKey = (typeof FIGURE_KEYS)[number];
/** null: not measured (the reason goes to stderr). */
export type Figures = Record<FigureKey, number | null>;

export function emptyFigures(): Figures {
  return Object.fromEntries(FIGURE_KEYS.map((k) => [k, null])) as Figures;
}

/** Nearest-rank percentile of ascending `sorted` (p in (0, 100]); NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] ?? NaN;
}

export interface CensoredPercentile {
  readonly value: number;
  /** The value is a lower bound: the rank fell on a change that had not arrived when we stopped waiting. */
  readonly lowerBound: boolean;
}

/**
 * Percentile over observed latencies plus latencies known only to be at least some value
 * (changes not seen in time, each with how long it had waited). The result is exact when the
 * rank falls on an observed latency, else a lower bound of the true percentile.
 */
export function censoredPercentile(observed: readonly number[], atLeast: readonly number[], p: number): CensoredPercentile {
  const all = [...observed.map((v) => ({ v, c: false })), ...atLeast.map((v) => ({ v, c: true }))].sort((a, b) => a.v - b.v || Number(a.c) - Number(b.c));
  if (all.length === 0) return { value: NaN, lowerBound: false };
  const rank = Math.min(all.length, Math.max(1, Math.ceil((p / 100) * all.length)));
  // Any censored value at or below the rank could really lie above it: then the rank's true
  // value is unknown and this is only a lower bound.
  const lowerBound = all.slice(0, rank).some((e) => e.c);
  return { value: all[rank - 1]?.v ?? NaN, lowerBound };
}

/** One series value as prom-client's `metric.get()` returns it. */
export interface MetricValue {
  readonly labels: Readonly<Record<string, string | number | undefined>>;
  readonly value: number;
  readonly metricName?: string;
}

export interface HistogramTotals {
  readonly count: number;
  /** Seconds, as Prometheus histograms count them. */
  readonly sum: number;
}

/** Sum and count of histogram `name` over the series whose labels include `labels`. */
export function histogramTotals(values: readonly MetricValue[], name: string, labels: Readonly<Record<string, string>> = {}): HistogramTotals {
  let count = 0;
  let sum = 0;
  for (const v of values) {
    if (!Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want)) continue;
    if (v.metricName === `${name}_count`) count += v.value;
    else if (v.metricName === `${name}_sum`) sum += v.value;
  }
  return { count, sum };
}

/**
 * The series of a Prometheus text exposition (what a service's /metrics serves), one
 * MetricValue per sample line with `metricName` set (histograms give `<name>_bucket`, `_sum`
 * and `_count` lines, so histogramTotals reads them as it reads prom-client's own values).
 * Comments, blank and malformed lines are skipped; `+Inf`/`-Inf`/`NaN` values are kept.
 */
export function parseExposition(text: string): MetricValue[] {
  const out: MetricValue[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0];
    if (name === undefined) continue;
    let i = name.length;
    const labels: Record<string, string> = {};
    if (line[i] === '{') {
      i++;
      let ok = false;
      while (i < line.length) {
        while (line[i] === ' ' || line[i] === ',') i++;
        if (line[i] === '}') {
          i++;
          ok = true;
          break;
        }
        const key = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i))?.[0];
        if (key === undefined || line[i + key.length] !== '=' || line[i + key.length + 1] !== '"') break;
        i += key.length + 2;
        let value = '';
        for (; i < line.length && line[i] !== '"'; i++) {
          if (line[i] === '\\' && i + 1 < line.length) {
            i++;
            value += line[i] === 'n' ? '\n' : line[i];
          } else value += line[i];
        }
        if (line[i] !== '"') break;
        i++;
        labels[key] = value;
      }
      if (!ok) continue;
    }
    const token = line.slice(i).trim().split(/\s+/)[0] ?? '';
    const value = token === '+Inf' || token === 'Inf' ? Infinity : token === '-Inf' ? -Infinity : token === 'NaN' ? NaN : token === '' ? undefined : Number(token);
    if (value === undefined || (Number.isNaN(value) && token !== 'NaN')) continue;
    out.push({ metricName: name, labels, value });
  }
  return out;
}

/** Resident set size in bytes from the text of /proc/<pid>/status (its `VmRSS: <n> kB` line); null when absent. */
export function vmRssBytes(status: string): number | null {
  const m = /^VmRSS:\s+(\d+)\s+kB\s*$/m.exec(status);
  return m === null ? null : Number(m[1]) * 1024;
}

export interface HistogramDelta {
  /** Observations between the two readings. */
  readonly count: number;
  /** Their total, in milliseconds. */
  readonly totalMs: number;
  /** totalMs / count; NaN when nothing was observed. */
  readonly meanMs: number;
}

export function histogramDelta(before: HistogramTotals, after: HistogramTotals): HistogramDelta {
  const count = after.count - before.count;
  const totalMs = (after.sum - before.sum) * 1000;
  return { count, totalMs, meanMs: count > 0 ? totalMs / count : NaN };
}

/** Middle value (the lower of the two middles); NaN when empty. */
export function median(values: readonly number[]): number {
  const s = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  return s.length === 0 ? NaN : (s[Math.floor((s.length - 1) / 2)] ?? NaN);
}

/** `bytes` held by `pods` pods, scaled to 100k pods, in MiB. */
export function mibPer100kPods(bytes: number, pods: number): number {
  return pods > 0 ? (bytes / 2 ** 20) * (100_000 / pods) : NaN;
}

export interface Target {
  readonly op: '<=' | '>=';
  readonly value: number;
}

/** The goals of the backbone section; saturation_ratio is saturation_events_per_s / raw_publish_per_s. */
export const TARGETS = {
  burst_p99_ms: { op: '<=', value: 1000 },
  sustained_reflected_ratio: { op: '>=', value: 0.99 },
  sustained_p99_ms: { op: '<=', value: 500 },
  saturation_ratio: { op: '>=', value: 0.3 },
  one_change_100k_ms: { op: '<=', value: 20 },
  view_update_100k_ms: { op: '<=', value: 20 },
  restart_ready_100k_ms: { op: '<=', value: 5000 },
} as const satisfies Record<string, Target>;

export type Verdict = 'pass' | 'FAIL' | 'n/a';

/** pass/FAIL against `target`; n/a when the figure is missing. A lower bound above a `<=` target fails; below it nothing is known. */
export function verdict(value: number | null | undefined, target: Target, lowerBound = false): Verdict {
  if (value == null || !Number.isFinite(value)) return 'n/a';
  if (target.op === '<=') return value <= target.value ? (lowerBound ? 'n/a' : 'pass') : 'FAIL';
  return value >= target.value ? 'pass' : 'FAIL';
}

/** a / b, or null when either is missing or b is not positive. */
export function ratio(a: number | null, b: number | null): number | null {
  return a == null || b == null || !Number.isFinite(a) || !Number.isFinite(b) || b <= 0 ? null : a / b;
}

const DECIMALS: Record<FigureKey, number> = {
  burst_p99_ms: 1,
  sustained_rate: 1,
  sustained_reflected_ratio: 4,
  sustained_p99_ms: 1,
  saturation_events_per_s: 0,
  raw_publish_per_s: 0,
  one_change_100k_ms: 2,
  view_update_100k_ms: 2,
  restart_ready_100k_ms: 0,
  rss_mib_per_100k_pods: 1,
};

export interface JsonSummary {
  /** One line of JSON: exactly FIGURE_KEYS, numbers or null. */
  readonly line: string;
  /** One sentence per null figure, saying why. */
  readonly missing: readonly string[];
}

/** The `--json` line; non-finite numbers become null, and every null gets a reason (`reasons[key]`, else a generic one). */
export function jsonSummary(figures: Readonly<Partial<Figures>>, reasons: Readonly<Partial<Record<FigureKey, string>>> = {}): JsonSummary {
  const out: Record<string, number | null> = {};
  const missing: string[] = [];
  for (const key of FIGURE_KEYS) {
    const v = figures[key];
    if (v == null || !Number.isFinite(v)) {
      out[key] = null;
      missing.push(`${key} is null: ${reasons[key] ?? 'not measured in this run'}`);
    } else {
      const f = 10 ** DECIMALS[key];
      out[key] = Math.round(v * f) / f;
    }
  }
  return { line: JSON.stringify(out), missing };
}

/** The backbone section's phases: the 100k-endpoint Service, and many small Services. */
export const BACKBONE_PHASES = ['large', 'many'] as const;

/** The phases BENCH_BACKBONE_PHASES names (comma-separated), every phase when unset; throws on an unknown name. */
export function phasesWanted(env: string | undefined): ReadonlySet<string> {
  if (env === undefined || env.trim() === '') return new Set(BACKBONE_PHASES);
  const names = env.split(',').map((n) => n.trim()).filter((n) => n !== '');
  const unknown = names.filter((n) => !(BACKBONE_PHASES as readonly string[]).includes(n));
  if (unknown.length > 0) throw new Error(`BENCH_BACKBONE_PHASES: unknown phase ${unknown.join(', ')} (have: ${BACKBONE_PHASES.join(', ')})`);
  return new Set(names);
}
