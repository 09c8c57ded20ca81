import { describe, expect, it } from 'vitest';
import { deepFreeze, makeEndpoints, makeNode, makePod, makeService, makeSlice } from '@slicemesh/testing';
import { ClusterState } from '@slicemesh/core';
import type { ServiceExport } from '@slicemesh/model';
import { partitionOf } from '@slicemesh/nats';
import type { IngestDeps, IngestMessage, IngestOutcome } from './ingest.ts';
import { ingestBatch } from './ingest.ts';
import { DirtyMarks } from './dirty-marks.ts';
import type { RejectedMessage } from './ports.ts';
import { MemoryStore } from './testing/memory-store.ts';
import { atVersion, kubeMessage, rawMessage, subjectOf } from './testing/kube-events.ts';

const C = 'offsets/p0';
const PARTITIONS = 1;

function setup(o: { batchPeriodMs?: number; partitions?: number; owned?: (p: number) => boolean; failDeadLetters?: boolean } = {}) {
  const store = new MemoryStore();
  const letters: RejectedMessage[] = [];
  const partitions = o.partitions ?? PARTITIONS;
  const owned = o.owned ?? (() => true);
  const dirty = new DirtyMarks();
  const deps: IngestDeps & { readonly dirty: DirtyMarks } = {
    state: new ClusterState({ ownsNamespace: (ns) => owned(partitionOf(ns, partitions)) }),
    offsets: new Map(),
    dirty,
    store,
    deadLetters: {
      publish: async (l) => {
        if (o.failDeadLetters) throw new Error('DLQ unavailable');
        letters.push(l);
      },
    },
    cluster: 'c1',
    partitions,
    prefix: '',
    batchPeriodMs: o.batchPeriodMs ?? 0,
  };
  return { store, letters, deps, dirty };
}

/** One message through ingest, marking its Services as the slicer's handler does. */
async function ingestMessage(consumer: string, msg: IngestMessage, deps: IngestDeps & { readonly dirty: DirtyMarks }): Promise<IngestOutcome> {
  const [out] = await ingestBatch(consumer, [msg], deps);
  if (out === undefined) throw new Error('no outcome');
  for (const k of out.keys) deps.dirty.mark(k, msg.seq);
  return out;
}

const web = atVersion(makeService('web', { selector: { app: 'web' } }), 10);
const api = atVersion(makeService('api', { selector: { app: 'api' } }), 11);
const bare = atVersion(makeService('bare', { selector: null }), 12);
const n1 = atVersion(makeNode('node-1', { zone: 'a' }), 13);
const p1 = atVersion(makePod('p1', { labels: { app: 'web' }, nodeName: 'node-1' }), 20);
const p2 = atVersion(makePod('p2', { labels: { app: 'api' }, nodeName: 'node-2' }), 21);

interface Case {
  readonly name: string;
  /** Applied first (seq 1..n). */
  readonly before: readonly IngestMessage[];
  readonly msg: IngestMessage;
  readonly want: Omit<Partial<IngestOutcome>, 'keys'> & { keys: readonly string[] };
  readonly batchPeriodMs?: number;
  /** Dead-letter field expected, if any. */
  readonly deadLetterField?: string;
}

const seqd = (msgs: readonly IngestMessage[]): IngestMessage[] => msgs.map((m, i) => ({ ...m, seq: i + 1 }));

