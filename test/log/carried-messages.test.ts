// A carried message (compaction's republish of an object's current version, services/slicer's
// compactor.ts) next to the original, through every reader of KUBE: the slicer's ingest, the
// hints service's version floors, the log engine (libs/history) and the watcher's start-up
// readback. It reads several services, so it lives here rather than beside one. The copy has
// the original's body and resourceVersion, so every fold takes it as stale, and a reader of the
// last message alone (the readback) takes it as the object's state.

import { describe, expect, it } from 'vitest';
import { ClusterState } from '@slicemesh/core';
import type { KubeObjectRow } from '@slicemesh/db';
import { historyOf, memoryLog, stateAt } from '@slicemesh/history';
import type { LogEvent } from '@slicemesh/history';
import type { Pod, Service } from '@slicemesh/model';
import { makeNode, makePod, makeService } from '@slicemesh/testing';
import { parseStoredEvent } from '@slicemesh/watcher';
import { VersionFloors } from '@slicemesh/hints';
import type { IngestDeps, IngestMessage } from '@slicemesh/slicer';
import { carriedEnvelope, ingestBatch } from '@slicemesh/slicer';
import { MemoryStore } from '../../services/slicer/src/testing/memory-store.ts';
import { atVersion, envelopeOf, subjectOf } from '../../services/slicer/src/testing/kube-events.ts';

type Obj = Service | Pod | ReturnType<typeof makeNode>;

interface Step {
  readonly obj: Obj;
  readonly deleted?: boolean;
  /** A carried copy of the snapshot's row for `obj` (same body and version). */
  readonly carried?: boolean;
}

const web = makeService('web', { selector: { app: 'web' } });
const p1 = makePod('p1', { labels: { app: 'web' }, ips: ['10.0.0.1'] });
const node = makeNode('node-1', { zone: 'a' });

const rowOf = (s: Step): KubeObjectRow => ({
  cluster: 'c1',
  kind: s.obj.kind as KubeObjectRow['kind'],
  namespace: s.obj.kind === 'Node' ? '' : (s.obj.metadata.namespace ?? 'default'),
  name: s.obj.metadata.name,
  uid: s.obj.metadata.uid ?? '',
  resourceVersion: s.obj.metadata.resourceVersion ?? '',
  deleted: s.deleted === true,
  body: s.obj,
  kubeSeq: 0,
});

function bodyOf(s: Step): Record<string, unknown> {
  return s.carried === true ? carriedEnvelope('c1', rowOf(s), 0) : envelopeOf(s.obj, { type: s.deleted === true ? 'Deleted.v1' : 'Upserted.v1' });
}

function messages(steps: readonly Step[]): IngestMessage[] {
  return steps.map((s, i) => {
    const data = JSON.parse(JSON.stringify(bodyOf(s))) as unknown;
    return { seq: i + 1, subject: subjectOf(s.obj), data, raw: new TextEncoder().encode(JSON.stringify(data)) };
  });
}

const cases: readonly { name: string; steps: readonly Step[]; last: string }[] = [
  {
    name: 'a live Service, then its carried copy',
    steps: [{ obj: atVersion(web, 5) }, { obj: atVersion(p1, 6) }, { obj: atVersion(web, 5), carried: true }],
    last: 'Upserted.v1 Service web@5',
  },
  {
    name: 'a live Pod, then its carried copy',
    steps: [{ obj: atVersion(web, 5) }, { obj: atVersion(p1, 6) }, { obj: atVersion(p1, 6), carried: true }],
    last: 'Upserted.v1 Pod p1@6',
  },
  {
    name: 'a deleted Pod, then its carried delete (a young tombstone)',
    steps: [{ obj: atVersion(web, 5) }, { obj: atVersion(p1, 6) }, { obj: atVersion(p1, 9), deleted: true }, { obj: atVersion(p1, 9), deleted: true, carried: true }],
    last: 'Deleted.v1 Pod p1@9',
  },
  {
    name: 'a stale copy after the newer version, then the carried newer version',
    steps: [{ obj: atVersion(web, 5) }, { obj: atVersion(p1, 8) }, { obj: atVersion(p1, 6) }, { obj: atVersion(p1, 8), carried: true }],
    last: 'Upserted.v1 Pod p1@8',
  },
  {
    name: 'a Node, then its carried copy',
    steps: [{ obj: atVersion(node, 2) }, { obj: atVersion(web, 5) }, { obj: atVersion(node, 2), carried: true }],
    last: 'Upserted.v1 Node node-1@2',
  },
];

describe('a carried message is stale to every fold and the last state to the readback', () => {
  for (const tc of cases) {
    it(`${tc.name}: slicer ingest`, async () => {
      const deps: IngestDeps = { state: new ClusterState(), offsets: new Map(), store: new MemoryStore(), deadLetters: { publish: async () => {} }, cluster: 'c1', partitions: 1, prefix: '', batchPeriodMs: 0 };
      const out = await ingestBatch('p0', messages(tc.steps), deps);
      expect(out.at(-1)).toMatchObject({ result: 'stale', keys: [] });
    });

    it(`${tc.name}: hints version floors`, () => {
      const floors = new VersionFloors();
      const stage = floors.stage();
      const taken = tc.steps.map((s) => stage.take(`${s.obj.kind}/${s.obj.metadata.namespace ?? ''}/${s.obj.metadata.name}`, { resourceVersion: s.obj.metadata.resourceVersion ?? '', deleted: s.deleted === true }));
      expect(taken.at(-1)).toBe(false);
    });

    it(`${tc.name}: the log engine shows no change for it`, async () => {
      const settings = { cluster: 'c1', prefix: '', partitions: 1, managedBy: 'endpointslice-controller.k8s.io', maxEndpointsPerSlice: 100, preferSameTrafficDistribution: false };
      const events: LogEvent[] = messages(tc.steps).map((m) => ({ seq: m.seq, time: `2026-01-01T00:00:${String(m.seq).padStart(2, '0')}Z`, subject: m.subject, data: m.data }));
      const withCarried = memoryLog({ settings, events });
      const without = memoryLog({ settings, events: events.slice(0, -1) });
      const ref = { namespace: 'default', name: 'web' };
      expect((await historyOf(withCarried, ref)).length).toBe((await historyOf(without, ref)).length);
      const a = await stateAt(withCarried, { seq: events.length, time: '2026-01-01T00:01:00Z' });
      const b = await stateAt(without, { seq: events.length - 1, time: '2026-01-01T00:01:00Z' });
      expect(JSON.stringify(a.services)).toBe(JSON.stringify(b.services));
      expect(a.nodes).toEqual(b.nodes);
    });

    it(`${tc.name}: the watcher's readback takes it as the object's last state`, () => {
      const last = tc.steps.at(-1) as Step;
      const ev = parseStoredEvent(new TextEncoder().encode(JSON.stringify(bodyOf(last))));
      if (typeof ev === 'string') throw new Error(ev);
      expect(`${ev.type} ${ev.kind} ${ev.object.metadata.name}@${ev.object.metadata.resourceVersion ?? ''}`).toBe(tc.last);
      expect(ev.object).toEqual(last.obj);
    });
  }
});
