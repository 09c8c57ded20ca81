import { describe, expect, it } from 'vitest';
import type { KubeObjectRow } from '@slicemesh/db';
import type { DurablePosition, SubjectTail } from '@slicemesh/nats';
import { carriedEnvelope, carriedMsgId, carriesUnowned, compactionBounds, cutOf, hintsOffsetFilter, planCarries, worthCompacting } from './compaction.ts';

const durable = (name: string, filter: string, ackFloor: number): DurablePosition => ({ durable: name, filters: [filter], ackFloor });

describe('hintsOffsetFilter', () => {
  const c = { cluster: 'c1', kubeStream: 'KUBE_x', names: { prefix: 'rx.' } };
  it.each([
    ['a node consumer reads every node', 'hints:c1:KUBE_x:p5:nodes', 'rx.kube.c1.node.>'],
    ["a Service consumer reads its partition's Services", 'hints:c1:KUBE_x:p5:services', 'rx.kube.c1.5.service.>'],
    ["an EndpointSlice consumer reads its partition's EndpointSlices", 'hints:c1:KUBE_x:p0:endpointslices', 'rx.kube.c1.0.endpointslice.>'],
    ['another cluster', 'hints:c2:KUBE_x:p5:nodes', undefined],
    ['another stream', 'hints:c1:SLICES_x:p5:slices', undefined],
    ['an unknown role', 'hints:c1:KUBE_x:p5:pods', undefined],
    ['a name without a partition', 'hints:c1:KUBE_x:services', undefined],
  ])('%s', (_name, offset, want) => {
    expect(hintsOffsetFilter(offset, c)).toBe(want);
  });
});

describe('cutOf', () => {
  const base = { snapshotSeq: 100, filter: 'kube.c1.0.>', kubeStream: 'KUBE', offsets: new Map<string, number>(), durables: [] as DurablePosition[], partition: 0 };
  const cases: readonly { name: string; input: Partial<typeof base> & { offsets?: Map<string, number> }; keepFrom: number; heldBy: string }[] = [
    { name: 'the snapshot alone: everything up to it goes', input: {}, keepFrom: 101, heldBy: 'snapshot' },
    { name: 'a hints consumer of KUBE behind the snapshot holds the cut', input: { offsets: new Map([['hints:c1:KUBE:services', 40]]) }, keepFrom: 41, heldBy: 'offset hints:c1:KUBE:services' },
    { name: 'a hints consumer of SLICES does not', input: { offsets: new Map([['hints:c1:SLICES:slices', 3]]) }, keepFrom: 101, heldBy: 'snapshot' },
    { name: 'a hints consumer ahead of the snapshot does not', input: { offsets: new Map([['hints:c1:KUBE:nodes', 500]]) }, keepFrom: 101, heldBy: 'snapshot' },
    { name: 'a partitioned hints consumer of this partition holds it', input: { offsets: new Map([['hints:c1:KUBE:p0:services', 7]]) }, keepFrom: 8, heldBy: 'offset hints:c1:KUBE:p0:services' },
    { name: "a partitioned hints consumer of another partition does not hold this one's", input: { offsets: new Map([['hints:c1:KUBE:p1:services', 7]]) }, keepFrom: 101, heldBy: 'snapshot' },
    { name: 'a name we cannot read holds (generous)', input: { offsets: new Map([['hints:odd', 9]]) }, keepFrom: 10, heldBy: 'offset hints:odd' },
    { name: 'the smallest of several holds', input: { offsets: new Map([['hints:c1:KUBE:services', 60], ['hints:c1:KUBE:endpointslices', 50]]) }, keepFrom: 51, heldBy: 'offset hints:c1:KUBE:endpointslices' },
    { name: 'a durable whose filter reaches the partition holds it', input: { durables: [durable('hints-c1-services', 'kube.c1.*.service.>', 30)] }, keepFrom: 31, heldBy: 'durable hints-c1-services' },
    { name: "another partition's durable does not", input: { durables: [durable('slicer-c1-p1', 'kube.c1.1.>', 2)] }, keepFrom: 101, heldBy: 'snapshot' },
    { name: 'a durable that never acknowledged anything keeps the whole log', input: { durables: [durable('left-behind', 'kube.>', 0)] }, keepFrom: 1, heldBy: 'durable left-behind' },
    { name: 'no snapshot position (0) keeps everything', input: { snapshotSeq: 0 }, keepFrom: 1, heldBy: 'snapshot' },
    { name: 'the node scope: every KUBE hints consumer counts', input: { filter: 'kube.c1.node.>', partition: undefined as unknown as number, offsets: new Map([['hints:c1:KUBE:p1:nodes', 20]]) }, keepFrom: 21, heldBy: 'offset hints:c1:KUBE:p1:nodes' },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const input = { ...base, ...tc.input };
      const { partition, ...rest } = input;
      expect(cutOf(partition === undefined ? rest : input)).toEqual({ keepFrom: tc.keepFrom, heldBy: tc.heldBy });
    });
  }
});

