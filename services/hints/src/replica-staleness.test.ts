// Two watcher replicas publish KUBE (docs/architecture.md, "Watcher replicas"): a lagging one's
// older version, published after a newer one (past the duplicate window, or a delete it
// synthesised from its re-list), must change nothing here — also after a delete, when the
// projection holds nothing to compare with.

import { describe, expect, it } from 'vitest';
import type { ConsumedMessage } from '@slicemesh/nats';
import { kubeNodeSubject, kubeObjectSubject } from '@slicemesh/nats';
import { deepFreeze, makeNode, makeService, makeSlice } from '@slicemesh/testing';
import type { ConsumerRole, IngestOutcome } from './ingest.ts';
import { ingestHandlers } from './ingest.ts';
import { VersionFloors } from './node-topology.ts';
import { HintsProjection } from './projection.ts';
import { FakeStore, ep } from './test-fixtures.ts';

const opts = { cluster: 'c1', prefix: 't1.' };
type Role = Exclude<ConsumerRole, 'slices'>;
type Step = readonly [type: 'up' | 'del', rv: string, variant?: string];

const versioned = <T extends { metadata: object }>(o: T, rv: string): T => ({ ...o, metadata: { ...o.metadata, resourceVersion: rv } });

/** The KUBE message of one step: variant is a node's zone, a service's label, a slice's extra label. */
function kubeMessage(role: Role, [type, rv, variant]: Step, seq: number): ConsumedMessage {
  const eventType = type === 'up' ? 'Upserted.v1' : 'Deleted.v1';
  let subject: string;
  let body: unknown;
  if (role === 'nodes') {
    subject = kubeNodeSubject({ cluster: 'c1', name: 'n-a' }, opts);
    body = { type: eventType, cluster: 'c1', kind: 'Node', object: versioned(makeNode('n-a', { zone: variant ?? 'zone-a' }), rv), observedAt: '' };
  } else if (role === 'services') {
    subject = kubeObjectSubject({ cluster: 'c1', partition: 0, kind: 'Service', namespace: 'default', name: 'web' }, opts);
    const svc = makeService('web');
    body = { type: eventType, cluster: 'c1', kind: 'Service', object: versioned({ ...svc, metadata: { ...svc.metadata, labels: { v: variant ?? 'a' } } }, rv), observedAt: '' };
  } else {
    subject = kubeObjectSubject({ cluster: 'c1', partition: 0, kind: 'EndpointSlice', namespace: 'default', name: 'imported-1' }, opts);
    const labels: Record<string, string> = variant === 'other-proxy' ? { 'service.kubernetes.io/service-proxy-name': 'other' } : {};
    const slice = makeSlice('imported-1', [ep('10.0.1.1', 'zone-a', 'n-a')], { service: 'db', managedBy: 'mcs-importer', labels });
    body = { type: eventType, cluster: 'c1', kind: 'EndpointSlice', object: versioned(slice, rv), observedAt: '' };
  }
  const text = JSON.stringify(body);
  return { subject, seq, data: deepFreeze(JSON.parse(text) as unknown), raw: new TextEncoder().encode(text), redelivered: false, deliveryCount: 1, headers: {} };
}

function harness() {
  const store = new FakeStore();
  const projection = new HintsProjection();
  const reports: IngestOutcome[] = [];
  const handedOn: string[] = [];
  const handlers = ingestHandlers({
    ...opts,
    projection,
    store,
    offsets: { slices: 'o-slices', nodes: 'o-nodes', services: 'o-services', endpointslices: 'o-eps' },
    deadLetter: () => Promise.resolve(),
    onSlices: () => {},
    onNode: (e) => handedOn.push(e.object.metadata.resourceVersion ?? ''),
    onService: (e) => handedOn.push(e.object.metadata.resourceVersion ?? ''),
    onForeignSlice: (e) => handedOn.push(e.object.metadata.resourceVersion ?? ''),
    report: (o) => reports.push(o),
  });
  return { store, projection, reports, handedOn, handlers };
}

/** What the projection and the stored rows hold for the role's one object: `<rv>:<variant>` or 'absent'. */
function held(h: ReturnType<typeof harness>, role: Role): { memory: string; stored: string } {
  if (role === 'nodes') {
    const show = (n: ReturnType<typeof makeNode> | undefined) => (n === undefined ? 'absent' : `${n.metadata.resourceVersion}:${n.metadata.labels?.['topology.kubernetes.io/zone']}`);
    return { memory: show(h.projection.nodes.get('n-a')), stored: show(h.store.nodes.get('n-a')) };
  }
  if (role === 'services') {
    const show = (s: ReturnType<typeof makeService> | undefined) => (s === undefined ? 'absent' : `${s.metadata.resourceVersion}:${s.metadata.labels?.['v']}`);
    return { memory: show(h.projection.service('default/web')), stored: show(h.store.services.get('default/web')) };
  }
  const show = (s: ReturnType<typeof makeSlice> | undefined) => (s === undefined ? 'absent' : `${s.metadata.resourceVersion}:-`);
  return { memory: show(h.projection.foreignSlice('default', 'imported-1')), stored: show(h.store.foreign.get('default/imported-1')) };
}

