import { describe, expect, it } from 'vitest';
import { humanAge, parseTimestamp, rfc3339 } from './timestamps.ts';

describe('timestamps', () => {
  it('formats RFC 3339 in UTC with whole seconds', () => {
    expect(rfc3339(Date.UTC(2026, 0, 2, 3, 4, 5, 999))).toBe('2026-01-02T03:04:05Z');
    expect(parseTimestamp('2026-01-02T03:04:05Z')).toBe(Date.UTC(2026, 0, 2, 3, 4, 5));
    expect(parseTimestamp('nope')).toBeUndefined();
  });

  const ages: readonly [number, string][] = [
    [-5, '0s'], [45, '45s'], [119, '119s'], [192, '3m12s'], [17 * 60, '17m'], [5 * 3600 + 180, '5h3m'], [30 * 3600, '30h'], [76 * 3600, '3d4h'], [12 * 86400, '12d'],
  ];
  for (const [s, want] of ages) it(`an age of ${s}s prints as ${want}`, () => expect(humanAge(s * 1000)).toBe(want));
});
