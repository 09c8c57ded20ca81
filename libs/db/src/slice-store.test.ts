import { describe, expect, it } from 'vitest';
import { deterministicSliceUid } from './slice-store.ts';

describe('deterministicSliceUid', () => {
  type Parts = [cluster: string, namespace: string, name: string];
  const cases: { name: string; a: Parts; b: Parts; same: boolean }[] = [
    { name: 'is stable for the same cluster/namespace/name', a: ['c', 'ns', 'n'], b: ['c', 'ns', 'n'], same: true },
    { name: 'differs by cluster', a: ['c1', 'ns', 'n'], b: ['c2', 'ns', 'n'], same: false },
    { name: 'is not fooled by separators moving between parts', a: ['c', 'ns/x', 'n'], b: ['c', 'ns', 'x/n'], same: false },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const a = deterministicSliceUid(...tc.a);
      expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(a === deterministicSliceUid(...tc.b)).toBe(tc.same);
    });
  }
});
