import { describe, expect, it } from 'vitest';
import type { ConsumedMessage, DeadLetter } from '@slicemesh/nats';
import { kubeNodeSubject, kubeObjectSubject, partitionOf, slicesSubject } from '@slicemesh/nats';
import { deepFreeze, makeNode, makeService, makeSlice } from '@slicemesh/testing';
import type { IngestOutcome } from './ingest.ts';
import { ingestHandlers } from './ingest.ts';
import { HintsProjection } from './projection.ts';
import { FakeStore, ep } from './test-fixtures.ts';

const opts = { cluster: 'c1', prefix: 't1.' };
const sliceSubject = slicesSubject({ cluster: 'c1', partition: partitionOf('default', 4), namespace: 'default', service: 'web' }, opts);
const nodeSubject = kubeNodeSubject({ cluster: 'c1', name: 'n-a' }, opts);
const svcSubject = kubeObjectSubject({ cluster: 'c1', partition: 0, kind: 'Service', namespace: 'default', name: 'web' }, opts);
const slice = makeSlice('web-1', [ep('10.0.0.1', 'zone-a', 'n-a')]);
const sliceBody = { type: 'SliceChanged.v1', cluster: 'c1', namespace: 'default', service: 'web', upserts: [slice], deletes: [] };
// KUBE objects always carry a resourceVersion (the KUBE contract requires it).
const versioned = <T extends { metadata: object }>(o: T, rv: string): T => ({ ...o, metadata: { ...o.metadata, resourceVersion: rv } });
const nodeBody = { type: 'Upserted.v1', cluster: 'c1', kind: 'Node', object: versioned(makeNode('n-a', { zone: 'zone-a' }), '11'), observedAt: '' };
const svcBody = { type: 'Upserted.v1', cluster: 'c1', kind: 'Service', object: versioned(makeService('web'), '12'), observedAt: '' };

function message(subject: string, data: unknown, seq: number, raw?: string): ConsumedMessage {
  const text = raw ?? JSON.stringify(data);
  let parsed: unknown;
  let parseError: string | undefined;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    parseError = (err as Error).message;
  }
  // The parsed body is frozen; the raw bytes cannot be (typed arrays with elements).
  return {
    subject, seq, data: deepFreeze(parsed), raw: new TextEncoder().encode(text), redelivered: false, deliveryCount: 1, headers: {},
    ...(parseError !== undefined ? { parseError } : {}),
  };
}

function harness() {
  const store = new FakeStore();
  const projection = new HintsProjection();
  const letters: DeadLetter[] = [];
  const events: string[] = [];
  const reports: IngestOutcome[] = [];
  const handlers = ingestHandlers({
    ...opts,
    projection,
    store,
    offsets: { slices: 'o-slices', nodes: 'o-nodes', services: 'o-services', endpointslices: 'o-eps' },
    deadLetter: (l) => {
      letters.push(l);
      return Promise.resolve();
    },
    onSlices: (m) => events.push(`slices ${m.namespace}/${m.service}`),
    onNode: (e) => events.push(`node ${e.object.metadata.name}`),
    onService: (e) => events.push(`service ${e.object.metadata.name}`),
    onForeignSlice: (e) => events.push(`foreign ${e.type === 'Deleted.v1' ? 'deleted ' : ''}${e.object.metadata.name}`),
    onVacated: (key) => events.push(`vacated ${key}`),
    report: (o) => reports.push(o),
  });
  return { store, projection, letters, events, reports, handlers };
}