describe('hints ingest: a lagging watcher replica\'s older version changes nothing', () => {
  const cases: { name: string; role: Role; batches: readonly (readonly Step[])[]; want: string; results: string[] }[] = [
    {
      name: 'an older service version after its delete does not bring the Service back',
      role: 'services', batches: [[['up', '5']], [['del', '7']], [['up', '5']]], want: 'absent', results: ['applied', 'applied', 'stale'],
    },
    {
      name: 'an older service version after its delete in the same batch does not bring it back',
      role: 'services', batches: [[['up', '5'], ['del', '7'], ['up', '6']]], want: 'absent', results: ['applied', 'applied', 'stale'],
    },
    {
      name: 'an older node version after its delete does not bring the Node back',
      role: 'nodes', batches: [[['up', '5']], [['del', '9']], [['up', '8']]], want: 'absent', results: ['applied', 'applied', 'stale'],
    },
    {
      name: 'an older node label after a relabel keeps the new zone',
      role: 'nodes', batches: [[['up', '5', 'zone-a']], [['up', '8', 'zone-b']], [['up', '5', 'zone-a']]], want: '8:zone-b', results: ['applied', 'applied', 'stale'],
    },
    {
      name: "an older version of another controller's slice after its delete does not bring it back",
      role: 'endpointslices', batches: [[['up', '5']], [['del', '7']], [['up', '6']]], want: 'absent', results: ['applied', 'applied', 'stale'],
    },
    {
      name: "an older version of a slice after one kube-proxy ignores (held as absent) stays absent",
      role: 'endpointslices', batches: [[['up', '5']], [['up', '9', 'other-proxy']], [['up', '8']]], want: 'absent', results: ['applied', 'applied', 'stale'],
    },
    {
      name: 'the same version published again (past the duplicate window) is stale',
      role: 'services', batches: [[['up', '5', 'a']], [['up', '5', 'a']]], want: '5:a', results: ['applied', 'stale'],
    },
    {
      name: 'an older delete (a replica synthesised it from its seed) after a re-created object leaves it live',
      role: 'services', batches: [[['up', '5']], [['del', '6']], [['up', '9', 'b']], [['del', '5']]], want: '9:b', results: ['applied', 'applied', 'applied', 'stale'],
    },
    {
      name: "a newer delete after a watch delete (a replica's re-list at its list resourceVersion) is taken and keeps it deleted",
      role: 'nodes', batches: [[['up', '5']], [['del', '7']], [['del', '12']], [['up', '10']]], want: 'absent', results: ['applied', 'applied', 'applied', 'stale'],
    },
    {
      name: 'a re-created object (a newer version after the delete) is taken',
      role: 'endpointslices', batches: [[['up', '5']], [['del', '7']], [['up', '15']]], want: '15:-', results: ['applied', 'applied', 'applied'],
    },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const h = harness();
      let seq = 0;
      for (const batch of tc.batches) expect(await h.handlers[tc.role](batch.map((step) => kubeMessage(tc.role, step, ++seq)))).toBe('ack');
      expect(held(h, tc.role)).toEqual({ memory: tc.want, stored: tc.want });
      expect(h.reports.map((r) => r.result)).toEqual(tc.results);
      // Stale messages are covered by the commit: a restart does not read them again.
      expect(h.store.offsets.get({ nodes: 'o-nodes', services: 'o-services', endpointslices: 'o-eps' }[tc.role])).toBe(seq);
      expect(h.handedOn).toHaveLength(tc.results.filter((r) => r === 'applied').length);
    });
  }
});

describe('VersionFloors', () => {
  it('orders as ClusterState does: a newer version, or a delete at the live version; nothing before commit', () => {
    const floors = new VersionFloors();
    const a = floors.stage();
    expect([a.take('k', { resourceVersion: '10', deleted: false }), a.take('k', { resourceVersion: '9', deleted: false })]).toEqual([true, false]);
    expect(floors.get('k')).toBeUndefined();
    a.apply();
    const b = floors.stage();
    expect(b.take('k', { resourceVersion: '10', deleted: false })).toBe(false);
    expect(b.take('k', { resourceVersion: '10', deleted: true })).toBe(true);
    expect(b.take('k', { resourceVersion: '10', deleted: false })).toBe(false);
    expect(b.take('k', { resourceVersion: '100', deleted: false })).toBe(true); // numeric, not text, order
  });
});
