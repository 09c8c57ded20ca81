// The pure decisions, table-driven (habit 9).
import { describe, expect, it } from 'vitest';
import type { EndpointSlice } from '@slicemesh/model';
import { ANNOTATION_TRIGGER_TIME, LABEL_MANAGED_BY, MANAGED_BY_CONTROLLER, MANAGED_BY_MIRRORING } from '@slicemesh/model';
import type { SliceChangedMessage } from '@slicemesh/nats';
import { makeSlice } from '@slicemesh/testing';
import type { KubeJson } from '@slicemesh/kube';
import type { DecisionKind, SliceAction } from './decide.ts';
import { coalesce, decide, sameSlice, writableSlice } from './decide.ts';

const OWNED = new Set([MANAGED_BY_CONTROLLER, MANAGED_BY_MIRRORING]);
const endpoint = (ip: string, ready = true) => ({ addresses: [ip], conditions: { ready }, nodeName: 'n1', zone: 'z1' });
const slice = (name = 'web-1', o: { ips?: string[]; managedBy?: string; labels?: Record<string, string> } = {}): EndpointSlice =>
  makeSlice(name, (o.ips ?? ['10.0.0.1']).map((ip) => endpoint(ip)), { ...(o.managedBy ? { managedBy: o.managedBy } : {}), ...(o.labels ? { labels: o.labels } : {}) });

/** `s` as the API server would hold it: its own uid, resourceVersion, timestamps, defaults. */
function live(s: EndpointSlice, o: { rv?: string; deleting?: boolean; managedBy?: string | null } = {}): KubeJson {
  const body = writableSlice(s) as Record<string, unknown> & { metadata: Record<string, unknown> };
  const labels = { ...(body.metadata['labels'] as Record<string, string>) };
  if (o.managedBy === null) delete labels[LABEL_MANAGED_BY];
  else if (o.managedBy !== undefined) labels[LABEL_MANAGED_BY] = o.managedBy;
  return {
    ...body,
    metadata: {
      ...body.metadata, labels, uid: 'api-uid-1', resourceVersion: o.rv ?? '42', generation: 3, creationTimestamp: '2026-01-01T00:00:00Z',
      managedFields: [{ manager: 'x' }], ...(o.deleting ? { deletionTimestamp: '2026-01-02T00:00:00Z', finalizers: ['f'] } : {}),
    },
  };
}

const upsert = (s: EndpointSlice, seq = 1): SliceAction => ({ type: 'upsert', namespace: 'default', name: s.metadata.name, seq, slice: s });
const del = (name: string, seq = 1): SliceAction => ({ type: 'delete', namespace: 'default', name, seq });

describe('decide', () => {
  const cases: readonly { readonly name: string; readonly action: SliceAction; readonly live: KubeJson | undefined; readonly want: DecisionKind }[] = [
    { name: 'upsert, absent: create', action: upsert(slice()), live: undefined, want: 'create' },
    { name: 'upsert, ours and equal: skip-equal', action: upsert(slice()), live: live(slice()), want: 'skip-equal' },
    { name: 'upsert, ours with other endpoints: update', action: upsert(slice('web-1', { ips: ['10.0.0.2'] })), live: live(slice()), want: 'update' },
    { name: 'upsert, ours with another label: update', action: upsert(slice('web-1', { labels: { tier: 'a' } })), live: live(slice()), want: 'update' },
    { name: 'upsert, mirrored slice of ours: update', action: upsert(slice('web-1', { managedBy: MANAGED_BY_MIRRORING, ips: ['10.0.0.9'] })), live: live(slice('web-1', { managedBy: MANAGED_BY_MIRRORING })), want: 'update' },
    { name: 'upsert, same name under another manager: skip-foreign', action: upsert(slice()), live: live(slice(), { managedBy: 'my-controller' }), want: 'skip-foreign' },
    { name: 'upsert, same name with no managed-by label: skip-foreign', action: upsert(slice()), live: live(slice(), { managedBy: null }), want: 'skip-foreign' },
    { name: 'upsert, ours being deleted: wait-terminating', action: upsert(slice()), live: live(slice(), { deleting: true }), want: 'wait-terminating' },
    { name: 'upsert of a slice labelled for a manager we do not own: skip-not-owned', action: upsert(slice('web-1', { managedBy: 'other' })), live: undefined, want: 'skip-not-owned' },
    { name: 'delete, ours: delete', action: del('web-1'), live: live(slice()), want: 'delete' },
    { name: 'delete, absent: skip-gone', action: del('web-1'), live: undefined, want: 'skip-gone' },
    { name: 'delete, ours being deleted: skip-gone', action: del('web-1'), live: live(slice(), { deleting: true }), want: 'skip-gone' },
    { name: 'delete, foreign: skip-foreign', action: del('web-1'), live: live(slice(), { managedBy: 'my-controller' }), want: 'skip-foreign' },
    { name: 'delete, unlabelled: skip-foreign', action: del('web-1'), live: live(slice(), { managedBy: null }), want: 'skip-foreign' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(decide(c.action, c.live, OWNED).kind).toBe(c.want);
    });
  }

  it('update carries the live resourceVersion and finalizers and none of our stored uid/generation', () => {
    const l = { ...live(slice()), metadata: { ...(live(slice()) as { metadata: Record<string, unknown> }).metadata, finalizers: ['keep.me/too'] } };
    const d = decide(upsert(slice('web-1', { ips: ['10.0.0.7'] })), l, OWNED);
    expect(d.kind).toBe('update');
    const meta = (d as unknown as { body: { metadata: Record<string, unknown> } }).body.metadata;
    expect(meta['resourceVersion']).toBe('42');
    expect(meta['finalizers']).toEqual(['keep.me/too']);
    expect(meta['uid']).toBeUndefined();
    expect(meta['generation']).toBeUndefined();
  });

  it('delete carries uid and resourceVersion preconditions of the live object', () => {
    expect(decide(del('web-1'), live(slice(), { rv: '77' }), OWNED)).toEqual({ kind: 'delete', uid: 'api-uid-1', resourceVersion: '77' });
  });

  it('skip-foreign names the other manager', () => {
    expect(decide(upsert(slice()), live(slice(), { managedBy: 'mc-importer' }), OWNED)).toEqual({ kind: 'skip-foreign', managedBy: 'mc-importer' });
  });
});