describe('ingestHandlers', () => {
  const applied: { name: string; role: 'slices' | 'nodes' | 'services'; msg: ConsumedMessage; event: string; offset: string }[] = [
    { name: 'a slice change is stored with its offset and marks the service dirty', role: 'slices', msg: message(sliceSubject, sliceBody, 5), event: 'slices default/web', offset: 'o-slices' },
    { name: 'a node event is stored with its offset and handed on', role: 'nodes', msg: message(nodeSubject, nodeBody, 6), event: 'node n-a', offset: 'o-nodes' },
    { name: 'a service event is stored with its offset and marks the service dirty', role: 'services', msg: message(svcSubject, svcBody, 7), event: 'service web', offset: 'o-services' },
  ];
  for (const tc of applied) {
    it(tc.name, async () => {
      const h = harness();
      expect(await h.handlers[tc.role]([tc.msg])).toBe('ack');
      expect(h.store.offsets.get(tc.offset)).toBe(tc.msg.seq);
      expect(h.events).toEqual([tc.event]);
      expect(h.reports).toEqual([{ result: 'applied', role: tc.role, seq: tc.msg.seq }]);
    });
  }

  it('a redelivery (seq ≤ offset) is acked without a write, and still handed on (the first ack may have been lost)', async () => {
    const h = harness();
    await h.handlers.slices([message(sliceSubject, sliceBody, 5)]);
    h.store.slices.clear();
    expect(await h.handlers.slices([message(sliceSubject, sliceBody, 5)])).toBe('ack');
    expect(h.store.slices.size).toBe(0);
    expect(h.events).toEqual(['slices default/web', 'slices default/web']);
    expect(h.reports.map((r) => r.result)).toEqual(['applied', 'duplicate']);
  });

  const malformed: { name: string; role: 'slices' | 'nodes' | 'services'; msg: ConsumedMessage; field: string }[] = [
    { name: 'a body that is not JSON', role: 'slices', msg: message(sliceSubject, undefined, 3, '{nope'), field: '<body>' },
    { name: 'an invalid slice', role: 'slices', msg: message(sliceSubject, { ...sliceBody, upserts: [{ ...slice, endpoints: 'x' }] }, 3), field: 'upserts[0].endpoints' },
    { name: 'a node envelope of another kind', role: 'nodes', msg: message(nodeSubject, { ...nodeBody, kind: 'Pod' }, 3), field: 'kind' },
    { name: 'a service on the wrong subject', role: 'services', msg: message(nodeSubject, svcBody, 3), field: 'subject' },
  ];
  for (const tc of malformed) {
    it(`dead-letters ${tc.name} with its reason and field, acknowledges it and writes nothing`, async () => {
      const h = harness();
      expect(await h.handlers[tc.role]([tc.msg])).toBe('ack');
      expect(h.letters).toHaveLength(1);
      expect(h.letters[0]?.field).toBe(tc.field);
      expect(h.letters[0]?.subject).toBe(tc.msg.subject);
      expect(h.letters[0]?.reason.length).toBeGreaterThan(0);
      expect(h.letters[0]?.object).toBe(tc.msg.raw);
      expect([h.store.offsets.size, h.events.length]).toEqual([0, 0]);
      expect(h.reports[0]?.result).toBe('dead-lettered');
    });
  }

  it('a store failure throws (redelivery with backoff), a failed dead letter too', async () => {
    const h = harness();
    h.store.failOn = () => true;
    await expect(h.handlers.slices([message(sliceSubject, sliceBody, 5)])).rejects.toThrow(/apply failed/);
    expect(h.events).toEqual([]);
    const failing = ingestHandlers({
      ...opts, projection: h.projection, store: h.store, offsets: { slices: 's', nodes: 'n', services: 'v', endpointslices: 'e' },
      deadLetter: () => Promise.reject(new Error('DLQ down')), onSlices: () => {}, onNode: () => {}, onService: () => {}, onForeignSlice: () => {},
    });
    await expect(failing.slices([message(sliceSubject, undefined, 1, '{')])).rejects.toThrow(/DLQ down/);
  });

  it('memory changes only after the commit: a failed batch leaves the state and its offset as they were', async () => {
    const h = harness();
    h.store.failOn = () => true;
    await expect(h.handlers.slices([message(sliceSubject, sliceBody, 5)])).rejects.toThrow(/apply failed/);
    expect([h.projection.offset('o-slices'), h.projection.slices('default/web')]).toEqual([0, []]);
    h.store.failOn = undefined;
    await h.handlers.slices([message(sliceSubject, sliceBody, 5)]);
    expect([h.projection.offset('o-slices'), h.projection.slices('default/web').map((s) => s.metadata.name)]).toEqual([5, ['web-1']]);
  });
});

