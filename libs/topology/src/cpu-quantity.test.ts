import { describe, expect, it } from 'vitest';
import { parseCpuMillis } from './cpu-quantity.ts';

describe('parseCpuMillis', () => {
  const cases: { name: string; text: string; want: number | null }[] = [
    { name: 'whole cores', text: '4', want: 4000 },
    { name: 'millicores', text: '3500m', want: 3500 },
    { name: 'fractional cores', text: '0.5', want: 500 },
    { name: 'leading dot', text: '.25', want: 250 },
    { name: 'trailing dot', text: '2.', want: 2000 },
    { name: 'exact decimal arithmetic (0.1 core is 100m, not 100.00000000000001)', text: '0.1', want: 100 },
    { name: 'sub-millicore rounds up like MilliValue', text: '100u', want: 1 },
    { name: 'nanocores round up', text: '1500000n', want: 2 },
    { name: 'decimal exponent', text: '1e3', want: 1_000_000 },
    { name: 'negative exponent', text: '5E-1', want: 500 },
    { name: 'E alone is the exa suffix', text: '1E', want: 1e21 },
    { name: 'kilo suffix', text: '2k', want: 2_000_000 },
    { name: 'binary suffix', text: '1Ki', want: 1_024_000 },
    { name: 'explicit plus sign', text: '+2', want: 2000 },
    { name: 'zero', text: '0', want: 0 },
    { name: 'negative zero is zero', text: '-0', want: 0 },
    { name: 'negative is rejected', text: '-1', want: null },
    { name: 'empty is rejected', text: '', want: null },
    { name: 'garbage is rejected', text: 'four', want: null },
    { name: 'unknown suffix is rejected', text: '4x', want: null },
    { name: 'absurd exponent is rejected', text: '1e400', want: null },
    { name: 'surrounding whitespace is tolerated', text: ' 250m ', want: 250 },
  ];
  for (const tc of cases) it(tc.name, () => expect(parseCpuMillis(tc.text)).toBe(tc.want));
});
