// Several slicer replicas on one schema: they share the partitions through leases, every one of
// them follows the node subjects, a replica that loses its database is replaced, and the slices
// end as one slicer would have written them.

import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EndpointSlice } from '@slicemesh/model';
import { makeNode, makePod, makeService } from '@slicemesh/testing';
import { createDb, readLeases } from '@slicemesh/db';
import type { DbHandle } from '@slicemesh/db';
import { partitionOf } from '@slicemesh/nats';
import { slicerLeaseGroup } from './config.ts';
import type { Slicer } from './slicer.ts';
import { startSlicer } from './slicer.ts';
import type { Stack } from './testing/stack.ts';
import { withStack } from './testing/stack.ts';

let stack: Stack | undefined;
const running: Slicer[] = [];
const handles: DbHandle[] = [];

afterEach(async () => {
  for (const s of running.splice(0)) await s.close();
  for (const h of handles.splice(0)) await h.close().catch(() => {});
  await stack?.close();
  stack = undefined;
});

/** A namespace whose KUBE partition (of `partitions`) is `p`. */
function namespaceIn(p: number, partitions: number): string {
  for (let i = 0; ; i++) if (partitionOf(`ns${i}`, partitions) === p) return `ns${i}`;
}

const zones = (slices: readonly EndpointSlice[]): string[] => [...new Set(slices.flatMap((s) => s.endpoints.map((e) => e.zone ?? '-')))].sort();
const ips = (slices: readonly EndpointSlice[]): string[] => slices.flatMap((s) => s.endpoints.flatMap((e) => e.addresses)).sort();

async function replica(s: Stack, id: string, partitions: number, o: { ownDb?: boolean } = {}): Promise<Slicer> {
  const config = s.config({ replicaId: id, partitions, leaseTtl: 2000, logLevel: (process.env.SLICER_TEST_LOG ?? 'silent') as 'silent' });
  let db;
  if (o.ownDb === true) {
    const h = await createDb({ url: s.db.url, schema: s.db.schema });
    handles.push(h);
    db = h.db;
  }
  const slicer = startSlicer(config, db === undefined ? {} : { db });
  running.push(slicer);
  return slicer;
}

