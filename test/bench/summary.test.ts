import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import {
  FIGURE_KEYS, TARGETS, censoredPercentile, emptyFigures, histogramDelta, histogramTotals, jsonSummary, median, mibPer100kPods, parseExposition, percentile, phasesWanted, ratio, verdict, vmRssBytes,
} from '../../bench/summary.ts';
import type { Figures, MetricValue, Target } from '../../bench/summary.ts';

const hundred = deepFreeze(Array.from({ length: 100 }, (_, i) => i + 1));

describe('percentile', () => {
  const cases: { name: string; sorted: readonly number[]; p: number; want: number }[] = [
    { name: 'p50 of 1..100 is the 50th value (nearest rank)', sorted: hundred, p: 50, want: 50 },
    { name: 'p99 of 1..100 is the 99th value, not the maximum', sorted: hundred, p: 99, want: 99 },
    { name: 'p100 is the maximum', sorted: hundred, p: 100, want: 100 },
    { name: 'a single sample is every percentile', sorted: [7], p: 99, want: 7 },
    { name: 'p99 of two samples is the larger', sorted: [1, 2], p: 99, want: 2 },
    { name: 'a tiny p still picks the first value', sorted: [3, 4, 5], p: 0.001, want: 3 },
  ];
  for (const tc of cases) it(tc.name, () => expect(percentile(deepFreeze([...tc.sorted]), tc.p)).toBe(tc.want));

  it('is NaN without samples', () => expect(percentile([], 99)).toBeNaN());
});

describe('censoredPercentile', () => {
  const cases: { name: string; observed: number[]; atLeast: number[]; p: number; want: { value: number; lowerBound: boolean } }[] = [
    { name: 'without censored changes it is the plain percentile', observed: [...hundred], atLeast: [], p: 99, want: { value: 99, lowerBound: false } },
    { name: 'one missing change in 100 leaves p99 exact when it waited longer than the rest', observed: hundred.slice(0, 99), atLeast: [5000], p: 99, want: { value: 99, lowerBound: false } },
    { name: 'two missing changes in 100 make p99 a lower bound at the first wait', observed: hundred.slice(0, 98), atLeast: [5000, 6000], p: 99, want: { value: 5000, lowerBound: true } },
    { name: 'a missing change that waited less than the rank makes the rank a lower bound', observed: [10, 20, 30, 40], atLeast: [5], p: 50, want: { value: 20, lowerBound: true } },
    { name: 'an observed value ties before a censored one of the same size', observed: [1, 2, 3], atLeast: [3], p: 75, want: { value: 3, lowerBound: false } },
    { name: 'only missing changes give a lower bound', observed: [], atLeast: [100, 200], p: 99, want: { value: 200, lowerBound: true } },
  ];
  for (const tc of cases) it(tc.name, () => expect(censoredPercentile(deepFreeze(tc.observed), deepFreeze(tc.atLeast), tc.p)).toEqual(tc.want));

  it('is NaN and exact without any change', () => expect(censoredPercentile([], [], 99)).toEqual({ value: NaN, lowerBound: false }));
});

describe('parseExposition', () => {
  const name = 'slicemesh_hints_reconcile_duration_seconds';
  const text = [
    `# HELP ${name} Duration of one service reconcile, by outcome.`,
    `# TYPE ${name} histogram`,
    `${name}_bucket{le="0.01",outcome="success",component="hints"} 4`,
    `${name}_bucket{le="+Inf",outcome="success",component="hints"} 5`,
    `${name}_sum{outcome="success",component="hints"} 0.05`,
    `${name}_count{outcome="success",component="hints"} 5`,
    `${name}_sum{outcome="error",component="hints"} 2`,
    `${name}_count{outcome="error",component="hints"} 1`,
    '',
    'slicemesh_slicer_reconciles_total{result="changed"} 40 1700000000000',
    'odd_label{path="a\\"b\\\\c,d}"} 1',
    'process_resident_memory_bytes 123456789',
    'broken{le="1" 3',
    'no_value',
  ].join('\n');
  const values = parseExposition(text);

  it('reads every sample line with its name and labels, skipping comments and malformed lines', () =>
    expect(values.map((v) => v.metricName)).toEqual([
      `${name}_bucket`, `${name}_bucket`, `${name}_sum`, `${name}_count`, `${name}_sum`, `${name}_count`, 'slicemesh_slicer_reconciles_total', 'odd_label', 'process_resident_memory_bytes',
    ]));
  it('reads +Inf in a label and a value after the labels, ignoring a timestamp', () => {
    expect(values[1]).toEqual({ metricName: `${name}_bucket`, labels: { le: '+Inf', outcome: 'success', component: 'hints' }, value: 5 });
    expect(values[6]).toEqual({ metricName: 'slicemesh_slicer_reconciles_total', labels: { result: 'changed' }, value: 40 });
  });
  it('unescapes quotes and backslashes in label values', () => expect(values[7]?.labels).toEqual({ path: 'a"b\\c,d}' }));
  it('feeds histogramTotals like prom-client values do', () => {
    expect(histogramTotals(values, name, { outcome: 'success' })).toEqual({ count: 5, sum: 0.05 });
    expect(histogramTotals(values, name)).toEqual({ count: 6, sum: 2.05 });
  });
  it('keeps +Inf and NaN values', () => expect(parseExposition('a +Inf\nb NaN\nc -Inf').map((v) => v.value)).toEqual([Infinity, NaN, -Infinity]));
  it('is empty for an empty text', () => expect(parseExposition('')).toEqual([]));
});

