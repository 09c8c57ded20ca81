import { describe, expect, it, vi } from 'vitest';
import { deepFreeze, makeNode, makePod, makeService } from '@slicemesh/testing';
import type { WatchedObject } from './kube-event.ts';
import { changeEvent, decodeKubeMessage, kubeEventJson, kubeSubjectOf, objectJson } from './kube-event.ts';
import type { RawKubeMessage } from './kube-event.ts';
import { kubeObjectSubject, partitionOf } from './subjects.ts';

const atVersion = <T extends WatchedObject>(obj: T, rv: number): T => ({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(rv) } });
const envelopeOf = (obj: WatchedObject, o: { type?: 'Upserted.v1' | 'Deleted.v1'; cluster?: string } = {}): Record<string, unknown> => ({
  ...changeEvent(o.type ?? 'Upserted.v1', o.cluster ?? 'c1', obj, '2026-01-01T00:00:00Z'),
});
const subjectOf = (obj: WatchedObject, o: { partitions?: number; cluster?: string } = {}): string => kubeSubjectOf(o.cluster ?? 'c1', obj, { partitions: o.partitions ?? 1 });
function rawMessage(_seq: number, subject: string, text: string): RawKubeMessage {
  try {
    return { subject, data: JSON.parse(text) as unknown };
  } catch (err) {
    return { subject, data: undefined, parseError: (err as Error).message };
  }
}

const ctx = { cluster: 'c1', partitions: 4, prefix: '' };
const svc = atVersion(makeService('web', { namespace: 'shop' }), 7);
const pod = atVersion(makePod('web-1', { namespace: 'shop' }), 8);
const node = atVersion(makeNode('n1', { zone: 'a' }), 9);
const exp: WatchedObject = deepFreeze({
  apiVersion: 'multicluster.x-k8s.io/v1alpha1',
  kind: 'ServiceExport',
  metadata: { name: 'web', namespace: 'shop', uid: 'uid-se-web', resourceVersion: '10', creationTimestamp: '2026-01-01T00:00:00Z' },
});
const at = (o: Parameters<typeof subjectOf>[0]) => subjectOf(o, { partitions: 4 });

const msg = (subject: string, data: unknown): RawKubeMessage => deepFreeze({ subject, data });

interface Case {
  readonly name: string;
  readonly msg: RawKubeMessage;
  /** Expected rejection field and a fragment of the reason; undefined = accepted. */
  readonly field?: string | null;
  readonly reason?: RegExp;
}

