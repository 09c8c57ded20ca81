import { describe, expect, it } from 'vitest';
import { kubeNodeSubject, kubeObjectSubject, partitionOf, slicesSubject } from '@slicemesh/nats';
import { deepFreeze, makeNode, makeService, makeSlice } from '@slicemesh/testing';
import { MalformedMessageError, parseNodeEvent, parseServiceEvent, parseSliceChanged } from './messages.ts';
import { ep } from './test-fixtures.ts';

const opts = { cluster: 'c1', prefix: 't1.' };
const subject = slicesSubject({ cluster: 'c1', partition: 0, namespace: 'default', service: 'web' }, opts);
const slice = makeSlice('web-1', [ep('10.0.0.1', 'zone-a', 'n-a')]);

function sliceMsg(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'SliceChanged.v1', cluster: 'c1', namespace: 'default', service: 'web', upserts: [slice], deletes: ['web-old'], kubeSeq: { from: 3, to: 7 }, reconcileID: 'r1', ...over };
}

function caught(run: () => unknown): MalformedMessageError {
  try {
    run();
  } catch (err) {
    if (err instanceof MalformedMessageError) return err;
    throw err;
  }
  throw new Error('expected a MalformedMessageError');
}

describe('parseSliceChanged', () => {
  it('accepts a well-formed event and returns validated slices', () => {
    const out = parseSliceChanged(deepFreeze(sliceMsg()), subject, opts);
    expect(out.upserts.map((s) => s.metadata.name)).toEqual(['web-1']);
    expect(out.deletes).toEqual(['web-old']);
    expect(out.kubeSeq).toEqual({ from: 3, to: 7, nodesTo: 7 }); // no node bound given: the partition's
    expect(out.reconcileID).toBe('r1');
  });

  it.each([
    ["its namespace's partition token", slicesSubject({ cluster: 'c1', partition: partitionOf('default', 4), namespace: 'default', service: 'web' }, opts)],
    ['the older form, without the token', slicesSubject({ cluster: 'c1', partition: null, namespace: 'default', service: 'web' }, opts)],
  ])('accepts a subject with %s when PARTITIONS is known', (_name, s) => {
    expect(parseSliceChanged(deepFreeze(sliceMsg()), s, { ...opts, partitions: 4 }).upserts).toHaveLength(1);
  });

  it('treats absent upserts/deletes/kubeSeq as empty', () => {
    const out = parseSliceChanged(deepFreeze({ type: 'SliceChanged.v1', cluster: 'c1', namespace: 'default', service: 'web' }), subject, opts);
    expect([out.upserts, out.deletes, out.kubeSeq, out.reconcileID]).toEqual([[], [], null, null]);
  });

  const cases: { name: string; data: unknown; subject?: string; partitions?: number; field: string; reason: RegExp }[] = [
    { name: 'a body that is not an object', data: [1], field: '<body>', reason: /JSON object/ },
    { name: 'an unknown event type', data: sliceMsg({ type: 'SliceChanged.v2' }), field: 'type', reason: /unknown type/ },
    { name: 'another cluster', data: sliceMsg({ cluster: 'c2' }), field: 'cluster', reason: /serves "c1"/ },
    { name: 'a missing namespace', data: sliceMsg({ namespace: undefined }), field: 'namespace', reason: /required/ },
    { name: 'a subject naming another service', data: sliceMsg({ service: 'api', upserts: [] }), field: 'subject', reason: /does not name/ },
    { name: 'a subject outside the prefix', data: sliceMsg(), subject: 'slices.c1.default.web', field: 'subject', reason: /prefix/ },
    { name: 'upserts that are not an array', data: sliceMsg({ upserts: {} }), field: 'upserts', reason: /array/ },
    { name: 'an invalid slice', data: sliceMsg({ upserts: [{ ...slice, addressType: 'IPv5' }] }), field: 'upserts[0].addressType', reason: /IPv5|one of/ },
    { name: 'a slice of another namespace', data: sliceMsg({ upserts: [makeSlice('x', [], { namespace: 'other' })] }), field: 'upserts[0].metadata.namespace', reason: /not the message/ },
    {
      name: 'a slice of another service',
      data: sliceMsg({ upserts: [makeSlice('x', [], { service: 'api' })] }),
      field: 'upserts[0].metadata.labels["kubernetes.io/service-name"]',
      reason: /"web"/,
    },
    { name: 'an empty delete name', data: sliceMsg({ deletes: [''] }), field: 'deletes[0]', reason: /non-empty/ },
    { name: 'a malformed kubeSeq', data: sliceMsg({ kubeSeq: { from: 'x' } }), field: 'kubeSeq', reason: /integer/ },
    {
      name: "a partition token that is not the namespace's",
      data: sliceMsg(),
      subject: slicesSubject({ cluster: 'c1', partition: (partitionOf('default', 4) + 1) % 4, namespace: 'default', service: 'web' }, opts),
      partitions: 4,
      field: 'subject',
      reason: /agree on PARTITIONS/,
    },
  ];
  for (const tc of cases) {
    it(`rejects ${tc.name} naming field ${tc.field}`, () => {
      const err = caught(() => parseSliceChanged(deepFreeze(tc.data), tc.subject ?? subject, { ...opts, ...(tc.partitions !== undefined ? { partitions: tc.partitions } : {}) }));
      expect(err.field).toBe(tc.field);
      expect(err.reason).toMatch(tc.reason);
    });
  }
});

