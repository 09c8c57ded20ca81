import { describe, expect, it } from 'vitest';
import { liveClusters, nextExpiry } from './liveness.ts';

describe('cluster liveness by heartbeat', () => {
  const seen = [
    { cluster: 'a', seenAt: 1000 },
    { cluster: 'b', seenAt: 5000 },
  ];
  const cases = [
    { name: 'both fresh', now: 5000, want: ['a', 'b', 'self'] },
    { name: 'a withdrawn once its heartbeat is as old as the TTL', now: 11_000, want: ['b', 'self'] },
    { name: 'every other withdrawn; the cluster itself never is', now: 20_000, want: ['self'] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect([...liveClusters(seen, tc.now, 10_000, 'self')].sort()).toEqual(tc.want);
    });
  }
  it('says when the next live cluster expires', () => {
    expect(nextExpiry(seen, 5000, 10_000, 'self')).toBe(11_000);
    expect(nextExpiry(seen, 12_000, 10_000, 'self')).toBe(15_000);
    expect(nextExpiry(seen, 16_000, 10_000, 'self')).toBeUndefined();
  });
});
