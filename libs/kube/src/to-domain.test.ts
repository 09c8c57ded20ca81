import { describe, expect, it } from 'vitest';
import { ANNOTATION_LAST_APPLIED, InvalidObjectError } from '@slicemesh/model';
import { deepFreeze, makeEndpoints, makeNode, makePod, makeService } from '@slicemesh/testing';
import { asDeleted, changeEvent, kubeMsgID, labelOf, objectKeyOf, OBJECT_FIELD, OPTIONAL_KINDS, toDomain, withTypeMeta } from './to-domain.ts';
import type { WatchedKind, WatchedObject } from './to-domain.ts';
import { KIND_PATHS } from './informers.ts';

type Json = Record<string, unknown>;

/** A wire object as the API server sends it: uid and resourceVersion set. */
function wire<T extends WatchedObject>(obj: T, rv = '7'): Json {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: rv } } as unknown as Json;
}

function withMeta(obj: Json, meta: Json): Json {
  return { ...obj, metadata: { ...(obj['metadata'] as Json), ...meta } };
}

function withStatus(obj: Json, status: Json): Json {
  return { ...obj, status: { ...(obj['status'] as Json), ...status } };
}

const pod = wire(makePod('web-1'));
const svc = wire(makeService('web'));
const node = wire(makeNode('n1', { zone: 'z1' }));
const eps = wire(makeEndpoints('web'));