describe('writableSlice', () => {
  it('removes server-owned metadata and sets apiVersion and kind', () => {
    const s = { ...slice(), metadata: { ...slice().metadata, resourceVersion: '5', creationTimestamp: '2026-01-01T00:00:00Z' } };
    const w = writableSlice(s) as { apiVersion: string; kind: string; metadata: Record<string, unknown> };
    expect(w.apiVersion).toBe('discovery.k8s.io/v1');
    expect(w.kind).toBe('EndpointSlice');
    expect(Object.keys(w.metadata).sort()).toEqual(['labels', 'name', 'namespace', 'ownerReferences']);
  });
});

describe('sameSlice', () => {
  const base = writableSlice(slice());
  const withMeta = (o: KubeJson, meta: Record<string, unknown>): KubeJson => ({ ...o, metadata: { ...(o['metadata'] as object), ...meta } });
  const cases: readonly { readonly name: string; readonly live: KubeJson; readonly same: boolean; readonly wanted?: KubeJson }[] = [
    { name: 'server metadata only', live: live(slice()), same: true },
    { name: 'ports defaulted by the API (name "" dropped, protocol TCP)', live: { ...base, ports: [{ name: 'http', port: 8080 }] }, same: true },
    { name: 'an unnamed port stored with name ""', wanted: writableSlice({ ...slice(), ports: [{ port: 80 }] }), live: { ...base, ports: [{ name: '', port: 80, protocol: 'TCP' }] }, same: true },
    { name: 'empty conditions and hints vs absent', live: { ...base, endpoints: [{ ...endpoint('10.0.0.1'), hints: { forZones: [] } }] }, same: true },
    { name: 'only the trigger-time annotation differs', live: withMeta(base, { annotations: { [ANNOTATION_TRIGGER_TIME]: '2026-01-01T00:00:00Z' } }), same: true },
    { name: 'another annotation', live: withMeta(base, { annotations: { note: 'x' } }), same: false },
    { name: 'an extra label', live: withMeta(base, { labels: { ...(slice().metadata.labels ?? {}), extra: 'y' } }), same: false },
    { name: 'another ownerReference uid', live: withMeta(base, { ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'other', controller: true, blockOwnerDeletion: true }] }), same: false },
    { name: 'a not-ready endpoint', live: { ...base, endpoints: [endpoint('10.0.0.1', false)] }, same: false },
    { name: 'another port protocol', live: { ...base, ports: [{ name: 'http', port: 8080, protocol: 'UDP' }] }, same: false },
    { name: 'another addressType', live: { ...base, addressType: 'IPv6' }, same: false },
  ];
  for (const c of cases) {
    it(`${c.same ? 'same' : 'different'}: ${c.name}`, () => {
      expect(sameSlice(c.wanted ?? base, c.live)).toBe(c.same);
    });
  }
});

describe('coalesce', () => {
  const msg = (upserts: EndpointSlice[], deletes: string[] = []): SliceChangedMessage => ({ type: 'SliceChanged.v1', cluster: 'c', namespace: 'default', service: 'web', upserts, deletes, kubeSeq: null, reconcileID: null });

  it('keeps the last action per slice, ordered by the sequence of that action', () => {
    const out = coalesce([
      { seq: 1, message: msg([slice('a'), slice('b')]) },
      { seq: 2, message: msg([slice('a', { ips: ['10.0.0.5'] })], ['c']) },
      { seq: 3, message: msg([], ['b']) },
    ]);
    expect(out.map((a) => `${a.type} ${a.name} @${a.seq}`)).toEqual(['delete c @2', 'upsert a @2', 'delete b @3']);
    expect((out[1] as { slice: EndpointSlice }).slice.endpoints[0]?.addresses).toEqual(['10.0.0.5']);
  });

  it('a delete then a re-create of the same name ends as the upsert', () => {
    expect(coalesce([{ seq: 4, message: msg([], ['a']) }, { seq: 5, message: msg([slice('a')]) }]).map((a) => a.type)).toEqual(['upsert']);
  });

  it('keys by namespace and name', () => {
    const other = { ...msg([slice('a')]), namespace: 'other' };
    expect(coalesce([{ seq: 1, message: msg([slice('a')]) }, { seq: 2, message: other }])).toHaveLength(2);
  });

  it('nothing in, nothing out', () => {
    expect(coalesce([])).toEqual([]);
  });
});
