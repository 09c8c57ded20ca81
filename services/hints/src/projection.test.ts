import { describe, expect, it } from 'vitest';
import type { HintDecision, HintsSnapshot } from '@slicemesh/db';
import type { Node, Service } from '@slicemesh/model';
import { deepFreeze, makeNode, makeService, makeSlice } from '@slicemesh/testing';
import type { KubeEnvelope, SliceChangedV1 } from './messages.ts';
import { HintsProjection } from './projection.ts';
import { ep } from './test-fixtures.ts';

const withRv = <T extends Node | Service>(o: T, rv: string): T => ({ ...o, metadata: { ...o.metadata, resourceVersion: rv } });
const env = <T>(object: T, type: 'Upserted.v1' | 'Deleted.v1' = 'Upserted.v1'): KubeEnvelope<T> => deepFreeze({ type, cluster: 'c1', object, observedAt: '' });
const change = (service: string, upserts: SliceChangedV1['upserts'], deletes: string[] = []): SliceChangedV1 =>
  ({ type: 'SliceChanged.v1', cluster: 'c1', namespace: 'default', service, upserts, deletes, kubeSeq: null, reconcileID: null });
const decision = (service: string): HintDecision => ({ namespace: 'default', service, addressType: 'IPv4', enabled: true, mode: 'Auto', event: null, reason: 'r', decidedAt: new Date(0) });

function snapshot(o: Partial<HintsSnapshot> = {}): HintsSnapshot {
  return { services: [], slices: [], foreignSlices: [], nodes: [], decisions: [], publishedViews: [], offsets: new Map(), ...o };
}

describe('HintsProjection', () => {
  it('loads a snapshot: services, slices per service sorted by name, nodes, decisions, offsets and the services it knows', () => {
    const p = new HintsProjection(snapshot({
      services: [makeService('web')],
      slices: [makeSlice('web-b', []), makeSlice('web-a', []), makeSlice('api-1', [], { service: 'api' })],
      nodes: [makeNode('n2'), makeNode('n1')],
      decisions: [decision('db')],
      offsets: new Map([['o-slices', 7]]),
    }));
    expect(p.service('default/web')?.metadata.name).toBe('web');
    expect(p.slices('default/web').map((s) => s.metadata.name)).toEqual(['web-a', 'web-b']);
    expect(p.nodes.list().map((n) => n.metadata.name)).toEqual(['n1', 'n2']);
    expect(p.decisions('default/db')).toHaveLength(1);
    expect([p.offset('o-slices'), p.offset('o-nodes')]).toEqual([7, 0]);
    expect(p.knownServices()).toEqual(['default/api', 'default/db', 'default/web']);
  });

  it("keeps other controllers' slices from the snapshot apart from the slicer's, per service, and knows their services", () => {
    const p = new HintsProjection(snapshot({
      slices: [makeSlice('web-a', [])],
      foreignSlices: [makeSlice('imported-2', [], { service: 'db', managedBy: 'x' }), makeSlice('imported-1', [], { service: 'db', managedBy: 'x' }), makeSlice('web-a', [], { managedBy: 'x' })],
    }));
    expect(p.foreignSlices('default/db').map((s) => s.metadata.name)).toEqual(['imported-1', 'imported-2']);
    expect(p.slices('default/db')).toEqual([]);
    expect(p.foreignSlices('default/web').map((s) => s.metadata.labels?.['endpointslice.kubernetes.io/managed-by'])).toEqual(['x']);
    expect(p.slices('default/web').map((s) => s.metadata.labels?.['endpointslice.kubernetes.io/managed-by'])).toEqual(['endpointslice-controller.k8s.io']);
    expect(p.knownServices()).toEqual(['default/db', 'default/web']);
    const same = p.foreignSlices('default/db');
    expect(p.foreignSlices('default/db')).toBe(same);
  });

  it("a service's slice list keeps its identity until one of its slices changes", () => {
    const p = new HintsProjection(snapshot({ slices: [makeSlice('web-a', []), makeSlice('api-1', [], { service: 'api' })] }));
    const before = p.slices('default/web');
    const stage = p.stage();
    stage.applySliceChanged(change('api', [makeSlice('api-1', [ep('10.0.0.1', 'zone-a', 'n-a')], { service: 'api' })]));
    stage.apply('o', 1);
    expect(p.slices('default/web')).toBe(before);
    const stage2 = p.stage();
    stage2.applySliceChanged(change('web', [makeSlice('web-b', [])]));
    stage2.apply('o', 2);
    expect(p.slices('default/web')).not.toBe(before);
  });
});

