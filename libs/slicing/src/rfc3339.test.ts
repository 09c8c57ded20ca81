import { describe, expect, it } from 'vitest';
import { compareInstants, formatRFC3339Nano, parseRFC3339 } from './rfc3339.ts';

describe('RFC 3339', () => {
  const roundTrips = [
    { name: 'whole seconds print without a fraction', in: '2026-01-01T00:00:01Z', out: '2026-01-01T00:00:01Z' },
    { name: 'trailing zeros of the fraction are trimmed', in: '2026-01-01T00:00:01.500000Z', out: '2026-01-01T00:00:01.5Z' },
    { name: 'nanoseconds are kept', in: '2026-01-01T00:00:01.123456789Z', out: '2026-01-01T00:00:01.123456789Z' },
    { name: 'digits beyond nanoseconds are truncated', in: '2026-01-01T00:00:01.1234567891Z', out: '2026-01-01T00:00:01.123456789Z' },
    { name: 'offsets are converted to UTC', in: '2026-01-01T02:00:00+02:00', out: '2026-01-01T00:00:00Z' },
    { name: 'negative offsets too', in: '2025-12-31T23:30:00-00:30', out: '2026-01-01T00:00:00Z' },
  ];
  for (const tc of roundTrips) {
    it(tc.name, () => {
      const t = parseRFC3339(tc.in);
      expect(t).not.toBeNull();
      expect(formatRFC3339Nano(t ?? { seconds: 0, nanos: 0 })).toBe(tc.out);
    });
  }
  for (const bad of ['', 'yesterday', '2026-13-01T00:00:00Z', '2026-01-01T00:00:00', '2026-01-01']) {
    it(`rejects ${JSON.stringify(bad)}`, () => {
      expect(parseRFC3339(bad)).toBeNull();
    });
  }
  it('orders instants by seconds, then nanoseconds', () => {
    const a = parseRFC3339('2026-01-01T00:00:01.1Z');
    const b = parseRFC3339('2026-01-01T00:00:01.2Z');
    const c = parseRFC3339('2026-01-01T00:00:02Z');
    if (!a || !b || !c) throw new Error('parse failed');
    expect(compareInstants(a, b)).toBeLessThan(0);
    expect(compareInstants(c, b)).toBeGreaterThan(0);
    expect(compareInstants(a, a)).toBe(0);
  });
});