describe('ingestHandlers on a batch', () => {
  const web2 = makeSlice('web-2', [ep('10.0.0.2', 'zone-b', 'n-b')]);
  const body = (upserts: unknown[], deletes: string[] = []) => ({ ...sliceBody, upserts, deletes });
  const node = (zone: string, rv: string) => ({ ...nodeBody, object: { ...makeNode('n-a', { zone }), metadata: { ...makeNode('n-a').metadata, resourceVersion: rv, labels: { 'topology.kubernetes.io/zone': zone } } } });

  const cases: {
    name: string;
    role: 'slices' | 'nodes';
    msgs: ConsumedMessage[];
    /** What the store holds afterwards, and the offset it moved to. */
    want: { readonly rows: string[]; readonly offset: number };
  }[] = [
    {
      name: 'later messages see earlier ones: a slice deleted then upserted again ends up stored, one commit at the last offset',
      role: 'slices',
      msgs: [message(sliceSubject, body([slice, web2]), 3), message(sliceSubject, body([], ['web-1']), 4), message(sliceSubject, body([slice]), 6)],
      want: { rows: ['default/web-1', 'default/web-2'], offset: 6 },
    },
    {
      name: 'a malformed message in the middle is dead-lettered; the others are stored up to the last applied offset',
      role: 'slices',
      msgs: [message(sliceSubject, body([web2]), 3), message(sliceSubject, undefined, 4, '{'), message(sliceSubject, body([slice]), 5)],
      want: { rows: ['default/web-1', 'default/web-2'], offset: 5 },
    },
    {
      name: 'a malformed message at the end is covered by the commit, so a restart does not dead-letter it twice',
      role: 'slices',
      msgs: [message(sliceSubject, body([web2]), 3), message(sliceSubject, undefined, 4, '{')],
      want: { rows: ['default/web-2'], offset: 4 },
    },
    {
      name: 'an older node version after a newer one in the same batch is skipped',
      role: 'nodes',
      msgs: [message(nodeSubject, node('zone-b', '8'), 3), message(nodeSubject, node('zone-c', '7'), 4)],
      want: { rows: ['n-a:zone-b'], offset: 4 },
    },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const h = harness();
      expect(await h.handlers[tc.role](tc.msgs)).toBe('ack');
      const rows = tc.role === 'slices'
        ? [...h.store.slices.keys()].sort()
        : [...h.store.nodes.values()].map((n) => `${n.metadata.name}:${n.metadata.labels?.['topology.kubernetes.io/zone']}`);
      expect({ rows, offset: h.store.offsets.get(`o-${tc.role}`) }).toEqual(tc.want);
      expect(h.projection.offset(`o-${tc.role}`)).toBe(tc.want.offset);
    });
  }
});

