import { describe, expect, it } from 'vitest';
import { createRandom, deterministicUid, nameSuffix, stableSuffix } from './random.ts';

describe('deterministic randomness', () => {
  it('the same seed yields the same stream; another seed a different one', () => {
    const take = (seed: string) => { const r = createRandom(seed); return Array.from({ length: 5 }, () => r.int(1000)); };
    expect(take('a')).toEqual(take('a'));
    expect(take('a')).not.toEqual(take('b'));
  });

  it('int(n) stays within [0, n) and int(0) is 0', () => {
    const r = createRandom('x');
    const values = Array.from({ length: 1000 }, () => r.int(7));
    expect(values.every((v) => v >= 0 && v < 7) && new Set(values).size === 7).toBe(true);
    expect(r.int(0)).toBe(0);
  });

  it('uids are UUID-shaped and stable for the same parts', () => {
    expect(deterministicUid('s', 'Pod', 'ns', 'a', 1)).toBe(deterministicUid('s', 'Pod', 'ns', 'a', 1));
    expect(deterministicUid('s', 'Pod', 'ns', 'a', 1)).not.toBe(deterministicUid('s', 'Pod', 'ns', 'a', 2));
    expect(deterministicUid('x')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('name suffixes use the Kubernetes alphabet', () => {
    expect(nameSuffix(createRandom('x'))).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(stableSuffix('web/1')).toBe(stableSuffix('web/1'));
    expect(stableSuffix('web/1')).not.toBe(stableSuffix('web/2'));
  });
});