describe('vmRssBytes', () => {
  it('reads VmRSS in kB as bytes', () => expect(vmRssBytes('Name:\tnode\nVmPeak:\t  900 kB\nVmRSS:\t  123456 kB\nVmData:\t 1 kB\n')).toBe(123456 * 1024));
  it('is null without a VmRSS line (a kernel thread, or a process gone)', () => expect(vmRssBytes('Name:\tkthreadd\nState:\tS\n')).toBeNull());
});

describe('histogramTotals and histogramDelta', () => {
  const name = 'slicemesh_hints_reconcile_duration_seconds';
  const values: MetricValue[] = deepFreeze([
    { labels: { outcome: 'success', le: 0.01 }, value: 4, metricName: `${name}_bucket` },
    { labels: { outcome: 'success' }, value: 0.05, metricName: `${name}_sum` },
    { labels: { outcome: 'success' }, value: 5, metricName: `${name}_count` },
    { labels: { outcome: 'error' }, value: 2, metricName: `${name}_sum` },
    { labels: { outcome: 'error' }, value: 1, metricName: `${name}_count` },
    { labels: {}, value: 99, metricName: 'other_seconds_count' },
  ]);
  const cases: { name: string; labels?: Record<string, string>; want: { count: number; sum: number } }[] = [
    { name: 'sums every series of the histogram when no labels are given', want: { count: 6, sum: 2.05 } },
    { name: 'keeps only the series carrying the given labels', labels: { outcome: 'success' }, want: { count: 5, sum: 0.05 } },
    { name: 'is zero when no series matches', labels: { outcome: 'terminal' }, want: { count: 0, sum: 0 } },
  ];
  for (const tc of cases) it(tc.name, () => expect(histogramTotals(values, name, tc.labels)).toEqual(tc.want));

  const deltas: { name: string; before: { count: number; sum: number }; after: { count: number; sum: number }; want: { count: number; totalMs: number; meanMs: number } }[] = [
    { name: 'one observation between readings is its duration in ms', before: { count: 10, sum: 1 }, after: { count: 11, sum: 1.004 }, want: { count: 1, totalMs: 4, meanMs: 4 } },
    { name: 'several observations give their mean', before: { count: 0, sum: 0 }, after: { count: 4, sum: 0.02 }, want: { count: 4, totalMs: 20, meanMs: 5 } },
  ];
  for (const tc of deltas) {
    it(tc.name, () => {
      const d = histogramDelta(deepFreeze(tc.before), deepFreeze(tc.after));
      expect([d.count, d.totalMs, d.meanMs].map((v) => Math.round(v * 1e6) / 1e6)).toEqual([tc.want.count, tc.want.totalMs, tc.want.meanMs]);
    });
  }
  it('has a NaN mean when nothing was observed', () => expect(histogramDelta({ count: 3, sum: 1 }, { count: 3, sum: 1 }).meanMs).toBeNaN());
});

describe('verdict', () => {
  const atMost: Target = TARGETS.burst_p99_ms;
  const atLeast: Target = TARGETS.saturation_ratio;
  const cases: { name: string; value: number | null; target: Target; lowerBound?: boolean; want: string }[] = [
    { name: 'a latency at the limit passes', value: 1000, target: atMost, want: 'pass' },
    { name: 'a latency over the limit fails', value: 1000.1, target: atMost, want: 'FAIL' },
    { name: 'a rate ratio at the minimum passes', value: 0.3, target: atLeast, want: 'pass' },
    { name: 'a rate ratio under the minimum fails', value: 0.29, target: atLeast, want: 'FAIL' },
    { name: 'a missing figure is n/a', value: null, target: atMost, want: 'n/a' },
    { name: 'a NaN figure is n/a', value: NaN, target: atLeast, want: 'n/a' },
    { name: 'a lower bound over the limit fails', value: 2000, target: atMost, lowerBound: true, want: 'FAIL' },
    { name: 'a lower bound within the limit says nothing', value: 200, target: atMost, lowerBound: true, want: 'n/a' },
  ];
  for (const tc of cases) it(tc.name, () => expect(verdict(tc.value, tc.target, tc.lowerBound)).toBe(tc.want));
});

