import { describe, expect, it } from 'vitest';
import { deepFreeze } from '@slicemesh/testing';
import { chunks } from './batches.ts';

describe('chunks', () => {
  const cases = [
    { name: '[] gives no chunks', items: [], size: 2, want: [] },
    { name: 'an exact multiple gives full chunks', items: [1, 2, 3, 4], size: 2, want: [[1, 2], [3, 4]] },
    { name: 'the remainder forms a last, shorter chunk', items: [1, 2, 3], size: 2, want: [[1, 2], [3]] },
  ];
  for (const tc of cases) it(tc.name, () => expect(chunks(deepFreeze(tc.items), tc.size)).toEqual(tc.want));
});