const cases: readonly Case[] = [
  { name: 'A.12.1 a Service change marks the Service itself at once', before: [], msg: kubeMessage(10, web), want: { result: 'applied', keys: ['default/web'], delayMs: 0 } },
  {
    name: 'A.12.2 a pod add marks the matching Services after the batch period',
    before: seqd([kubeMessage(0, web), kubeMessage(0, api)]),
    msg: kubeMessage(10, p1),
    batchPeriodMs: 1000,
    want: { result: 'applied', keys: ['default/web'], delayMs: 1000 },
  },
  {
    name: 'A.12.2 a pod update that changes nothing endpoint-relevant marks nothing',
    before: seqd([kubeMessage(0, web), kubeMessage(0, p1)]),
    msg: kubeMessage(10, atVersion(p1, 30)),
    want: { result: 'applied', keys: [] },
  },
  {
    name: 'A.12.2 a relabelled pod marks the Services it left and joined',
    before: seqd([kubeMessage(0, web), kubeMessage(0, api), kubeMessage(0, p1)]),
    msg: kubeMessage(10, atVersion({ ...p1, metadata: { ...p1.metadata, labels: { app: 'api' } } }, 30)),
    want: { result: 'applied', keys: ['default/api', 'default/web'] },
  },
  {
    name: 'A.12.2 a pod delete marks the Services that selected it',
    before: seqd([kubeMessage(0, web), kubeMessage(0, p1)]),
    msg: kubeMessage(10, atVersion(p1, 31), { type: 'Deleted.v1' }),
    want: { result: 'applied', keys: ['default/web'] },
  },
  {
    name: 'a delete of a pod never seen still marks by its final labels',
    before: seqd([kubeMessage(0, web)]),
    msg: kubeMessage(10, atVersion(p1, 31), { type: 'Deleted.v1' }),
    want: { result: 'applied', keys: ['default/web'] },
  },
  {
    name: 'an older resourceVersion (a second watcher, a late duplicate) is stale and marks nothing',
    before: seqd([kubeMessage(0, web), kubeMessage(0, atVersion(p1, 40))]),
    msg: kubeMessage(10, atVersion(p1, 39)),
    want: { result: 'stale', keys: [] },
  },
  {
    name: 'a stale upsert never resurrects a deleted object',
    before: seqd([kubeMessage(0, web), kubeMessage(0, atVersion(p1, 40), { type: 'Deleted.v1' })]),
    msg: kubeMessage(10, atVersion(p1, 39)),
    want: { result: 'stale', keys: [] },
  },
  { name: 'redelivery: seq at or below the offset is skipped', before: seqd([kubeMessage(0, web), kubeMessage(0, api)]), msg: kubeMessage(2, atVersion(api, 99)), want: { result: 'duplicate', keys: [] } },
  {
    name: 'B.5 Endpoints of a selectorless Service mark it (mirroring)',
    before: seqd([kubeMessage(0, bare)]),
    msg: kubeMessage(10, atVersion(makeEndpoints('bare'), 50)),
    want: { result: 'applied', keys: ['default/bare'], delayMs: 0 },
  },
  { name: 'B.5 Endpoints of a Service with a selector mark nothing', before: seqd([kubeMessage(0, web)]), msg: kubeMessage(10, atVersion(makeEndpoints('web'), 50)), want: { result: 'applied', keys: [] } },
  { name: 'B.5 Endpoints without a Service mark nothing', before: [], msg: kubeMessage(10, atVersion(makeEndpoints('web'), 50)), want: { result: 'applied', keys: [] } },
  {
    name: 'a node appearing marks the Services with pods on it',
    before: seqd([kubeMessage(0, web), kubeMessage(0, api), kubeMessage(0, p1), kubeMessage(0, p2)]),
    msg: kubeMessage(10, n1),
    want: { result: 'applied', keys: ['default/web'], delayMs: 0 },
  },
  {
    name: 'a node update without a zone change marks nothing',
    before: seqd([kubeMessage(0, web), kubeMessage(0, p1), kubeMessage(0, n1)]),
    msg: kubeMessage(10, atVersion(makeNode('node-1', { zone: 'a', cpu: '8' }), 60)),
    want: { result: 'applied', keys: [] },
  },
  {
    name: 'a node zone change marks the Services with pods on it',
    before: seqd([kubeMessage(0, web), kubeMessage(0, p1), kubeMessage(0, n1)]),
    msg: kubeMessage(10, atVersion(makeNode('node-1', { zone: 'b' }), 60)),
    want: { result: 'applied', keys: ['default/web'] },
  },
  { name: 'a body that is not JSON is dead-lettered', before: [], msg: rawMessage(10, subjectOf(web), '{"type": "Upserted.v1",'), want: { result: 'dead-lettered', keys: [] } },
  {
    name: 'an invalid object is dead-lettered with the offending field',
    before: [],
    msg: kubeMessage(10, { ...web, spec: { ...web.spec, ports: [{ port: 0 }] } }),
    want: { result: 'dead-lettered', keys: [] },
    deadLetterField: 'object.spec.ports[0].port',
  },
];

