import { describe, expect, it } from 'vitest';
import { deepEqual } from './deep-equal.ts';

describe('deepEqual', () => {
  const cases = [
    { name: 'equal nested data', a: { x: [1, { y: 'z' }] }, b: { x: [1, { y: 'z' }] }, want: true },
    { name: 'array order matters', a: [1, 2], b: [2, 1], want: false },
    { name: 'object key order does not', a: { a: 1, b: 2 }, b: { b: 2, a: 1 }, want: true },
    { name: 'an undefined key equals a missing key', a: { a: 1, b: undefined }, b: { a: 1 }, want: true },
    { name: 'a missing key differs from a defined one', a: { a: 1 }, b: { a: 1, b: null }, want: false },
    { name: 'arrays differ from objects', a: [], b: {}, want: false },
    { name: 'maps compare entries', a: new Map([['k', [1]]]), b: new Map([['k', [1]]]), want: true },
    { name: 'maps with different values differ', a: new Map([['k', 1]]), b: new Map([['k', 2]]), want: false },
    { name: 'symbols compare by identity', a: Symbol('x'), b: Symbol('x'), want: false },
  ];
  for (const tc of cases) it(tc.name, () => expect(deepEqual(tc.a, tc.b)).toBe(tc.want));
});
