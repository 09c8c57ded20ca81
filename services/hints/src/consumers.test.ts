import { describe, expect, it } from 'vitest';
import { DEFAULT_NAMES } from '@slicemesh/nats';
import { FakeClock } from '@slicemesh/runtime';
import { clusterFragment, consumerSpecs, sleep } from './consumers.ts';

describe('consumerSpecs', () => {
  it("per partition: its services and other controllers' slices, every node, and its own slice changes; names carry the partition", () => {
    const specs = consumerSpecs('c1', { ...DEFAULT_NAMES, prefix: 't1.' }, 'hints', 3);
    expect(specs.map((s) => [s.role, s.partition, s.stream, s.durable, s.filterSubject, s.offset])).toEqual([
      ['nodes', 3, 'KUBE', 'hints-c1-p3-nodes', 't1.kube.c1.node.>', 'hints:c1:KUBE:p3:nodes'],
      ['services', 3, 'KUBE', 'hints-c1-p3-services', 't1.kube.c1.3.service.>', 'hints:c1:KUBE:p3:services'],
      ['endpointslices', 3, 'KUBE', 'hints-c1-p3-endpointslices', 't1.kube.c1.3.endpointslice.>', 'hints:c1:KUBE:p3:endpointslices'],
      ['slices', 3, 'SLICES', 'hints-c1-p3-slices', 't1.slices.c1.3.>', 'hints:c1:SLICES:p3:slices'],
    ]);
    // While older-form subjects are still ahead, the SLICES consumer reads both forms.
    expect(specs.map((s) => s.olderForm)).toEqual([undefined, undefined, undefined, { older: 't1.slices.c1.*.*', broad: 't1.slices.c1.>' }]);
  });

  it('two partitions never share a durable or an offset', () => {
    const names = (p: number) => consumerSpecs('c1', DEFAULT_NAMES, 'hints', p).flatMap((s) => [s.durable, s.offset]);
    expect(names(0).filter((n) => names(1).includes(n))).toEqual([]);
  });

  const cases: { name: string; cluster: string; want: RegExp }[] = [
    { name: 'a plain cluster name is used as is', cluster: 'prod-eu_1', want: /^prod-eu_1$/ },
    { name: 'a dotted name is sanitised and hashed', cluster: 'prod.eu', want: /^prod_eu_[0-9a-f]+$/ },
  ];
  for (const tc of cases) it(`clusterFragment: ${tc.name}`, () => expect(clusterFragment(tc.cluster)).toMatch(tc.want));

  it('clusterFragment keeps names that sanitise alike apart', () => {
    expect(clusterFragment('a.b')).not.toBe(clusterFragment('a_b'));
    expect(clusterFragment('a.b')).not.toBe(clusterFragment('a*b'));
  });
});

describe('sleep', () => {
  it('resolves after the delay on the injected clock, or at once on abort', async () => {
    const clock = new FakeClock();
    let done = false;
    void sleep(clock, 100, new AbortController().signal).then(() => (done = true));
    await clock.advanceAsync(99);
    expect(done).toBe(false);
    await clock.advanceAsync(1);
    expect(done).toBe(true);
    const ac = new AbortController();
    const p = sleep(clock, 1_000_000, ac.signal);
    ac.abort();
    await p;
    expect(clock.pending()).toBe(0);
  });
});