const cases: readonly Case[] = [
  { name: 'accepts a Service upsert on its own subject', msg: msg(at(svc), envelopeOf(svc)) },
  { name: 'accepts a Pod delete', msg: msg(at(pod), envelopeOf(pod, { type: 'Deleted.v1' })) },
  { name: 'accepts a Node on the node subject', msg: msg(at(node), envelopeOf(node)) },
  { name: 'accepts a ServiceExport on its serviceexport subject', msg: msg(at(exp), envelopeOf(exp)) },
  { name: 'rejects a ServiceExport on a Service subject', msg: msg(at(svc), envelopeOf(exp)), field: 'kind', reason: /does not match the subject's kind Service/ },
  {
    name: 'rejects a ServiceExport of another apiVersion with the validator field',
    msg: msg(at(exp), envelopeOf({ ...exp, apiVersion: 'multicluster.x-k8s.io/v2' } as WatchedObject)),
    field: 'object.apiVersion',
  },
  { name: 'rejects a body that is not JSON', msg: rawMessage(1, at(svc), '{"type":'), field: null, reason: /^body is not JSON/ },
  { name: 'rejects a subject that is not a kube subject', msg: msg('kube.c1.0.widget.shop.web', envelopeOf(svc)), field: 'subject', reason: /unknown kind token/ },
  { name: 'rejects a subject with a raw dot in a name (not one token)', msg: msg('kube.c1.0.service.shop.we.b', envelopeOf(svc)), field: 'subject', reason: /6 tokens/ },
  { name: 'rejects another cluster', msg: msg(subjectOf(svc, { cluster: 'c2', partitions: 4 }), envelopeOf(svc, { cluster: 'c2' })), field: 'subject', reason: /not this reader's/ },
  { name: 'rejects an unknown event type', msg: msg(at(svc), { ...envelopeOf(svc), type: 'Patched.v1' }), field: 'type', reason: /Upserted\.v1 or Deleted\.v1/ },
  { name: 'rejects an envelope cluster that differs from the subject', msg: msg(at(svc), { ...envelopeOf(svc), cluster: 'c9' }), field: 'cluster' },
  { name: 'rejects an unsupported kind', msg: msg(at(svc), { ...envelopeOf(svc), kind: 'EndpointSlice' }), field: 'kind' },
  { name: 'rejects a kind that does not match the subject', msg: msg(at(svc), { ...envelopeOf(pod) }), field: 'kind', reason: /does not match the subject's kind Service/ },
  {
    name: 'rejects an invalid object with the validator field',
    msg: msg(at(svc), envelopeOf({ ...svc, spec: { ...svc.spec, ports: [{ name: 'http', port: 70000, protocol: 'TCP' }] } })),
    field: 'object.spec.ports[0].port',
  },
  {
    name: 'rejects a hostile name that the validator refuses',
    msg: msg(
      kubeObjectSubject({ cluster: 'c1', partition: partitionOf('shop', 4), kind: 'Service', namespace: 'shop', name: 'a.b*c >' }, {}),
      envelopeOf({ ...svc, metadata: { ...svc.metadata, name: 'a.b*c >' } }),
    ),
    field: 'object.metadata.name',
  },
  {
    name: 'rejects an object whose name differs from the subject',
    msg: msg(at(svc), envelopeOf({ ...svc, metadata: { ...svc.metadata, name: 'other' } })),
    field: 'object.metadata.name',
    reason: /does not match the subject's name/,
  },
  {
    name: 'rejects an object whose namespace differs from the subject',
    msg: msg(at(svc), envelopeOf({ ...svc, metadata: { ...svc.metadata, namespace: 'other' } })),
    field: 'object.metadata.namespace',
  },
  {
    name: 'rejects a namespace published under the wrong partition',
    msg: msg(kubeObjectSubject({ cluster: 'c1', partition: (partitionOf('shop', 4) + 1) % 4, kind: 'Service', namespace: 'shop', name: 'web' }, {}), envelopeOf(svc)),
    field: 'subject',
    reason: /PARTITIONS/,
  },
  { name: 'rejects an object without resourceVersion', msg: msg(at(svc), envelopeOf(makeService('web', { namespace: 'shop' }))), field: 'object.metadata.resourceVersion' },
  { name: 'rejects a body that is an array', msg: msg(at(svc), [envelopeOf(svc)]), field: null, reason: /JSON object/ },
];

describe('kubeEventJson', () => {
  const quoted = atVersion(makePod('quote-"\\-\u2028-é', { namespace: 'shop', labels: { 'a/b': 'x"y' } }), 11);
  const cases: { name: string; type: 'Upserted.v1' | 'Deleted.v1'; cluster: string; object: WatchedObject }[] = [
    { name: 'a Service upsert', type: 'Upserted.v1', cluster: 'c1', object: svc },
    { name: 'a Node delete', type: 'Deleted.v1', cluster: 'c1', object: node },
    { name: 'names that need escaping (quotes, backslash, U+2028, non-ASCII)', type: 'Upserted.v1', cluster: 'c "1"', object: quoted },
  ];
  for (const tc of cases) {
    it(`writes what JSON.stringify writes: ${tc.name}`, () => {
      const event = changeEvent(tc.type, tc.cluster, tc.object, '2026-01-01T00:00:00.123Z');
      expect(kubeEventJson(event)).toBe(JSON.stringify(event));
    });
  }
  it("stringifies an object once, however often its text is asked for", () => {
    const fresh = atVersion(pod, 12);
    const spy = vi.spyOn(JSON, 'stringify');
    try {
      const first = objectJson(fresh);
      kubeEventJson(changeEvent('Upserted.v1', 'c1', fresh, '2026-01-01T00:00:00Z'));
      expect(objectJson(fresh)).toBe(first);
      expect(spy.mock.calls.filter(([v]) => v === fresh)).toHaveLength(1);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('decodeKubeMessage', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const d = decodeKubeMessage(tc.msg, ctx);
      if (tc.field === undefined) {
        expect(d.ok).toBe(true);
        return;
      }
      expect(d.ok).toBe(false);
      if (d.ok) return;
      expect(d.rejection.field).toBe(tc.field ?? undefined);
      if (tc.reason) expect(d.rejection.reason).toMatch(tc.reason);
    });
  }

  it('returns the normalised object with namespace, name, uid and resourceVersion', () => {
    const d = decodeKubeMessage(msg(at(pod), envelopeOf(pod, { type: 'Deleted.v1' })), ctx);
    expect(d.ok && d.change).toMatchObject({ type: 'Deleted.v1', kind: 'Pod', cluster: 'c1', namespace: 'shop', name: 'web-1', uid: 'uid-pod-web-1', resourceVersion: '8' });
  });

  it('decodes a ServiceExport with its namespace and name', () => {
    const d = decodeKubeMessage(msg(at(exp), envelopeOf(exp)), ctx);
    expect(d.ok && d.change).toMatchObject({ kind: 'ServiceExport', namespace: 'shop', name: 'web', uid: 'uid-se-web', resourceVersion: '10' });
  });

  it('gives nodes the empty namespace', () => {
    const d = decodeKubeMessage(msg(at(node), envelopeOf(node)), ctx);
    expect(d.ok && d.change.namespace).toBe('');
  });
});
