import { describe, expect, it } from 'vitest';
import type { WatchedObject } from '@slicemesh/kube';
import { InvalidObjectError } from '@slicemesh/model';
import { decodeToken, parseKubeSubject, partitionOf } from '@slicemesh/nats';
import { deepFreeze, makeEndpoints, makeNode, makePod, makeService } from '@slicemesh/testing';
import { eventFor, subjectOf } from './kube-message.ts';

const rv = <T extends WatchedObject>(o: T): T => deepFreeze({ ...o, metadata: { ...o.metadata, resourceVersion: '9' } });

describe('subjectOf', () => {
  const cases: { name: string; obj: WatchedObject; partitions: number; prefix?: string; want: string }[] = [
    { name: 'a Pod goes to kube.<cluster>.<partition of its namespace>.pod.<ns>.<name>', obj: rv(makePod('web-1', { namespace: 'shop' })), partitions: 8, want: `kube.c1.${partitionOf('shop', 8)}.pod.shop.web-1` },
    { name: 'dots in names are encoded so each name stays one token', obj: rv(makePod('web.v1.2')), partitions: 1, want: 'kube.c1.0.pod.default.web=2Ev1=2E2' },
    { name: 'Services and Endpoints use their kind token', obj: rv(makeService('api')), partitions: 1, want: 'kube.c1.0.service.default.api' },
    { name: 'Endpoints', obj: rv(makeEndpoints('api')), partitions: 1, want: 'kube.c1.0.endpoints.default.api' },
    { name: 'Nodes have no partition: kube.<cluster>.node.<name>', obj: rv(makeNode('node.a')), partitions: 8, want: 'kube.c1.node.node=2Ea' },
    { name: 'the stream prefix comes first', obj: rv(makeNode('n1')), partitions: 1, prefix: 't1.', want: 't1.kube.c1.node.n1' },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const subject = subjectOf('c1', tc.obj, { partitions: tc.partitions, ...(tc.prefix ? { prefix: tc.prefix } : {}) });
      expect(subject).toBe(tc.want);
      const parsed = parseKubeSubject(subject, tc.prefix ? { prefix: tc.prefix } : {});
      expect(parsed.name).toBe(tc.obj.metadata.name);
    });
  }

  it('a name with no token form (a lone surrogate) is an InvalidObjectError naming metadata.name', () => {
    const obj = rv(makePod('bad\ud800'));
    expect(() => subjectOf('c1', obj, { partitions: 1 })).toThrow(expect.objectContaining({ field: 'metadata.name' }));
    expect(() => subjectOf('c1', obj, { partitions: 1 })).toThrow(InvalidObjectError);
  });

  it('a namespace over 253 bytes is an InvalidObjectError naming metadata.namespace', () => {
    const obj = rv(makePod('p', { namespace: 'é'.repeat(127) }));
    expect(() => subjectOf('c1', obj, { partitions: 1 })).toThrow(expect.objectContaining({ field: 'metadata.namespace' }));
  });

  it('an encoded token always decodes back to the name', () => {
    const name = 'a.b*c>d e-é_ü';
    const subject = subjectOf('c1', rv(makeNode(name)), { partitions: 1 });
    expect(subject.split('.')).toHaveLength(4);
    expect(decodeToken(subject.split('.')[3] ?? '')).toBe(name);
  });
});

describe('eventFor', () => {
  it('builds subject, msgID and the envelope with observedAt in RFC 3339', () => {
    const pod = rv(makePod('web-1', { uid: 'u1' }));
    expect(eventFor('Deleted.v1', pod, 'c1', Date.UTC(2026, 0, 2, 3, 4, 5), { partitions: 1 })).toEqual({
      subject: 'kube.c1.0.pod.default.web-1',
      msgID: 'c1/u1/9/deleted',
      event: { type: 'Deleted.v1', cluster: 'c1', kind: 'Pod', object: pod, observedAt: '2026-01-02T03:04:05.000Z' },
    });
  });
});