describe('toDomain rejects hostile and malformed input, naming object and field', () => {
  const cases: { name: string; kind: WatchedKind; raw: unknown; object: string | RegExp; field: string; reason: RegExp }[] = [
    { name: 'a Service name with "." (Service names are DNS-1035 labels)', kind: 'Service', raw: withMeta(svc, { name: 'my.svc' }), object: 'Service default/my.svc', field: 'metadata.name', reason: /DNS-1035/ },
    { name: 'a Pod name with "*"', kind: 'Pod', raw: withMeta(pod, { name: 'web-*' }), object: 'Pod default/web-*', field: 'metadata.name', reason: /DNS-1123 subdomain/ },
    { name: 'a Pod name with ">"', kind: 'Pod', raw: withMeta(pod, { name: 'a>b' }), object: 'Pod default/a>b', field: 'metadata.name', reason: /DNS-1123 subdomain/ },
    { name: 'a Node name with a space', kind: 'Node', raw: withMeta(node, { name: 'node 1' }), object: 'object (kind Node)', field: 'metadata.name', reason: /DNS-1123 subdomain/ },
    { name: 'a Pod name in unicode', kind: 'Pod', raw: withMeta(pod, { name: 'wéb' }), object: 'object (kind Pod)', field: 'metadata.name', reason: /\\u00e9/ },
    { name: 'a namespace with a dot (namespaces are DNS-1123 labels)', kind: 'Pod', raw: withMeta(pod, { namespace: 'a.b' }), object: 'Pod a.b/web-1', field: 'metadata.namespace', reason: /DNS-1123 label/ },
    { name: 'a 254-character Pod name', kind: 'Pod', raw: withMeta(pod, { name: 'a'.repeat(254) }), object: 'object (kind Pod)', field: 'metadata.name', reason: /at most 253/ },
    { name: 'an empty name', kind: 'Endpoints', raw: withMeta(eps, { name: '' }), object: 'object (kind Endpoints)', field: 'metadata.name', reason: /must not be empty/ },
    { name: 'an invalid pod IP', kind: 'Pod', raw: withStatus(pod, { podIP: '999.0.0.1', podIPs: [{ ip: '999.0.0.1' }] }), object: 'Pod default/web-1', field: 'status.podIP', reason: /valid IP/ },
    { name: 'an invalid cluster IP', kind: 'Service', raw: { ...svc, spec: { ...(svc['spec'] as Json), clusterIP: '10.96.0.300' } }, object: 'Service default/web', field: 'spec.clusterIP', reason: /valid IP/ },
    { name: 'an IPv6 zone in a pod IP', kind: 'Pod', raw: withStatus(pod, { podIP: 'fe80::1%eth0', podIPs: [{ ip: 'fe80::1%eth0' }] }), object: 'Pod default/web-1', field: 'status.podIP', reason: /valid IP/ },
    { name: 'annotations over 256 KiB', kind: 'Pod', raw: withMeta(pod, { annotations: { big: 'x'.repeat(300 * 1024) } }), object: 'Pod default/web-1', field: 'metadata.annotations', reason: /at most 262144/ },
    { name: 'a label value of the wrong type', kind: 'Node', raw: withMeta(node, { labels: { zone: 7 } }), object: 'Node n1', field: 'metadata.labels["zone"]', reason: /must be a string/ },
    { name: 'metadata missing', kind: 'Pod', raw: { kind: 'Pod', apiVersion: 'v1', spec: pod['spec'] }, object: 'object (kind Pod)', field: 'metadata', reason: /is required/ },
    { name: 'a name that is not a string', kind: 'Service', raw: withMeta(svc, { name: 42 }), object: 'object (kind Service)', field: 'metadata.name', reason: /must be a string/ },
    { name: 'a Node with a namespace', kind: 'Node', raw: withMeta(node, { namespace: 'default' }), object: 'Node n1', field: 'metadata.namespace', reason: /cluster-scoped/ },
    { name: 'another kind than the one watched', kind: 'Pod', raw: svc, object: 'Pod default/web', field: 'kind', reason: /must be Pod/ },
    { name: 'a foreign apiVersion', kind: 'Pod', raw: { ...pod, apiVersion: 'v2' }, object: 'Pod default/web-1', field: 'apiVersion', reason: /must be v1/ },
    { name: 'no uid (the msgID needs it)', kind: 'Pod', raw: withMeta(pod, { uid: undefined }), object: 'Pod default/web-1', field: 'metadata.uid', reason: /is required/ },
    { name: 'no resourceVersion (the msgID needs it)', kind: 'Node', raw: withMeta(node, { resourceVersion: '' }), object: 'Node n1', field: 'metadata.resourceVersion', reason: /is required/ },
    { name: 'a Pod without containers', kind: 'Pod', raw: { ...pod, spec: { containers: [] } }, object: 'Pod default/web-1', field: 'spec.containers', reason: /at least one/ },
    { name: 'a port out of range', kind: 'Service', raw: { ...svc, spec: { ...(svc['spec'] as Json), ports: [{ port: 70000 }] } }, object: 'Service default/web', field: 'spec.ports[0].port', reason: /between 1 and 65535/ },
    { name: 'null instead of an object', kind: 'Pod', raw: null, object: 'object', field: '<object>', reason: /JSON object \(got null\)/ },
    { name: 'an array instead of an object', kind: 'Node', raw: [node], object: 'object', field: '<object>', reason: /got array/ },
    { name: 'JSON text that does not parse', kind: 'Pod', raw: '{"kind":"Pod",', object: 'object', field: '<json>', reason: /invalid JSON/ },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const raw = deepFreeze(structuredClone(tc.raw));
      let err: unknown;
      try {
        toDomain(tc.kind, raw);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(InvalidObjectError);
      const e = err as InvalidObjectError;
      if (typeof tc.object === 'string') expect(e.object).toBe(tc.object);
      else expect(e.object).toMatch(tc.object);
      expect(e.field).toBe(tc.field);
      expect(e.reason).toMatch(tc.reason);
      // Error text stays on one printable ASCII line, whatever the input held.
      expect(e.message).toMatch(/^[\x20-\x7e]+$/);
    });
  }

  it('rejects a trimmed object larger than maxObjectBytes, field <object>', () => {
    const raw = deepFreeze(withMeta(pod, { annotations: { note: 'x'.repeat(2000) } }));
    expect(() => toDomain('Pod', raw, { maxObjectBytes: 1000 })).toThrow(
      expect.objectContaining({ object: 'Pod default/web-1', field: OBJECT_FIELD, reason: expect.stringMatching(/more than the 1000-byte limit/) }),
    );
  });
});