describe('IngestStage', () => {
  const cases: {
    name: string;
    stage: (p: HintsProjection) => ReturnType<HintsProjection['stage']>;
    /** The rows the batch stores, and what memory holds once it is applied. */
    want: { rows: unknown; after: (p: HintsProjection) => unknown; expect: unknown };
  }[] = [
    {
      name: 'a slice deleted and upserted in one batch is one upsert; memory holds it once applied',
      stage: (p) => {
        const s = p.stage();
        s.applySliceChanged(change('web', [], ['web-a']));
        s.applySliceChanged(change('web', [makeSlice('web-a', [ep('10.0.0.9', 'zone-a', 'n-a')])]));
        return s;
      },
      want: {
        rows: { slices: { upserts: ['web-a'], deletes: [] } },
        after: (p) => p.slices('default/web').map((s) => s.endpoints[0]?.addresses[0]),
        expect: ['10.0.0.9'],
      },
    },
    {
      name: 'a delete names only the slice: it goes whichever service held it',
      stage: (p) => {
        const s = p.stage();
        s.applySliceChanged(change('web', [], ['api-1']));
        return s;
      },
      want: { rows: { slices: { upserts: [], deletes: [{ namespace: 'default', name: 'api-1' }] } }, after: (p) => p.slices('default/api'), expect: [] },
    },
    {
      name: 'an older service version than the one held, or staged earlier in the batch, is skipped',
      stage: (p) => {
        const s = p.stage();
        s.applyService(env(withRv(makeService('web', { labels: { v: '12' } }), '12')));
        s.applyService(env(withRv(makeService('web', { labels: { v: '11' } }), '11')));
        s.applyService(env(withRv(makeService('api', { labels: { v: '3' } }), '3')));
        return s;
      },
      want: {
        rows: { services: { upserts: ['web'], deletes: [] } },
        after: (p) => [p.service('default/web')?.metadata.labels?.['v'], p.service('default/api')?.metadata.labels?.['v']],
        expect: ['12', '5'],
      },
    },
    {
      name: 'a node added and deleted in one batch is one delete, at the version of the delete (the shared row is version-guarded); the nodes held are untouched',
      stage: (p) => {
        const s = p.stage();
        s.applyNode(env(withRv(makeNode('n2'), '1')));
        s.applyNode(env(withRv(makeNode('n2'), '2'), 'Deleted.v1'));
        return s;
      },
      want: { rows: { nodes: { upserts: [], deletes: ['n2'], deletedAt: { n2: '2' } } }, after: (p) => p.nodes.list().map((n) => n.metadata.name), expect: ['n1'] },
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const p = new HintsProjection(snapshot({
        services: [withRv(makeService('api', { labels: { v: '5' } }), '5')],
        slices: [makeSlice('web-a', []), makeSlice('api-1', [], { service: 'api' })],
        nodes: [withRv(makeNode('n1', { zone: 'zone-a' }), '5')],
      }));
      const stage = tc.stage(p);
      const rows = stage.rows();
      const names = (xs: readonly { metadata: { name: string } }[] | undefined) => xs?.map((x) => x.metadata.name);
      expect({
        ...(rows.slices ? { slices: { upserts: names(rows.slices.upserts), deletes: rows.slices.deletes } } : {}),
        ...(rows.services ? { services: { upserts: names(rows.services.upserts), deletes: rows.services.deletes } } : {}),
        ...(rows.nodes ? { nodes: { upserts: names(rows.nodes.upserts), deletes: rows.nodes.deletes, ...(rows.nodes.deletedAt ? { deletedAt: rows.nodes.deletedAt } : {}) } } : {}),
      }).toEqual(tc.want.rows);
      stage.apply('o', 3);
      expect(tc.want.after(p)).toEqual(tc.want.expect);
      expect(p.offset('o')).toBe(3);
    });
  }
});
