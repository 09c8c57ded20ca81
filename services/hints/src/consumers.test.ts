import { describe, expect, it } from 'vitest';
import { DEFAULT_NAMES } from '@slicemesh/nats';
import { FakeClock } from '@slicemesh/runtime';
import { clusterFragment, consumerSpecs, sleep } from './consumers.ts';

describe('consumerSpecs', () => {
  it("reads nodes, services and other controllers' slices from KUBE and slices from SLICES, one filter each (nats-server 2.9)", () => {
    const specs = consumerSpecs('c1', { ...DEFAULT_NAMES, prefix: 't1.' }, 'hints');
    expect(specs.map((s) => [s.role, s.stream, s.durable, s.filterSubject, s.offset])).toEqual([
      ['nodes', 'KUBE', 'hints-c1-nodes', 't1.kube.c1.node.>', 'hints:c1:KUBE:nodes'],
      ['services', 'KUBE', 'hints-c1-services', 't1.kube.c1.*.service.>', 'hints:c1:KUBE:services'],
      ['endpointslices', 'KUBE', 'hints-c1-endpointslices', 't1.kube.c1.*.endpointslice.>', 'hints:c1:KUBE:endpointslices'],
      ['slices', 'SLICES', 'hints-c1-slices', 't1.slices.c1.>', 'hints:c1:SLICES:slices'],
    ]);
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