describe('ingestBatch', () => {
  for (const tc of cases) {
    it(tc.name, async () => {
      const { store, letters, deps, dirty } = setup({ ...(tc.batchPeriodMs !== undefined ? { batchPeriodMs: tc.batchPeriodMs } : {}) });
      for (const m of tc.before) await ingestMessage(C, m, deps);
      const dirtyBefore = dirty.list();
      // Typed arrays cannot be frozen; the parsed body can.
      const out = await ingestMessage(C, { ...tc.msg, data: deepFreeze(tc.msg.data) }, deps);
      const { keys, ...rest } = tc.want;
      expect(out).toMatchObject(rest);
      expect(out.keys).toEqual(keys);
      // The marks carry the message's sequence.
      for (const k of out.keys) expect(dirty.list().find((d) => d.key === k)?.lastSeq).toBe(tc.msg.seq);
      if (out.result === 'duplicate') expect(dirty.list()).toEqual(dirtyBefore);
      expect(store.offsets.get(C)).toBe(Math.max(tc.msg.seq, tc.before.length));
      expect(letters.map((l) => l.field)).toEqual(tc.want.result === 'dead-lettered' ? [tc.deadLetterField] : []);
    });
  }

  it('a dead letter keeps the raw bytes, subject and sequence, and is not repeated on redelivery', async () => {
    const { letters, deps } = setup();
    const bad = rawMessage(3, subjectOf(web), 'not json');
    expect((await ingestMessage(C, bad, deps)).result).toBe('dead-lettered');
    expect((await ingestMessage(C, bad, deps)).result).toBe('duplicate');
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({ subject: subjectOf(web), seq: 3 });
    expect(new TextDecoder().decode(letters[0]?.raw)).toBe('not json');
    expect(letters[0]?.reason).toMatch(/^body is not JSON/);
  });

  it('a dead-letter failure rejects and leaves the offset, so the message is retried', async () => {
    const { store, deps } = setup({ failDeadLetters: true });
    await expect(ingestMessage(C, rawMessage(3, subjectOf(web), 'x'), deps)).rejects.toThrow(/DLQ unavailable/);
    expect(store.offsets.get(C)).toBeUndefined();
  });

  it('a store failure rejects and applies nothing (one transaction)', async () => {
    const { store, deps, dirty } = setup();
    store.failNext = 1;
    await expect(ingestMessage(C, kubeMessage(1, web), deps)).rejects.toThrow(/injected/);
    expect(store.objects).toEqual([]);
    expect(dirty.list()).toEqual([]);
    expect(deps.state.service('default', 'web')).toBeUndefined();
    expect((await ingestMessage(C, kubeMessage(1, web), deps)).result).toBe('applied');
  });

  it('node changes only mark Services of owned partitions', async () => {
    const partitions = 8;
    const a = atVersion(makeService('web', { namespace: 'ns-a' }), 1);
    const b = atVersion(makeService('web', { namespace: 'ns-b' }), 2);
    const pa = atVersion(makePod('pa', { namespace: 'ns-a', labels: { app: 'web' } }), 3);
    const pb = atVersion(makePod('pb', { namespace: 'ns-b', labels: { app: 'web' } }), 4);
    expect(partitionOf('ns-a', partitions)).not.toBe(partitionOf('ns-b', partitions));
    const { deps } = setup({ partitions, owned: (p) => p === partitionOf('ns-a', partitions) });
    let seq = 0;
    for (const obj of [a, b, pa, pb]) await ingestMessage(C, kubeMessage(++seq, obj, { partitions }), deps);
    const out = await ingestMessage(C, kubeMessage(++seq, atVersion(makeNode('node-1'), 5), { partitions }), deps);
    expect(out.keys).toEqual(['ns-a/web']);
  });

  it('marks keep the first and last sequence across events until cleared', async () => {
    const { deps, dirty } = setup();
    await ingestMessage(C, kubeMessage(5, web), deps);
    await ingestMessage(C, kubeMessage(9, atVersion(web, 11)), deps);
    expect(dirty.list()).toEqual([{ key: 'default/web', sinceSeq: 5, lastSeq: 9 }]);
  });

  it('a batch commits every message and one offset in one transaction, skipping what was applied', async () => {
    const { store, letters, deps } = setup();
    await ingestMessage(C, kubeMessage(2, web), deps);
    const outs = await ingestBatch(C, [kubeMessage(2, web), kubeMessage(3, p1), rawMessage(4, subjectOf(web), 'not json'), kubeMessage(5, api)], deps);
    expect(outs.map((o) => o.result)).toEqual(['duplicate', 'applied', 'dead-lettered', 'applied']);
    expect(store.offsets.get(C)).toBe(5);
    expect(store.commits.ingest).toBe(2);
    expect(deps.offsets.get(C)).toBe(5);
    expect(letters.map((l) => l.seq)).toEqual([4]);
    expect(outs.flatMap((o) => o.keys).sort()).toEqual(['default/api', 'default/web']);
  });

  it('a failing batch applies none of its messages, and its retry applies all of them once', async () => {
    const { store, letters, deps } = setup();
    const batch = [kubeMessage(1, web), rawMessage(2, subjectOf(web), 'x'), kubeMessage(3, p1)];
    store.failNext = 1;
    await expect(ingestBatch(C, batch, deps)).rejects.toThrow(/injected/);
    expect(store.objects).toEqual([]);
    expect(store.offsets.get(C)).toBeUndefined();
    expect(deps.offsets.get(C)).toBeUndefined();
    expect(deps.state.counts().pods).toBe(0);
    const outs = await ingestBatch(C, batch, deps);
    expect(outs.map((o) => o.result)).toEqual(['applied', 'dead-lettered', 'applied']);
    expect(store.offsets.get(C)).toBe(3);
    // Published before the failed commit and again by the retry: the DLQ stream stores it once,
    // its msgID being the KUBE sequence.
    expect([...new Set(letters.map((l) => l.seq))]).toEqual([2]);
  });
});

