import { describe, expect, it } from 'vitest';
import { formatCpu, parseCpu, parseDuration } from './quantities.ts';

describe('parseDuration', () => {
  const cases: readonly [unknown, number | undefined][] = [
    ['5s', 5000], ['250ms', 250], ['1m30s', 90_000], ['1.5s', 1500], ['2h', 7_200_000], [3, 3000], ['10', 10_000],
    ['', undefined], ['5 s', undefined], ['5x', undefined], [-1, undefined], [null, undefined],
  ];
  for (const [input, want] of cases) it(`${JSON.stringify(input)} -> ${want}`, () => expect(parseDuration(input)).toBe(want));
});

describe('CPU quantities', () => {
  const cases: readonly [unknown, number | undefined][] = [['4', 4000], ['3500m', 3500], [0.5, 500], ['0.25', 250], ['4 cores', undefined], [-2, undefined]];
  for (const [input, want] of cases) it(`${JSON.stringify(input)} -> ${want}m`, () => expect(parseCpu(input)).toBe(want));
  it('formats whole cores without a unit and the rest in millicores', () => {
    expect([formatCpu(4000), formatCpu(3500), formatCpu(100)]).toEqual(['4', '3500m', '100m']);
  });
});