const row = (name: string, o: { deleted?: boolean; rv?: string; kind?: KubeObjectRow['kind'] } = {}): KubeObjectRow => ({
  cluster: 'c1',
  kind: o.kind ?? 'Pod',
  namespace: 'ns',
  name,
  uid: `uid-${name}`,
  resourceVersion: o.rv ?? '5',
  deleted: o.deleted ?? false,
  body: { kind: o.kind ?? 'Pod', metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: o.rv ?? '5' } },
  kubeSeq: 1,
});
const subjectOf = (r: KubeObjectRow): string => `kube.c1.0.${r.kind.toLowerCase()}.ns.${r.name}`;
const tail = (seq: number, timeMs = 1_000_000): SubjectTail => ({ seq, timeMs });
const HOUR = 3_600_000;

describe('planCarries', () => {
  const now = 1_000_000 + 10 * 60_000; // 10 minutes after the tails' time
  const cases: readonly { name: string; rows: KubeObjectRow[]; tails: [string, SubjectTail][]; keepFrom?: number; retention?: number; carried: string[]; unowned?: string[]; expired?: number }[] = [
    { name: 'a live object whose last message goes is carried', rows: [row('a')], tails: [['kube.c1.0.pod.ns.a', tail(10)]], carried: ['kube.c1.0.pod.ns.a@10'] },
    { name: 'a live object whose last message stays is not', rows: [row('a')], tails: [['kube.c1.0.pod.ns.a', tail(50)]], carried: [] },
    { name: 'the cut itself stays', rows: [row('a')], tails: [['kube.c1.0.pod.ns.a', tail(40)]], carried: [] },
    { name: 'a live object with no message left is carried (expect an empty subject)', rows: [row('a')], tails: [], carried: ['kube.c1.0.pod.ns.a@0'] },
    { name: 'a young tombstone is carried as a delete', rows: [row('d', { deleted: true })], tails: [['kube.c1.0.pod.ns.d', tail(12)]], carried: ['kube.c1.0.pod.ns.d@12 deleted'] },
    { name: 'a tombstone older than the retention goes with the purge', rows: [row('d', { deleted: true })], tails: [['kube.c1.0.pod.ns.d', tail(12)]], retention: 5 * 60_000, carried: [], expired: 1 },
    { name: 'a tombstone whose subject is already empty is not carried', rows: [row('d', { deleted: true })], tails: [], carried: [] },
    { name: 'a tombstone with a newer message after the cut is left', rows: [row('d', { deleted: true })], tails: [['kube.c1.0.pod.ns.d', tail(70)]], carried: [] },
    {
      name: 'subjects no snapshot row speaks for (another controller’s slice) are listed for their body',
      rows: [row('a')],
      tails: [['kube.c1.0.pod.ns.a', tail(60)], ['kube.c1.0.endpointslice.ns.x', tail(3)], ['kube.c1.0.endpointslice.ns.y', tail(90)]],
      carried: [],
      unowned: ['kube.c1.0.endpointslice.ns.x'],
    },
    {
      name: 'carries go in the order of their last messages',
      rows: [row('b'), row('a'), row('c', { kind: 'Service' })],
      tails: [['kube.c1.0.pod.ns.a', tail(20)], ['kube.c1.0.pod.ns.b', tail(5)], ['kube.c1.0.service.ns.c', tail(9)]],
      carried: ['kube.c1.0.pod.ns.b@5', 'kube.c1.0.service.ns.c@9', 'kube.c1.0.pod.ns.a@20'],
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const plan = planCarries({ rows: tc.rows, subjectOf, tails: new Map(tc.tails), keepFrom: tc.keepFrom ?? 40, nowMs: now, tombstoneRetentionMs: tc.retention ?? HOUR });
      expect(plan.carries.map((c) => `${c.subject}@${c.expectLast}${c.row.deleted ? ' deleted' : ''}`)).toEqual(tc.carried);
      expect(plan.unowned.map((u) => u.subject)).toEqual(tc.unowned ?? []);
      expect(plan.expiredTombstones).toBe(tc.expired ?? 0);
    });
  }
});