describe("ingestBatch: other controllers' EndpointSlices in KUBE", () => {
  const foreign = atVersion(makeSlice('imported-1', [], { service: 'web', managedBy: 'mcs-importer' }), 30);
  const echo = atVersion(makeSlice('web-abc', [], { service: 'web' }), 31);

  it('skips them: not dead-lettered, nothing stored or marked, the offset moves past them', async () => {
    const { deps, store, letters } = setup();
    const outs = await ingestBatch(C, seqd([kubeMessage(0, web), kubeMessage(0, foreign), kubeMessage(0, foreign, { type: 'Deleted.v1' })]), deps);
    expect(outs.map((o) => [o.result, o.kind, o.keys])).toEqual([
      ['applied', 'Service', ['default/web']],
      ['ignored', 'EndpointSlice', []],
      ['ignored', 'EndpointSlice', []],
    ]);
    expect(letters).toEqual([]);
    expect(deps.offsets.get(C)).toBe(3);
    expect(store.offsets.get(C)).toBe(3);
    expect(deps.state.counts().slices).toBe(0);
  });

  it('a batch of them only still commits the offset', async () => {
    const { deps, store } = setup();
    expect((await ingestBatch(C, [{ ...kubeMessage(7, foreign) }], deps)).map((o) => o.result)).toEqual(['ignored']);
    expect(store.offsets.get(C)).toBe(7);
  });

  it("one carrying the slicer's own managed-by value is an echo (the watcher's MANAGED_BY lacks ours): skipped and reported", async () => {
    const { deps, letters } = setup();
    const outs = await ingestBatch(C, [kubeMessage(1, echo), kubeMessage(2, foreign)], { ...deps, managedBy: 'endpointslice-controller.k8s.io' });
    expect(outs.map((o) => o.result)).toEqual(['echo', 'ignored']);
    expect(letters).toEqual([]);
  });
});

describe('ingestBatch: ServiceExports in KUBE (the mcs service reads them)', () => {
  const exp: ServiceExport = {
    apiVersion: 'multicluster.x-k8s.io/v1alpha1',
    kind: 'ServiceExport',
    metadata: { name: 'web', namespace: 'default', uid: 'uid-se-web', resourceVersion: '40', creationTimestamp: '2026-01-01T00:00:00Z' },
  };

  it('skips them, upsert and delete alike: not dead-lettered, nothing stored or marked, the offset moves past them', async () => {
    const { deps, store, letters } = setup();
    const outs = await ingestBatch(C, seqd([kubeMessage(0, web), kubeMessage(0, exp), kubeMessage(0, exp, { type: 'Deleted.v1' })]), deps);
    expect(outs.map((o) => [o.result, o.kind, o.keys])).toEqual([
      ['applied', 'Service', ['default/web']],
      ['ignored', 'ServiceExport', []],
      ['ignored', 'ServiceExport', []],
    ]);
    expect(letters).toEqual([]);
    expect(store.offsets.get(C)).toBe(3);
    expect(deps.state.counts().services).toBe(1);
  });

  it('one labelled with our managed-by value is still ignored, not an echo (only slices echo)', async () => {
    const { deps } = setup();
    const labelled = { ...exp, metadata: { ...exp.metadata, labels: { 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' } } };
    const outs = await ingestBatch(C, [kubeMessage(1, labelled)], { ...deps, managedBy: 'endpointslice-controller.k8s.io' });
    expect(outs.map((o) => o.result)).toEqual(['ignored']);
  });
});
