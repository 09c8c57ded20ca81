import { describe, expect, it } from 'vitest';
import { filtersOverlap } from './log-retention.ts';

describe('filtersOverlap', () => {
  const cases: readonly [string, string, boolean][] = [
    ['kube.c.0.>', 'kube.c.0.>', true],
    ['kube.c.0.>', 'kube.c.1.>', false],
    ['kube.c.*.service.>', 'kube.c.0.>', true],
    ['kube.c.*.service.>', 'kube.c.node.>', true],
    ['kube.c.node.>', 'kube.c.0.>', false],
    ['kube.>', 'kube.c.0.pod.ns.p', true],
    ['kube.c.0.pod.ns.p', 'kube.c.0.pod.ns.q', false],
    ['kube.c.0.pod.ns.p', 'kube.c.0.pod.ns.p', true],
    ['kube.c', 'kube.c.>', false],
    ['kube.c.*', 'kube.c.x.y', false],
    ['>', 'anything.at.all', true],
    ['stage.kube.c.0.>', 'kube.c.0.>', false],
  ];
  for (const [a, b, want] of cases) {
    it(`${a} and ${b}: ${want}`, () => {
      expect(filtersOverlap(a, b)).toBe(want);
      expect(filtersOverlap(b, a)).toBe(want);
    });
  }
});
