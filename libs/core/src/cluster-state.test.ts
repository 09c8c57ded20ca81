import { describe, expect, it } from 'vitest';
import type { Endpoints, Node, Pod, Service } from '@slicemesh/model';
import { deepFreeze, makeEndpoints, makeNode, makePod, makeService, makeSlice } from '@slicemesh/testing';
import type { ObjectChange } from './cluster-state.ts';
import { ClusterState } from './cluster-state.ts';

type Obj = Service | Pod | Node | Endpoints;
const at = <T extends Obj>(o: T, rv: number): T => deepFreeze({ ...o, metadata: { ...o.metadata, resourceVersion: String(rv) } });
const change = (o: Obj, deleted = false): ObjectChange => ({
  kind: o.kind as ObjectChange['kind'],
  namespace: o.kind === 'Node' ? '' : (o.metadata.namespace ?? 'default'),
  name: o.metadata.name,
  resourceVersion: o.metadata.resourceVersion ?? '0',
  deleted,
  object: o,
});

const web = at(makeService('web', { selector: { app: 'web' } }), 1);
const api = at(makeService('api', { selector: { app: 'api' } }), 2);
const p1 = at(makePod('p1', { labels: { app: 'web' }, nodeName: 'n1' }), 3);
const p2 = at(makePod('p2', { labels: { app: 'api' }, nodeName: 'n1' }), 4);
const n1 = at(makeNode('n1', { zone: 'a' }), 5);

interface Case {
  readonly name: string;
  readonly before: readonly ObjectChange[];
  readonly change: ObjectChange;
  readonly applied: boolean;
  readonly keys: readonly string[];
}

const cases: readonly Case[] = [
  { name: 'A.12.1 a Service change marks itself', before: [], change: change(web), applied: true, keys: ['default/web'] },
  { name: 'A.12.2 a new pod marks the Services selecting it', before: [change(web), change(api)], change: change(p1), applied: true, keys: ['default/web'] },
  { name: 'A.12.2 a pod whose labels move marks both Services', before: [change(web), change(api), change(p1)], change: change(at(makePod('p1', { labels: { app: 'api' }, nodeName: 'n1' }), 9)), applied: true, keys: ['default/api', 'default/web'] },
  { name: 'A.12.2 a deleted pod marks the Services that selected it', before: [change(web), change(p1)], change: change(at(p1, 9), true), applied: true, keys: ['default/web'] },
  { name: 'a stale pod version is not applied and marks nothing', before: [change(web), change(at(p1, 9))], change: change(p1), applied: false, keys: [] },
  { name: 'a tombstone keeps an older upsert from resurrecting the pod', before: [change(web), change(at(p1, 9), true)], change: change(at(p1, 8)), applied: false, keys: [] },
  { name: 'a node zone change marks the Services of its pods', before: [change(web), change(api), change(p1), change(p2), change(n1)], change: change(at(makeNode('n1', { zone: 'b' }), 9)), applied: true, keys: ['default/api', 'default/web'] },
  { name: 'a node change that cannot change slices marks nothing', before: [change(web), change(p1), change(n1)], change: change(at(makeNode('n1', { zone: 'a', cpu: '8' }), 9)), applied: true, keys: [] },
  { name: 'B.5 Endpoints of a selectorless Service mark it', before: [change(at(makeService('legacy', { selector: null }), 1))], change: change(at(makeEndpoints('legacy'), 2)), applied: true, keys: ['default/legacy'] },
  { name: 'B.5 Endpoints of a Service with a selector mark nothing', before: [change(web)], change: change(at(makeEndpoints('web'), 2)), applied: true, keys: [] },
];

describe('ClusterState.apply', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const s = new ClusterState();
      for (const c of tc.before) s.apply(c);
      expect(s.apply(tc.change)).toEqual({ applied: tc.applied, keys: tc.keys });
    });
  }

  it('node changes mark only Services of owned namespaces', () => {
    const s = new ClusterState({ ownsNamespace: (ns) => ns === 'mine' });
    const mine = at(makeService('web', { namespace: 'mine', selector: { app: 'web' } }), 1);
    const theirs = at(makeService('web', { namespace: 'theirs', selector: { app: 'web' } }), 2);
    for (const o of [mine, theirs, at(makePod('a', { namespace: 'mine', labels: { app: 'web' }, nodeName: 'n1' }), 3), at(makePod('b', { namespace: 'theirs', labels: { app: 'web' }, nodeName: 'n1' }), 4)]) s.apply(change(o));
    expect(s.apply(change(n1)).keys).toEqual(['mine/web']);
    expect(s.reconcilableKeys()).toEqual(['mine/web']);
  });
});

describe('ClusterState reads', () => {
  it('selectedPods follows pod and Service changes, sorted by name, same objects', () => {
    const s = new ClusterState();
    s.apply(change(web));
    const pb = at(makePod('b', { labels: { app: 'web' } }), 10);
    const pa = at(makePod('a', { labels: { app: 'web' } }), 11);
    s.apply(change(pb));
    expect(s.selectedPods(web)).toEqual([pb]);
    s.apply(change(pa));
    s.apply(change(p2)); // another Service's pod
    const list = s.selectedPods(web);
    expect(list.map((p) => p.metadata.name)).toEqual(['a', 'b']);
    expect(list[0]).toBe(pa);
    s.apply(change(at(makePod('a', { labels: { app: 'other' } }), 12)));
    expect(s.selectedPods(web).map((p) => p.metadata.name)).toEqual(['b']);
    const wider = at(makeService('web', { selector: {} }), 13);
    s.apply(change(wider));
    expect(s.selectedPods(wider)).toEqual([]); // selectorless: A.1.2
    const all = at(makeService('web', { selector: { app: 'api' } }), 14);
    s.apply(change(all));
    expect(s.selectedPods(all).map((p) => p.metadata.name)).toEqual(['p2']);
  });

  it('slices are indexed by Service and namespace, and removed cleanly', () => {
    const s = new ClusterState();
    const a = makeSlice('web-a', [], { service: 'web' });
    const b = makeSlice('web-b', [], { service: 'web' });
    const c = makeSlice('api-a', [], { service: 'api' });
    for (const x of [b, a, c]) s.putSlice(x);
    expect(s.slicesOf('default', 'web').map((x) => x.metadata.name)).toEqual(['web-a', 'web-b']);
    expect([...s.sliceNamesIn('default')].sort()).toEqual(['api-a', 'web-a', 'web-b']);
    expect(s.removeSlice('default', 'web-a')).toBe(a);
    expect(s.slicesOf('default', 'web')).toEqual([b]);
    expect(s.removeSlice('default', 'web-a')).toBeUndefined();
    expect(s.reconcilableKeys()).toEqual(['default/api', 'default/web']);
  });
});