describe("ingestHandlers: other controllers' slices (KUBE endpointslice)", () => {
  const sub = (name: string) => kubeObjectSubject({ cluster: 'c1', partition: 0, kind: 'EndpointSlice', namespace: 'default', name }, opts);
  const body = (s: ReturnType<typeof makeSlice>, rv: string, type = 'Upserted.v1') => ({ type, cluster: 'c1', kind: 'EndpointSlice', object: versioned(s, rv), observedAt: '' });
  const imported = (service = 'db', labels: Record<string, string> = {}) => makeSlice('imported-1', [ep('10.0.1.1', 'zone-a', 'n-a')], { service, managedBy: 'mcs-importer', labels });

  it('holds them per service apart from the slicer\'s, stores them with the offset, and names their service', async () => {
    const h = harness();
    await h.handlers.endpointslices([message(sub('imported-1'), body(imported(), '5'), 1)]);
    expect(h.projection.foreignSlices('default/db').map((s) => s.metadata.name)).toEqual(['imported-1']);
    expect(h.projection.slices('default/db')).toEqual([]);
    expect(h.projection.knownServices()).toEqual(['default/db']);
    expect([...h.store.foreign.keys()]).toEqual(['default/imported-1']);
    expect(h.store.offsets.get('o-eps')).toBe(1);
    expect(h.events).toEqual(['foreign imported-1']);
  });

  it('a service-name relabel moves the slice and reports the service it left', async () => {
    const h = harness();
    await h.handlers.endpointslices([message(sub('imported-1'), body(imported(), '5'), 1)]);
    await h.handlers.endpointslices([message(sub('imported-1'), body(imported('db2'), '6'), 2)]);
    expect(h.projection.foreignSlices('default/db')).toEqual([]);
    expect(h.projection.foreignSlices('default/db2').map((s) => s.metadata.name)).toEqual(['imported-1']);
    expect(h.events).toEqual(['foreign imported-1', 'vacated default/db', 'foreign imported-1']);
  });

  const absent: { name: string; msg: () => ConsumedMessage }[] = [
    { name: 'a delete', msg: () => message(sub('imported-1'), body(imported(), '6', 'Deleted.v1'), 2) },
    { name: 'a version labelled for another proxy', msg: () => message(sub('imported-1'), body(imported('db', { 'service.kubernetes.io/service-proxy-name': 'other' }), '6'), 2) },
    { name: 'a version labelled headless', msg: () => message(sub('imported-1'), body(imported('db', { 'service.kubernetes.io/headless': '' }), '6'), 2) },
  ];
  for (const tc of absent) {
    it(`${tc.name} leaves nothing held or stored for the slice`, async () => {
      const h = harness();
      await h.handlers.endpointslices([message(sub('imported-1'), body(imported(), '5'), 1)]);
      await h.handlers.endpointslices([tc.msg()]);
      expect(h.projection.foreignSlices('default/db')).toEqual([]);
      expect(h.store.foreign.size).toBe(0);
      expect(h.events.at(-1)).toMatch(/^foreign /);
    });
  }

  it('an older version than the one held is skipped; a malformed one is dead-lettered', async () => {
    const h = harness();
    await h.handlers.endpointslices([message(sub('imported-1'), body(imported(), '9'), 1), message(sub('imported-1'), body(imported('db2'), '8'), 2)]);
    expect(h.projection.foreignSlices('default/db')).toHaveLength(1);
    await h.handlers.endpointslices([message(sub('other'), body(imported(), '10'), 3)]);
    expect(h.letters[0]?.field).toBe('object.metadata.name');
  });
});