describe('small arithmetic', () => {
  const cases: { name: string; got: () => number | null; want: number | null }[] = [
    { name: 'ratio divides', got: () => ratio(6000, 20000), want: 0.3 },
    { name: 'ratio of a missing figure is null', got: () => ratio(null, 20000), want: null },
    { name: 'ratio to a zero rate is null', got: () => ratio(5, 0), want: null },
    { name: 'memory of 20k pods scales by five to 100k', got: () => mibPer100kPods(40 * 2 ** 20, 20_000), want: 200 },
    { name: 'memory of 100k pods is the delta itself', got: () => mibPer100kPods(300 * 2 ** 20, 100_000), want: 300 },
    { name: 'median of an odd count is the middle', got: () => median(deepFreeze([5, 1, 3])), want: 3 },
    { name: 'median of an even count is the lower middle', got: () => median(deepFreeze([4, 1, 3, 2])), want: 2 },
    { name: 'median skips NaN', got: () => median(deepFreeze([NaN, 8])), want: 8 },
  ];
  for (const tc of cases) it(tc.name, () => expect(tc.got()).toBe(tc.want));
});

describe('jsonSummary', () => {
  const full: Figures = deepFreeze({
    burst_p99_ms: 812.3456,
    sustained_rate: 499.987,
    sustained_reflected_ratio: 0.999912,
    sustained_p99_ms: 120.04,
    saturation_events_per_s: 7012.6,
    raw_publish_per_s: 19956.2,
    one_change_100k_ms: 3.14159,
    view_update_100k_ms: 1.23456,
    restart_ready_100k_ms: 1234.5,
    rss_mib_per_100k_pods: 310.26,
  });

  it('prints exactly the figure keys, in order, on one line', () => {
    const { line } = jsonSummary(full);
    expect(line).not.toContain('\n');
    expect(Object.keys(JSON.parse(line) as object)).toEqual([...FIGURE_KEYS]);
  });

  it('rounds each figure to its own precision', () => {
    expect(JSON.parse(jsonSummary(full).line)).toEqual({
      burst_p99_ms: 812.3,
      sustained_rate: 500,
      sustained_reflected_ratio: 0.9999,
      sustained_p99_ms: 120,
      saturation_events_per_s: 7013,
      raw_publish_per_s: 19956,
      one_change_100k_ms: 3.14,
      view_update_100k_ms: 1.23,
      restart_ready_100k_ms: 1235,
      rss_mib_per_100k_pods: 310.3,
    });
  });

  const nulls: { name: string; figures: Partial<Figures>; reasons?: Partial<Record<keyof Figures, string>>; wantNull: string[]; wantMissing: string[] }[] = [
    { name: 'a complete run names nothing missing', figures: full, wantNull: [], wantMissing: [] },
    {
      name: 'a null figure stays null and carries its reason',
      figures: { ...full, restart_ready_100k_ms: null },
      reasons: { restart_ready_100k_ms: 'the new slicer was not ready within 120 s' },
      wantNull: ['restart_ready_100k_ms'],
      wantMissing: ['restart_ready_100k_ms is null: the new slicer was not ready within 120 s'],
    },
    {
      name: 'non-finite numbers become null with a generic reason',
      figures: { ...full, sustained_p99_ms: Infinity, one_change_100k_ms: NaN },
      wantNull: ['sustained_p99_ms', 'one_change_100k_ms'],
      wantMissing: ['sustained_p99_ms is null: not measured in this run', 'one_change_100k_ms is null: not measured in this run'],
    },
    { name: 'an empty run is all nulls', figures: emptyFigures(), wantNull: [...FIGURE_KEYS], wantMissing: FIGURE_KEYS.map((k) => `${k} is null: not measured in this run`) },
  ];
  for (const tc of nulls) {
    it(tc.name, () => {
      const s = jsonSummary(deepFreeze({ ...tc.figures }), tc.reasons);
      const parsed = JSON.parse(s.line) as Record<string, number | null>;
      expect(Object.keys(parsed).filter((k) => parsed[k] === null)).toEqual(tc.wantNull);
      expect(s.missing).toEqual(tc.wantMissing);
    });
  }
});

describe('phasesWanted (BENCH_BACKBONE_PHASES)', () => {
  it.each([
    { name: 'unset runs every phase', env: undefined, want: ['large', 'many'] },
    { name: 'blank runs every phase', env: '  ', want: ['large', 'many'] },
    { name: 'one phase', env: 'large', want: ['large'] },
    { name: 'a list, spaces and empty items ignored', env: ' many , ,large', want: ['large', 'many'] },
  ])('$name', ({ env, want }) => {
    expect([...phasesWanted(env)].sort()).toEqual(want);
  });

  it('an unknown phase is refused, naming the ones there are', () => {
    expect(() => phasesWanted('large,huge')).toThrow('BENCH_BACKBONE_PHASES: unknown phase huge (have: large, many)');
  });
});
