import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { ApiError } from './api-error.ts';
import { kindInfo, KINDS, qualifiedResource } from './kinds.ts';
import { ObjectStore } from './object-store.ts';
import type { KubeObj, StoreEvent } from './types.ts';

const T0 = Date.UTC(2026, 0, 1);

function newStore(extra: Partial<ConstructorParameters<typeof ObjectStore>[0]> = {}): { store: ObjectStore; clock: { t: number } } {
  const clock = { t: T0 };
  return { store: new ObjectStore({ now: () => clock.t, seed: 'test', ...extra }), clock };
}

const pod = (name: string, extra: Record<string, unknown> = {}): KubeObj =>
  deepFreeze({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels: { app: 'web' } }, spec: { containers: [{ name: 'c' }] }, ...extra });

const service = (name: string, spec: Record<string, unknown> = {}): KubeObj =>
  deepFreeze({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec: { selector: { app: name }, ports: [{ port: 80 }], ...spec } });

function apiError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

describe('ObjectStore writes', () => {
  it('starts with the default namespaces at resourceVersions 1..4', () => {
    const { store } = newStore();
    expect(store.list('Namespace').map((n) => [n.metadata.name, n.metadata.resourceVersion])).toEqual([
      ['default', '1'], ['kube-node-lease', '4'], ['kube-public', '3'], ['kube-system', '2'],
    ]);
    expect(store.resourceVersion).toBe(4);
  });

  it('stamps uid, resourceVersion, generation and creationTimestamp on create', () => {
    const { store } = newStore();
    const created = store.create('Pod', pod('a'));
    expect(created.metadata).toMatchObject({ resourceVersion: '5', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' });
    expect(created.metadata.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Object.isFrozen(created) && Object.isFrozen(created.metadata)).toBe(true);
  });

  it('derives uids from the seed deterministically, and differently for a re-created name', () => {
    const a = newStore().store;
    const b = newStore().store;
    const first = a.create('Pod', pod('x')).metadata.uid;
    expect(b.create('Pod', pod('x')).metadata.uid).toBe(first);
    a.delete('Pod', 'default', 'x');
    expect(a.create('Pod', pod('x')).metadata.uid).not.toBe(first);
    expect(newStore({ seed: 'other' }).store.create('Pod', pod('x')).metadata.uid).not.toBe(first);
  });

  it('increments the resourceVersion by one per committed change across kinds', () => {
    const { store } = newStore();
    const rvs = [
      store.create('Pod', pod('a')).metadata.resourceVersion,
      store.create('Service', service('s')).metadata.resourceVersion,
      store.update('Pod', { ...store.get('Pod', 'default', 'a')!, metadata: { ...store.get('Pod', 'default', 'a')!.metadata, labels: { app: 'x' } } }).metadata.resourceVersion,
      store.delete('Pod', 'default', 'a').object.metadata.resourceVersion,
    ];
    expect(rvs).toEqual(['5', '6', '7', '8']);
  });

  const failures: readonly { name: string; code: number; reason: string; run: (s: ObjectStore) => unknown }[] = [
    { name: 'create of an existing name is 409 AlreadyExists', code: 409, reason: 'AlreadyExists', run: (s) => { s.create('Pod', pod('a')); s.create('Pod', pod('a')); } },
    { name: 'create in a missing namespace is 404 NotFound', code: 404, reason: 'NotFound', run: (s) => s.create('Pod', { ...pod('a'), metadata: { name: 'a', namespace: 'nope' } }) },
    { name: 'update with a stale resourceVersion is 409 Conflict', code: 409, reason: 'Conflict', run: (s) => { const p = s.create('Pod', pod('a')); s.update('Pod', { ...p, metadata: { ...p.metadata, labels: { x: '1' } } }); s.update('Pod', { ...p, metadata: { ...p.metadata, labels: { x: '2' } } }); } },
    { name: 'update of a missing object is 404', code: 404, reason: 'NotFound', run: (s) => s.update('Pod', pod('missing')) },
    { name: 'delete of a missing object is 404', code: 404, reason: 'NotFound', run: (s) => s.delete('Pod', 'default', 'missing') },
    { name: 'delete with a wrong uid precondition is 409', code: 409, reason: 'Conflict', run: (s) => { s.create('Pod', pod('a')); s.delete('Pod', 'default', 'a', { preconditions: { uid: 'other' } }); } },
    { name: 'an invalid name is 422 Invalid', code: 422, reason: 'Invalid', run: (s) => s.create('Pod', pod('Not_Valid')) },
    { name: 'a pod without containers is 422 Invalid', code: 422, reason: 'Invalid', run: (s) => s.create('Pod', { ...pod('a'), spec: { containers: [] } }) },
    { name: 'deleting the default namespace is 403 Forbidden', code: 403, reason: 'Forbidden', run: (s) => s.delete('Namespace', undefined, 'default') },
  ];
  for (const tc of failures) {
    it(tc.name, () => {
      const { store } = newStore();
      const err = apiError(() => tc.run(store));
      expect([err.code, err.reason]).toEqual([tc.code, tc.reason]);
    });
  }

  // Optimistic concurrency is the store's, so it holds for every kind a client can write.
  const samples: Readonly<Record<string, KubeObj>> = {
    Namespace: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'occ' } },
    Node: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'occ' } },
    Pod: pod('occ'),
    Service: service('occ'),
    Endpoints: { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'occ', namespace: 'default' }, subsets: [] },
    EndpointSlice: { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'occ', namespace: 'default' }, addressType: 'IPv4', endpoints: [] },
    Event: { apiVersion: 'v1', kind: 'Event', metadata: { name: 'occ', namespace: 'default' }, involvedObject: { kind: 'Node', name: 'n1' }, reason: 'R' },
    Lease: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'occ', namespace: 'default' }, spec: { holderIdentity: 'a' } },
    ServiceExport: { apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceExport', metadata: { name: 'occ', namespace: 'default' } },
    ServiceImport: { apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceImport', metadata: { name: 'occ', namespace: 'default' }, spec: { type: 'Headless', ports: [] } },
  };
  it('has a sample for every stored kind', () => {
    expect(Object.keys(samples).sort()).toEqual(KINDS.map((k) => k.kind).sort());
  });
  for (const [kind, sample] of Object.entries(samples)) {
    it(`${kind}: an update from a stale resourceVersion is 409 Conflict naming ${qualifiedResource(kindInfo(kind))}`, () => {
      const { store } = newStore();
      const created = store.create(kind, sample);
      store.update(kind, { ...created, metadata: { ...created.metadata, labels: { writer: 'first' } } });
      const err = apiError(() => store.update(kind, { ...created, metadata: { ...created.metadata, labels: { writer: 'second' } } }));
      expect([err.code, err.reason, err.message]).toEqual([409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(kindInfo(kind))} "occ": the object has been modified; please apply your changes to the latest version and try again`]);
    });
  }

  it('names the resource in upstream wording', () => {
    const { store } = newStore();
    expect(apiError(() => store.delete('Service', 'default', 'web')).message).toBe('services "web" not found');
  });

  it('an update that changes nothing keeps the resourceVersion and emits no event', () => {
    const { store } = newStore();
    const created = store.create('Pod', pod('a'));
    const events: StoreEvent[] = [];
    store.watch('Pod', { onEvent: (e) => events.push(e) });
    expect(store.update('Pod', created)).toBe(created);
    expect(events).toEqual([]);
    expect(store.resourceVersion).toBe(5);
  });

  it('bumps generation only when something besides metadata and status changes', () => {
    const { store } = newStore();
    const p = store.create('Pod', pod('a'));
    const labelled = store.update('Pod', { ...p, metadata: { ...p.metadata, labels: { app: 'b' } } });
    const status = store.update('Pod', { ...labelled, status: { phase: 'Running' } });
    const spec = store.update('Pod', { ...status, spec: { containers: [{ name: 'd' }] } });
    expect([labelled, status, spec].map((o) => o.metadata.generation)).toEqual([1, 1, 2]);
  });

  it('scope main keeps the stored status; scope status keeps everything but status', () => {
    const { store } = newStore();
    const p = store.create('Pod', { ...pod('a'), status: { phase: 'Running' } });
    const main = store.update('Pod', { ...p, metadata: { ...p.metadata, labels: { v: '2' } }, status: { phase: 'Failed' } }, { scope: 'main' });
    expect(main['status']).toEqual({ phase: 'Running' });
    const st = store.update('Pod', { ...main, metadata: { ...main.metadata, labels: { v: '3' } }, status: { phase: 'Succeeded' } }, { scope: 'status' });
    expect([st.metadata.labels, st['status']]).toEqual([{ v: '2' }, { phase: 'Succeeded' }]);
  });

  it('resetStatus drops a submitted status on create (as API creates of pods do)', () => {
    const { store } = newStore();
    expect(store.create('Pod', { ...pod('a'), status: { phase: 'Running', podIP: '1.2.3.4' } }, { resetStatus: true })['status']).toEqual({ phase: 'Pending' });
  });

  it('generateName appends a deterministic five-character suffix', () => {
    const a = newStore().store.create('Pod', { ...pod(''), metadata: { name: '', generateName: 'web-', namespace: 'default' } });
    const b = newStore().store.create('Pod', { ...pod(''), metadata: { name: '', generateName: 'web-', namespace: 'default' } });
    expect(a.metadata.name).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(b.metadata.name).toBe(a.metadata.name);
  });

  it('dryRun validates and answers without storing or bumping the version', () => {
    const { store } = newStore();
    const out = store.create('Service', service('web'), { dryRun: true });
    expect((out['spec'] as { clusterIP: string }).clusterIP).toBe('10.96.0.10');
    expect([store.get('Service', 'default', 'web'), store.resourceVersion]).toEqual([undefined, 4]);
    // The dry-run allocation was released: a real create gets the same IP.
    expect((store.create('Service', service('web'))['spec'] as { clusterIP: string }).clusterIP).toBe('10.96.0.10');
  });

  it('deleting a namespace removes everything in it first', () => {
    const { store } = newStore();
    store.create('Namespace', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
    store.create('Pod', { ...pod('a'), metadata: { name: 'a', namespace: 'shop' } });
    store.create('Service', { ...service('s'), metadata: { name: 's', namespace: 'shop' } });
    const kinds: string[] = [];
    for (const k of ['Pod', 'Service', 'Namespace']) store.watch(k, { onEvent: (e) => kinds.push(`${e.type} ${e.kind}`) });
    store.delete('Namespace', undefined, 'shop');
    expect(kinds).toEqual(['DELETED Pod', 'DELETED Service', 'DELETED Namespace']);
  });
});

describe('ObjectStore graceful pod deletion', () => {
  const bound = (name: string, grace?: number) => pod(name, { spec: { nodeName: 'n1', containers: [{ name: 'c' }], ...(grace !== undefined ? { terminationGracePeriodSeconds: grace } : {}) } });
  const cases: readonly { name: string; pod: KubeObj; options?: { gracePeriodSeconds?: number }; removed: boolean; deletionTimestamp?: string }[] = [
    { name: 'a bound pod with a grace period gets deletionTimestamp = now + grace', pod: bound('a', 30), removed: false, deletionTimestamp: '2026-01-01T00:00:30Z' },
    { name: 'gracePeriodSeconds=0 removes at once', pod: bound('a', 30), options: { gracePeriodSeconds: 0 }, removed: true },
    { name: 'an explicit grace period overrides the pod spec', pod: bound('a', 30), options: { gracePeriodSeconds: 5 }, removed: false, deletionTimestamp: '2026-01-01T00:00:05Z' },
    { name: 'an unscheduled pod is removed at once', pod: pod('a', { spec: { containers: [{ name: 'c' }], terminationGracePeriodSeconds: 30 } }), removed: true },
    { name: 'a pod without a grace period uses the store default (0)', pod: bound('a'), removed: true },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const { store } = newStore();
      store.create('Pod', tc.pod);
      const result = store.delete('Pod', 'default', 'a', tc.options ?? {});
      expect(result.removed).toBe(tc.removed);
      expect(result.object.metadata.deletionTimestamp).toBe(tc.deletionTimestamp);
      expect(store.get('Pod', 'default', 'a') !== undefined).toBe(!tc.removed);
    });
  }

  it('a second delete with a longer grace keeps the earlier deadline (no new version)', () => {
    const { store, clock } = newStore();
    store.create('Pod', bound('a', 10));
    const first = store.delete('Pod', 'default', 'a').object;
    clock.t += 2000;
    expect(store.delete('Pod', 'default', 'a', { gracePeriodSeconds: 30 }).object).toBe(first);
    expect(store.delete('Pod', 'default', 'a', { gracePeriodSeconds: 1 }).object.metadata.deletionTimestamp).toBe('2026-01-01T00:00:03Z');
  });
});
