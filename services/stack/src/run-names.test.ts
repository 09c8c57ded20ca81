import { describe, expect, it } from 'vitest';
import { assertSchemaName } from '@slicemesh/db';
import { kubeNodeSubject, streamSubjects } from '@slicemesh/nats';
import { PERSISTENT_RUN, freshRunNames, newRunId, streamsOf } from './run-names.ts';

describe('run names', () => {
  it('a fresh run names every stream, bucket, prefix and schema after its id, all accepted by the adapters', () => {
    const r = freshRunNames('abc123');
    expect(r).toEqual({
      id: 'abc123',
      names: { kube: 'KUBE_abc123', slices: 'SLICES_abc123', dlq: 'DLQ_abc123', events: 'EVENTS_abc123', prefix: 'rabc123.', svc: 'svc_abc123', views: 'views_abc123', hinted: 'hinted_abc123' },
      schema: 'slicemesh_abc123',
      persistent: false,
    });
    expect(() => assertSchemaName(r.schema)).not.toThrow();
    expect(streamSubjects(r.names).kube).toBe('rabc123.kube.>');
    expect(kubeNodeSubject({ cluster: 'local', name: 'n1' }, r.names)).toBe('rabc123.kube.local.node.n1');
  });

  const bad = [
    { name: 'empty', id: '' },
    { name: 'upper case (schema names are lowercase)', id: 'ABC' },
    { name: 'a dot (would split the subject prefix)', id: 'a.b' },
    { name: 'longer than 40 characters', id: 'a'.repeat(41) },
  ];
  for (const tc of bad) it(`rejects a run id that is ${tc.name}`, () => expect(() => freshRunNames(tc.id)).toThrow(/run id/));

  it('run ids are lowercase base-36 seconds plus the random bytes in hex, so they sort by start time', () => {
    expect(newRunId(1_700_000_000_000, new Uint8Array([0, 255, 16]))).toBe(`${(1_700_000_000).toString(36)}00ff10`);
    expect(newRunId(1_000, new Uint8Array([1, 2, 3]))).toBe('1010203');
    expect(() => freshRunNames(newRunId(Date.now()))).not.toThrow();
  });

  it('persistent state is the production names and the default schema, flagged so it is never deleted', () => {
    expect(PERSISTENT_RUN).toEqual({ id: '', names: { kube: 'KUBE', slices: 'SLICES', dlq: 'DLQ', events: 'EVENTS', prefix: '', svc: 'svc', views: 'views', hinted: 'hinted' }, schema: 'slicemesh', persistent: true });
  });

  it('the streams a run owns include the KV buckets\' backing streams', () => {
    expect(streamsOf(freshRunNames('x1').names)).toEqual(['KUBE_x1', 'SLICES_x1', 'DLQ_x1', 'EVENTS_x1', 'KV_svc_x1', 'KV_views_x1', 'KV_hinted_x1']);
  });
});