describe('toDomain accepts valid objects and trims them to the model', () => {
  const cases: { name: string; kind: WatchedKind; raw: Json; check: (o: WatchedObject) => void }[] = [
    {
      name: 'Pod names may hold "." (DNS-1123 subdomain); the subject encodes it later',
      kind: 'Pod',
      raw: withMeta(pod, { name: 'web.v1' }),
      check: (o) => expect(o.metadata.name).toBe('web.v1'),
    },
    {
      name: 'a 253-character Node name is the longest accepted',
      kind: 'Node',
      raw: withMeta(node, { name: `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}` }),
      check: (o) => expect(o.metadata.name).toHaveLength(253),
    },
    {
      name: 'managedFields, spec fields the model lacks and unknown top-level fields are dropped',
      kind: 'Pod',
      raw: { ...withMeta(pod, { managedFields: [{ manager: 'kubectl', fieldsV1: { f: 'x'.repeat(100_000) } }] }), spec: { ...(pod['spec'] as Json), schedulerName: 'default' }, extra: true },
      check: (o) => {
        expect(o.metadata).not.toHaveProperty('managedFields');
        expect(o).not.toHaveProperty('extra');
        expect((o as { spec: Json }).spec).not.toHaveProperty('schedulerName');
      },
    },
    {
      name: 'the last-applied-configuration annotation is dropped, others are kept',
      kind: 'Endpoints',
      raw: withMeta(eps, { annotations: { [ANNOTATION_LAST_APPLIED]: '{"huge":true}', keep: 'me' } }),
      check: (o) => expect(o.metadata.annotations).toEqual({ keep: 'me' }),
    },
    {
      name: 'annotations holding only last-applied-configuration disappear entirely',
      kind: 'Service',
      raw: withMeta(svc, { annotations: { [ANNOTATION_LAST_APPLIED]: '{}' } }),
      check: (o) => expect(o.metadata).not.toHaveProperty('annotations'),
    },
    {
      name: 'list items without kind/apiVersion get them from the watched kind',
      kind: 'Service',
      raw: (({ kind: _k, apiVersion: _a, ...rest }) => rest)(svc),
      check: (o) => expect([o.kind, o.apiVersion]).toEqual(['Service', 'v1']),
    },
    {
      name: 'Endpoints addresses are not required to be IPs (mirroring skips them, B.2.5)',
      kind: 'Endpoints',
      raw: { ...eps, subsets: [{ addresses: [{ ip: 'not-an-ip' }], ports: [{ port: 80 }] }] },
      check: (o) => expect((o as unknown as { subsets: { addresses: { ip: string }[] }[] }).subsets[0]?.addresses[0]?.ip).toBe('not-an-ip'),
    },
    {
      name: 'raw JSON text is parsed first',
      kind: 'Node',
      raw: node,
      check: (o) => expect(labelOf(o)).toBe('Node n1'),
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const raw = deepFreeze(structuredClone(tc.raw));
      const out = toDomain(tc.kind, tc.name.startsWith('raw JSON') ? JSON.stringify(raw) : raw);
      expect(out.kind).toBe(tc.kind);
      expect(out.metadata.resourceVersion).toBe('7');
      tc.check(out);
    });
  }

  it('returns an object sharing nothing with the input (mutating it cannot change the input)', () => {
    const raw = deepFreeze(structuredClone(pod));
    const out = toDomain('Pod', raw) as unknown as Json;
    expect(Object.isFrozen(out['metadata'])).toBe(false);
    expect(out['metadata']).not.toBe(raw['metadata']);
  });
});

describe('withTypeMeta', () => {
  it('fills kind and apiVersion without mutating; leaves non-objects and complete objects alone', () => {
    const bare = deepFreeze({ metadata: { name: 'x' } });
    expect(withTypeMeta('Pod', bare)).toEqual({ metadata: { name: 'x' }, kind: 'Pod', apiVersion: 'v1' });
    const full = deepFreeze({ kind: 'Service', apiVersion: 'v1', metadata: { name: 'x' } });
    expect(withTypeMeta('Pod', full)).toBe(full);
    expect(withTypeMeta('Pod', null)).toBe(null);
    expect(withTypeMeta('Pod', 'text')).toBe('text');
  });
});