describe('slicer replicas', () => {
  it('two replicas split the partitions, and a node relabel reaches the Services of both', async () => {
    const s = (stack = await withStack());
    const P = 2;
    const [ns0, ns1] = [namespaceIn(0, P), namespaceIn(1, P)];
    const a = await replica(s, 'a', P);
    const b = await replica(s, 'b', P);
    await Promise.all([a.ready, b.ready]);
    await vi.waitFor(() => expect([a.partitions(), b.partitions()]).toEqual([[0], [1]]), { timeout: 10_000, interval: 100 });

    let rv = 1;
    await s.publish(makeNode('node-1', { zone: 'zone-a' }), rv++, { partitions: P });
    for (const ns of [ns0, ns1]) {
      await s.publish(makeService('web', { namespace: ns, selector: { app: 'web' } }), rv++, { partitions: P });
      await s.publish(makePod('p1', { namespace: ns, labels: { app: 'web' }, ips: [ns === ns0 ? '10.0.0.1' : '10.0.1.1'], nodeName: 'node-1' }), rv++, { partitions: P });
    }
    // The relabel the issue saw split between two replicas sharing one node consumer.
    for (const zone of ['zone-b', 'zone-c', 'zone-d', 'zone-e']) await s.publish(makeNode('node-1', { zone }), rv++, { partitions: P });

    const config = s.config({ partitions: P });
    await s.settled(config, a, b);
    expect(zones(await s.slices('web', ns0))).toEqual(['zone-e']);
    expect(zones(await s.slices('web', ns1))).toEqual(['zone-e']);
    const leases = await readLeases(s.db.db, slicerLeaseGroup('c1'));
    expect(leases.map((l) => [l.partition, l.holder, l.live])).toEqual([[0, 'a', true], [1, 'b', true]]);
  });

  it('partitions rebalance as replicas join and leave, and the slices stay those of one slicer', async () => {
    const s = (stack = await withStack());
    const P = 4;
    const a = await replica(s, 'a', P);
    await a.ready;
    expect(a.partitions()).toEqual([0, 1, 2, 3]);
    let rv = 1;
    await s.publish(makeNode('node-1', { zone: 'zone-a' }), rv++, { partitions: P });
    const namespaces = [0, 1, 2, 3].map((p) => namespaceIn(p, P));
    for (const ns of namespaces) await s.publish(makeService('web', { namespace: ns, selector: { app: 'web' } }), rv++, { partitions: P });
    const b = await replica(s, 'b', P);
    const c = await replica(s, 'c', P);
    for (let i = 1; i <= 40; i++) {
      const ns = namespaces[i % 4] as string;
      await s.publish(makePod(`p${i}`, { namespace: ns, labels: { app: 'web' }, ips: [`10.1.${i}.1`], nodeName: 'node-1' }), rv++, { partitions: P });
    }
    await vi.waitFor(() => expect([a.partitions(), b.partitions(), c.partitions()]).toEqual([[0, 3], [1], [2]]), { timeout: 15_000, interval: 100 });
    await c.close();
    running.splice(running.indexOf(c), 1);
    for (let i = 41; i <= 60; i++) {
      const ns = namespaces[i % 4] as string;
      await s.publish(makePod(`p${i}`, { namespace: ns, labels: { app: 'web' }, ips: [`10.1.${i}.1`], nodeName: 'node-1' }), rv++, { partitions: P });
    }
    await vi.waitFor(() => expect([a.partitions(), b.partitions()]).toEqual([[0, 2], [1, 3]]), { timeout: 15_000, interval: 100 });
    await vi.waitFor(() => expect(a.isReady() && b.isReady()).toBe(true), { timeout: 15_000, interval: 100 });
    await s.settled(s.config({ partitions: P }), a, b);
    for (const [k, ns] of namespaces.entries()) {
      const want = Array.from({ length: 60 }, (_, i) => i + 1).filter((i) => i % 4 === k).map((i) => `10.1.${i}.1`).sort();
      expect(ips(await s.slices('web', ns))).toEqual(want);
    }
  });

  it('a replica that loses its database is replaced within 10 s; its partitions go on from their offsets', async () => {
    const s = (stack = await withStack());
    const P = 2;
    const a = await replica(s, 'a', P, { ownDb: true });
    await a.ready;
    const b = await replica(s, 'b', P);
    await vi.waitFor(() => expect([a.partitions(), b.partitions()]).toEqual([[0], [1]]), { timeout: 10_000, interval: 100 });
    const ns0 = namespaceIn(0, P);
    let rv = 1;
    await s.publish(makeNode('node-1', { zone: 'zone-a' }), rv++, { partitions: P });
    await s.publish(makeService('web', { namespace: ns0, selector: { app: 'web' } }), rv++, { partitions: P });
    await s.publish(makePod('before', { namespace: ns0, labels: { app: 'web' }, ips: ['10.2.0.1'] }), rv++, { partitions: P });
    await vi.waitFor(async () => expect(ips(await s.slices('web', ns0))).toEqual(['10.2.0.1']), { timeout: 10_000, interval: 100 });

    // Cut a's database: it can neither renew nor write.
    const cutAt = Date.now();
    await handles[0]?.close();
    await s.publish(makePod('after', { namespace: ns0, labels: { app: 'web' }, ips: ['10.2.0.2'] }), rv++, { partitions: P });
    await vi.waitFor(() => expect(b.partitions()).toEqual([0, 1]), { timeout: 12_000, interval: 50 });
    const takeoverMs = Date.now() - cutAt;
    expect(takeoverMs).toBeLessThan(10_000);
    await vi.waitFor(async () => expect(ips(await s.slices('web', ns0))).toEqual(['10.2.0.1', '10.2.0.2']), { timeout: 10_000, interval: 100 });
    await vi.waitFor(() => expect(a.partitions()).toEqual([]), { timeout: 10_000, interval: 100 });
  });
});