describe('ingestHandlers: SLICES of other partitions', () => {
  // This consumer's partition owns namespace `default` only.
  function partitionHarness() {
    const h = harness();
    const handlers = ingestHandlers({
      ...opts, projection: h.projection, store: h.store, offsets: { slices: 'o-slices', nodes: 'n', services: 'v', endpointslices: 'e' },
      deadLetter: (l) => {
        h.letters.push(l);
        return Promise.resolve();
      },
      onSlices: (m) => h.events.push(`slices ${m.namespace}/${m.service}`), onNode: () => {}, onService: () => {}, onForeignSlice: () => {},
      report: (o) => h.reports.push(o),
      owns: (namespace) => namespace === 'default',
      partitions: 4, // 'default' is partition 2 of 4, 'other' partition 1
    });
    return { ...h, handlers };
  }
  /** A message whose body must never be read: reading it fails the test. */
  function unread(subject: string, seq: number): ConsumedMessage {
    const boom = (): never => {
      throw new Error(`the body of ${subject} was read`);
    };
    return { subject, seq, raw: new TextEncoder().encode('{not json'), redelivered: false, deliveryCount: 1, headers: {}, get data(): unknown { return boom(); }, get parseError(): string | undefined { return boom(); } };
  }
  const otherSubject = slicesSubject({ cluster: 'c1', partition: partitionOf('other', 4), namespace: 'other', service: 'db' }, opts);
  // Another partition's namespace under this partition's token: a slicer with another PARTITIONS.
  const misfiled = slicesSubject({ cluster: 'c1', partition: partitionOf('default', 4), namespace: 'other', service: 'db' }, opts);
  const otherBody = { ...sliceBody, namespace: 'other', service: 'db', upserts: [makeSlice('db-1', [ep('10.0.0.9', 'zone-a', 'n-a')], { namespace: 'other', service: 'db' })] };
  // Subjects written before SLICES carried the partition token, which a broad consumer still reads.
  const olderOwn = slicesSubject({ cluster: 'c1', partition: null, namespace: 'default', service: 'web' }, opts);
  const olderOther = slicesSubject({ cluster: 'c1', partition: null, namespace: 'other', service: 'db' }, opts);

  const cases: { name: string; msgs: () => ConsumedMessage[]; then?: () => ConsumedMessage[]; results: string[]; offset: number | undefined; letters: number }[] = [
    { name: "another partition's change alone is skipped by its subject, unread, and writes nothing", msgs: () => [unread(otherSubject, 4)], results: ['foreign-partition'], offset: undefined, letters: 0 },
    {
      name: "a batch's commit covers the other partitions' changes after its own: the offset moves past them",
      msgs: () => [message(sliceSubject, sliceBody, 5), unread(otherSubject, 6), unread(otherSubject, 7)], results: ['applied', 'foreign-partition', 'foreign-partition'], offset: 7, letters: 0,
    },
    {
      name: 'a later own change carries the offset past the skipped ones before it',
      msgs: () => [unread(otherSubject, 4)], then: () => [unread(otherSubject, 5), message(sliceSubject, sliceBody, 6)], results: ['foreign-partition', 'foreign-partition', 'applied'], offset: 6, letters: 0,
    },
    { name: 'its redelivery is a duplicate, unread too', msgs: () => [message(sliceSubject, sliceBody, 5)], then: () => [unread(otherSubject, 4)], results: ['applied', 'duplicate'], offset: 5, letters: 0 },
    { name: 'an older-form subject of this partition is applied', msgs: () => [message(olderOwn, sliceBody, 8)], results: ['applied'], offset: 8, letters: 0 },
    { name: "its token on another partition's namespace is dead-lettered, not skipped", msgs: () => [message(misfiled, otherBody, 8)], results: ['dead-lettered'], offset: undefined, letters: 1 },
    { name: "an older-form subject of another partition is skipped, unread", msgs: () => [message(sliceSubject, sliceBody, 8), unread(olderOther, 9)], results: ['applied', 'foreign-partition'], offset: 9, letters: 0 },
    { name: "this partition's malformed change is still dead-lettered", msgs: () => [message(sliceSubject, undefined, 6, '{nope')], results: ['dead-lettered'], offset: undefined, letters: 1 },
    { name: 'a subject that does not parse is judged by its body (dead-lettered: it names no slice change)', msgs: () => [message('t1.slices.c1', sliceBody, 7)], results: ['dead-lettered'], offset: undefined, letters: 1 },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const h = partitionHarness();
      expect(await h.handlers.slices(tc.msgs())).toBe('ack');
      if (tc.then !== undefined) expect(await h.handlers.slices(tc.then())).toBe('ack');
      expect(h.reports.map((r) => r.result)).toEqual(tc.results);
      expect(h.store.offsets.get('o-slices')).toBe(tc.offset);
      expect(h.letters).toHaveLength(tc.letters);
    });
  }
});