describe('parseNodeEvent / parseServiceEvent', () => {
  // KUBE objects always carry a resourceVersion (the KUBE contract requires it).
  const versioned = <T extends { metadata: object }>(o: T, rv: string): T => ({ ...o, metadata: { ...o.metadata, resourceVersion: rv } });
  const node = versioned(makeNode('n-a', { zone: 'zone-a' }), '3');
  const nodeSubject = kubeNodeSubject({ cluster: 'c1', name: 'n-a' }, opts);
  const svc = versioned(makeService('web'), '4');
  const svcSubject = kubeObjectSubject({ cluster: 'c1', partition: 0, kind: 'Service', namespace: 'default', name: 'web' }, opts);
  const envelope = (kind: string, object: unknown, over: Record<string, unknown> = {}) => ({ type: 'Upserted.v1', cluster: 'c1', kind, object, observedAt: '2026-01-01T00:00:00Z', ...over });

  it('accepts a node upsert and a service delete', () => {
    expect(parseNodeEvent(deepFreeze(envelope('Node', node)), nodeSubject, opts).object.metadata.name).toBe('n-a');
    const del = parseServiceEvent(deepFreeze(envelope('Service', svc, { type: 'Deleted.v1' })), svcSubject, opts);
    expect([del.type, del.object.metadata.name]).toEqual(['Deleted.v1', 'web']);
  });

  const cases: { name: string; run: () => unknown; field: string }[] = [
    { name: 'an unknown envelope type', run: () => parseNodeEvent(envelope('Node', node, { type: 'Patched.v1' }), nodeSubject, opts), field: 'type' },
    { name: 'a kind other than the consumer reads', run: () => parseNodeEvent(envelope('Pod', node), nodeSubject, opts), field: 'kind' },
    { name: 'an invalid node object', run: () => parseNodeEvent(envelope('Node', { ...node, metadata: {} }), nodeSubject, opts), field: 'object.metadata.name' },
    { name: 'a node subject naming another node', run: () => parseNodeEvent(envelope('Node', versioned(makeNode('n-b'), '5')), nodeSubject, opts), field: 'object.metadata.name' },
    { name: 'a service on a node subject', run: () => parseServiceEvent(envelope('Service', svc), nodeSubject, opts), field: 'subject' },
    { name: 'a service of another cluster', run: () => parseServiceEvent(envelope('Service', svc, { cluster: 'c9' }), svcSubject, opts), field: 'cluster' },
  ];
  for (const tc of cases) {
    it(`rejects ${tc.name} naming field ${tc.field}`, () => {
      expect(caught(tc.run).field).toBe(tc.field);
    });
  }
});
