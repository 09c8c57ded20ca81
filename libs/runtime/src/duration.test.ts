import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from './duration.ts';

describe('parseDuration', () => {
  const cases: readonly { name: string; text: string; want: number | RegExp }[] = [
    { name: 'reads milliseconds', text: '500ms', want: 500 },
    { name: 'reads seconds', text: '1s', want: 1000 },
    { name: 'reads minutes', text: '2m', want: 120_000 },
    { name: 'reads hours', text: '1h', want: 3_600_000 },
    { name: 'reads fractions', text: '1.5s', want: 1500 },
    { name: 'sums compound durations like Go', text: '1h30m5s250ms', want: 5_405_250 },
    { name: 'accepts a bare 0', text: '0', want: 0 },
    { name: 'accepts 0s', text: '0s', want: 0 },
    { name: 'rejects a bare number other than 0', text: '100', want: /not a duration/ },
    { name: 'rejects a negative duration', text: '-1s', want: /not a duration/ },
    { name: 'rejects an unknown unit', text: '3d', want: /not a duration/ },
    { name: 'rejects spaces', text: '1 s', want: /not a duration/ },
    { name: 'rejects the empty string', text: '', want: /not a duration/ },
    { name: 'rejects a unit without a number', text: 'ms', want: /not a duration/ },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      if (typeof tc.want === 'number') expect(parseDuration(tc.text)).toBe(tc.want);
      else expect(() => parseDuration(tc.text)).toThrow(tc.want);
    });
  }
});

describe('formatDuration', () => {
  const cases: readonly { name: string; ms: number; want: string }[] = [
    { name: 'prints zero as 0s', ms: 0, want: '0s' },
    { name: 'prints whole seconds', ms: 1000, want: '1s' },
    { name: 'prints sub-second values in ms', ms: 250, want: '250ms' },
    { name: 'composes units', ms: 90_000, want: '1m30s' },
    { name: 'composes all units', ms: 3_723_004, want: '1h2m3s4ms' },
    { name: 'keeps fractional milliseconds', ms: 1.5, want: '1.5ms' },
    { name: 'prints the 1000s backoff ceiling', ms: 1_000_000, want: '16m40s' },
    { name: 'marks negative values', ms: -1500, want: '-1s500ms' },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect(formatDuration(tc.ms)).toBe(tc.want);
      if (tc.ms >= 0) expect(parseDuration(tc.want)).toBe(tc.ms);
    });
  }
});