describe('EndpointSlices (other controllers\' slices, discovery.k8s.io/v1)', () => {
  const item = deepFreeze({
    metadata: { name: 'imported-1', namespace: 'db', uid: 'u1', resourceVersion: '5', labels: { 'kubernetes.io/service-name': 'db', 'endpointslice.kubernetes.io/managed-by': 'mcs-importer' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['10.0.1.1'], conditions: { ready: true } }],
    ports: [{ port: 5432 }],
  });

  it('a List item gets the discovery apiVersion and validates as an EndpointSlice', () => {
    expect(withTypeMeta('EndpointSlice', item)).toMatchObject({ kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1' });
    const o = toDomain('EndpointSlice', item);
    expect(o).toMatchObject({ kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1', addressType: 'IPv4', ports: [{ name: '', port: 5432, protocol: 'TCP' }] });
  });

  it('an invalid one is rejected naming its field', () => {
    expect(() => toDomain('EndpointSlice', { ...item, addressType: 'IPv5' })).toThrow(InvalidObjectError);
  });

  it('is listed and watched at the discovery group\'s path', () => expect(KIND_PATHS.EndpointSlice).toBe('/apis/discovery.k8s.io/v1/endpointslices'));
});

describe('ServiceExports (MCS, multicluster.x-k8s.io/v1alpha1, an optional CRD)', () => {
  const item = deepFreeze({ metadata: { name: 'web', namespace: 'shop', uid: 'u2', resourceVersion: '6', creationTimestamp: '2026-01-01T00:00:00Z' }, spec: {} });

  it('a List item gets the MCS apiVersion and validates as a ServiceExport', () => {
    expect(toDomain('ServiceExport', item)).toEqual({
      apiVersion: 'multicluster.x-k8s.io/v1alpha1',
      kind: 'ServiceExport',
      metadata: { name: 'web', namespace: 'shop', uid: 'u2', resourceVersion: '6', creationTimestamp: '2026-01-01T00:00:00Z' },
    });
  });

  it('one without a uid is rejected, as every watched kind', () => {
    expect(() => toDomain('ServiceExport', { ...item, metadata: { ...item.metadata, uid: '' } })).toThrow(InvalidObjectError);
  });

  it('is listed and watched at the MCS group\'s path, and is the only optional kind', () => {
    expect(KIND_PATHS.ServiceExport).toBe('/apis/multicluster.x-k8s.io/v1alpha1/serviceexports');
    expect([...OPTIONAL_KINDS]).toEqual(['ServiceExport']);
  });
});

describe('objectKeyOf', () => {
  const cases: { name: string; kind: WatchedKind; raw: unknown; want: string | undefined }[] = [
    { name: 'namespaced objects key as namespace/name', kind: 'Pod', raw: { metadata: { name: 'a.b', namespace: 'ns' } }, want: 'ns/a.b' },
    { name: 'a missing namespace is default, as the API server would store it', kind: 'Service', raw: { metadata: { name: 'web' } }, want: 'default/web' },
    { name: 'nodes key by name alone', kind: 'Node', raw: { metadata: { name: 'n1' } }, want: 'n1' },
    { name: 'no metadata: cannot be keyed', kind: 'Pod', raw: {}, want: undefined },
    { name: 'a numeric name: cannot be keyed', kind: 'Node', raw: { metadata: { name: 1 } }, want: undefined },
    { name: 'a non-string namespace: cannot be keyed', kind: 'Pod', raw: { metadata: { name: 'p', namespace: ['x'] } }, want: undefined },
    { name: 'not an object: cannot be keyed', kind: 'Pod', raw: 'pod', want: undefined },
  ];
  for (const tc of cases) it(tc.name, () => expect(objectKeyOf(tc.kind, deepFreeze(tc.raw))).toBe(tc.want));
});

describe('the KUBE envelope and its msgID', () => {
  const obj = toDomain('Pod', deepFreeze(structuredClone(pod)));
  it('an upsert is keyed <cluster>/<uid>/<resourceVersion>', () => {
    const ev = changeEvent('Upserted.v1', 'c1', obj, '2026-01-01T00:00:00.000Z');
    expect(ev).toEqual({ type: 'Upserted.v1', cluster: 'c1', kind: 'Pod', object: obj, observedAt: '2026-01-01T00:00:00.000Z' });
    expect(kubeMsgID(ev)).toBe('c1/uid-pod-web-1/7');
  });
  it('a delete is keyed <cluster>/<uid>/<resourceVersion>/deleted, at the version it was seen gone', () => {
    const ev = changeEvent('Deleted.v1', 'c1', asDeleted(obj, '12'), 't');
    expect(kubeMsgID(ev)).toBe('c1/uid-pod-web-1/12/deleted');
    expect(obj.metadata.resourceVersion).toBe('7');
  });
  it('asDeleted returns the same object when the version is unchanged', () => {
    expect(asDeleted(obj, '7')).toBe(obj);
  });
  it('an object without uid cannot be keyed', () => {
    const bad = { ...obj, metadata: { ...obj.metadata, uid: undefined } } as WatchedObject;
    expect(() => kubeMsgID({ type: 'Upserted.v1', cluster: 'c1', object: bad })).toThrow(InvalidObjectError);
  });
});