describe('carry helpers', () => {
  it('carries an unowned last message unless it is an expired delete', () => {
    expect(carriesUnowned({ type: 'Upserted.v1' }, 10 * HOUR, HOUR)).toBe(true);
    expect(carriesUnowned({ type: 'Deleted.v1' }, 10, HOUR)).toBe(true);
    expect(carriesUnowned({ type: 'Deleted.v1' }, HOUR, HOUR)).toBe(false);
  });
  it('compacts only when what goes is at least twice what is republished', () => {
    expect([worthCompacting(0, 0), worthCompacting(10, 5), worthCompacting(9, 5), worthCompacting(1, 0)]).toEqual([false, true, false, true]);
  });
  it('names a carried message after the version and the snapshot, and keeps the body', () => {
    const r = row('a', { rv: '77' });
    expect(carriedMsgId('c1', r, 120)).toBe('c1/uid-a/77/carried-120');
    expect(carriedMsgId('c1', { ...r, deleted: true }, 120)).toBe('c1/uid-a/77/deleted/carried-120');
    expect(carriedEnvelope('c1', { ...r, deleted: true }, 0)).toEqual({ type: 'Deleted.v1', cluster: 'c1', kind: 'Pod', object: r.body, observedAt: '1970-01-01T00:00:00.000Z' });
  });
});

describe('compactionBounds', () => {
  it.each([
    { name: 'one message per live object, all below the cut: as many to carry as go', live: 1000, keepFrom: 1001, range: { first: 1, last: 1000 }, below: 1000, carries: 1000 },
    { name: 'messages at or above the cut may be the last of as many objects', live: 1000, keepFrom: 901, range: { first: 1, last: 1000 }, below: 900, carries: 900 },
    { name: 'more recent messages than objects: no carry is certain', live: 10, keepFrom: 501, range: { first: 1, last: 1000 }, below: 500, carries: 0 },
    { name: 'a purged start: only what the stream still holds goes', live: 0, keepFrom: 600, range: { first: 400, last: 1000 }, below: 200, carries: 0 },
    { name: 'a cut below the first sequence: nothing goes', live: 5, keepFrom: 300, range: { first: 400, last: 1000 }, below: 0, carries: 0 },
    { name: 'an empty stream', live: 3, keepFrom: 1, range: { first: 1, last: 0 }, below: 0, carries: 3 },
  ])('$name', ({ live, keepFrom, range, below, carries }) => {
    expect(compactionBounds(live, keepFrom, range)).toEqual({ belowAtMost: below, carriesAtLeast: carries });
  });

  // The bounds are only used to say "not worth it" early, so they must never be tighter than the
  // exact numbers: checked against planCarries on random logs.
  it('never claims fewer below the cut or more carried than the exact count', () => {
    let seed = 7;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let run = 0; run < 300; run++) {
      const subjects = 1 + rand(30);
      const last = rand(120);
      const first = 1 + rand(last + 1);
      const keepFrom = 1 + rand(last + 2);
      const tails = new Map<string, SubjectTail>();
      let below = 0;
      for (let seq = first; seq <= last; seq++) {
        tails.set(`s${rand(subjects)}`, { seq, timeMs: 0 });
        if (seq < keepFrom) below++;
      }
      const rows = Array.from({ length: subjects }, (_, i) => i)
        .filter(() => rand(3) > 0)
        .map((i): KubeObjectRow => ({ cluster: 'c1', kind: 'Pod', namespace: 'ns', name: `s${i}`, uid: `u${i}`, resourceVersion: '1', deleted: rand(5) === 0, body: {}, kubeSeq: 1 }));
      const carries = planCarries({ rows, subjectOf: (r) => r.name, tails, keepFrom, nowMs: 1000, tombstoneRetentionMs: rand(2) === 0 ? 0 : 10_000 }).carries.length;
      const b = compactionBounds(rows.filter((r) => !r.deleted).length, keepFrom, { first, last });
      expect(b.belowAtMost, `run ${run}`).toBeGreaterThanOrEqual(below);
      expect(b.carriesAtLeast, `run ${run}`).toBeLessThanOrEqual(carries);
      if (!worthCompacting(b.belowAtMost, b.carriesAtLeast)) expect(worthCompacting(below, carries), `run ${run}`).toBe(false);
    }
  });
});
