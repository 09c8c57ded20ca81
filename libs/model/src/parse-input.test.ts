import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { InvalidObjectError } from './errors.ts';
import { parseKubeDocument, parseKubeInput } from './parse-input.ts';
import { thrownBy } from './validate/test-support.ts';

const svc = (name: string, ns = 'shop'): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: ns },
  spec: { selector: { app: name }, ports: [{ port: 80 }] },
});
const node = (name: string): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'Node', metadata: { name } });

// Shaped like `kubectl get svc,pods,nodes,endpoints,endpointslices -A -o json` (trimmed).
const kubectlList = {
  apiVersion: 'v1',
  kind: 'List',
  metadata: { resourceVersion: '' },
  items: [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"apiVersion":"v1","kind":"Service"}\n' },
        creationTimestamp: '2026-03-01T10:00:00Z',
        labels: { app: 'web' },
        managedFields: [{ apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:ports': {} } }, manager: 'kubectl-client-side-apply', operation: 'Update', time: '2026-03-01T10:00:00Z' }],
        name: 'web',
        namespace: 'shop',
        resourceVersion: '1203',
        uid: '0a0b0c0d-0000-4000-8000-000000000001',
      },
      spec: {
        clusterIP: '10.96.40.12',
        clusterIPs: ['10.96.40.12'],
        internalTrafficPolicy: 'Cluster',
        ipFamilies: ['IPv4'],
        ipFamilyPolicy: 'SingleStack',
        ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 'http' }],
        selector: { app: 'web' },
        sessionAffinity: 'None',
        type: 'ClusterIP',
      },
      status: { loadBalancer: {} },
    },
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { creationTimestamp: '2026-03-01T10:00:01Z', generateName: 'web-5c9d7b-', labels: { app: 'web' }, name: 'web-5c9d7b-x2k4q', namespace: 'shop', resourceVersion: '1250', uid: 'p-1' },
      spec: { containers: [{ image: 'nginx', name: 'nginx', ports: [{ containerPort: 8080, name: 'http', protocol: 'TCP' }], resources: {} }], nodeName: 'node-a1', restartPolicy: 'Always' },
      status: { conditions: [{ lastProbeTime: null, lastTransitionTime: '2026-03-01T10:00:05Z', status: 'True', type: 'Ready' }], phase: 'Running', podIP: '10.244.1.7', podIPs: [{ ip: '10.244.1.7' }], qosClass: 'BestEffort' },
    },
    {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { labels: { 'topology.kubernetes.io/zone': 'zone-a' }, name: 'node-a1', resourceVersion: '900', uid: 'n-1' },
      spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] },
      status: { allocatable: { cpu: '4', memory: '16Gi' }, conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }], nodeInfo: { kubeletVersion: 'v1.34.1' } },
    },
    {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { creationTimestamp: '2026-03-01T10:00:00Z', labels: { app: 'web' }, name: 'web', namespace: 'shop', resourceVersion: '1251', uid: 'e-1' },
      subsets: [{ addresses: [{ ip: '10.244.1.7', nodeName: 'node-a1', targetRef: { kind: 'Pod', name: 'web-5c9d7b-x2k4q', namespace: 'shop', uid: 'p-1' } }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] }],
    },
    {
      addressType: 'IPv4',
      apiVersion: 'discovery.k8s.io/v1',
      endpoints: [{ addresses: ['10.244.1.7'], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'node-a1', targetRef: { kind: 'Pod', name: 'web-5c9d7b-x2k4q', namespace: 'shop', uid: 'p-1' }, zone: 'zone-a' }],
      kind: 'EndpointSlice',
      metadata: {
        annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': '2026-03-01T10:00:05Z' },
        generateName: 'web-',
        generation: 2,
        labels: { 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io', 'kubernetes.io/service-name': 'web' },
        name: 'web-8xq2m',
        namespace: 'shop',
        ownerReferences: [{ apiVersion: 'v1', blockOwnerDeletion: true, controller: true, kind: 'Service', name: 'web', uid: '0a0b0c0d-0000-4000-8000-000000000001' }],
        resourceVersion: '1252',
        uid: 's-1',
      },
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-root-ca.crt', namespace: 'shop' }, data: {} },
  ],
};

describe('parseKubeDocument accepts', () => {
  const cases: { name: string; input: unknown; kinds: string[]; skipped?: string[] }[] = [
    { name: 'kubectl get -A -o json output with extra fields everywhere', input: kubectlList, kinds: ['Service', 'Pod', 'Node', 'Endpoints', 'EndpointSlice'], skipped: ['item 5:ConfigMap'] },
    { name: 'a single object', input: svc('web'), kinds: ['Service'] },
    { name: 'a JSON array of objects', input: [svc('web'), node('n1')], kinds: ['Service', 'Node'] },
    { name: 'nested Lists are flattened in order', input: { kind: 'List', items: [node('n1'), { kind: 'List', items: [svc('a'), svc('b')] }, node('n2')] }, kinds: ['Node', 'Service', 'Service', 'Node'] },
    { name: 'an array of Lists is flattened', input: [{ kind: 'List', items: [node('n1')] }, { kind: 'NodeList', items: [node('n2')] }], kinds: ['Node', 'Node'] },
    { name: 'typed List items without kind inherit it (API list responses)', input: { apiVersion: 'v1', kind: 'ServiceList', items: [{ metadata: { name: 'web', namespace: 'shop' }, spec: {} }] }, kinds: ['Service'] },
    { name: 'typed List items inherit the list apiVersion', input: { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSliceList', items: [{ metadata: { name: 's1' }, addressType: 'IPv4', endpoints: null, ports: null }] }, kinds: ['EndpointSlice'] },
    { name: 'an empty List', input: { apiVersion: 'v1', kind: 'List', items: [] }, kinds: [] },
    { name: 'a List with null items', input: { apiVersion: 'v1', kind: 'List', items: null }, kinds: [] },
    { name: 'an empty array', input: [], kinds: [] },
    { name: 'unsupported kinds are skipped, not rejected', input: [{ kind: 'Namespace', metadata: { name: 'x' } }, { kind: 'Deployment' }], kinds: [], skipped: ['item 0:Namespace', 'item 1:Deployment'] },
    { name: 'the same name in two namespaces is not a duplicate', input: [svc('web', 'a'), svc('web', 'b')], kinds: ['Service', 'Service'] },
    { name: 'the same name in two kinds is not a duplicate', input: [svc('web'), { kind: 'Endpoints', metadata: { name: 'web', namespace: 'shop' } }], kinds: ['Service', 'Endpoints'] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const text = JSON.stringify(deepFreeze(tc.input), null, 2);
      const doc = parseKubeDocument(text, 'stdin');
      expect(doc.objects.map((o) => o.kind)).toEqual(tc.kinds);
      expect(doc.skipped.map((s) => `${s.where}:${s.kind}`)).toEqual(tc.skipped ?? []);
    });
  }

  it('keeps what slicemesh reads and drops the rest from kubectl output', () => {
    const [service, pod, , , slice] = parseKubeInput(JSON.stringify(kubectlList));
    expect(service).toMatchObject({ kind: 'Service', metadata: { name: 'web', namespace: 'shop', uid: '0a0b0c0d-0000-4000-8000-000000000001' }, spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 'http' }] } });
    expect(pod).toMatchObject({ status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-03-01T10:00:05Z' }] } });
    expect(slice).toMatchObject({ kind: 'EndpointSlice', addressType: 'IPv4', metadata: { generation: 2, resourceVersion: '1252' } });
    expect(JSON.stringify([service, pod, slice])).not.toMatch(/managedFields|qosClass|ipFamilyPolicy|lastProbeTime/);
  });

  it('tolerates a UTF-8 byte order mark', () => {
    expect(parseKubeInput(`\ufeff${JSON.stringify(svc('web'))}`)).toHaveLength(1);
  });
});

describe('parseKubeDocument rejects', () => {
  const cases: { name: string; text: string; source?: string; object: string; field: string; reason: RegExp }[] = [
    { name: 'invalid JSON with line and column', text: '{\n  "kind": "List",\n  "items": [,]\n}', object: 'input', field: '<json>', reason: /^invalid JSON at line 3 column 13: / },
    { name: 'invalid JSON names the source', text: '{', source: 'cluster.json', object: 'cluster.json', field: '<json>', reason: /line 1 column 2: unexpected end of input/ },
    { name: 'empty input', text: '  \n', object: 'input', field: '<json>', reason: /empty/ },
    { name: 'a JSON scalar is not a document', text: '42', object: 'input', field: '<json>', reason: /got number/ },
    { name: 'a List whose items is not an array', text: '{"kind":"List","items":{}}', object: 'input', field: 'items', reason: /array/ },
    { name: 'an item without kind', text: '[{"metadata":{"name":"x"}}]', object: 'item 0', field: 'kind', reason: /required/ },
    { name: 'an item that is not an object', text: `[${JSON.stringify(svc('web'))}, 7]`, object: 'item 1', field: '<object>', reason: /got number/ },
    { name: 'the first invalid item names its position when unnamed', text: JSON.stringify({ kind: 'List', items: [svc('a'), { kind: 'Pod', metadata: {}, spec: { containers: [] } }] }), object: 'item 1 (kind Pod)', field: 'metadata.name', reason: /required/ },
    { name: 'an invalid named item names the object', text: JSON.stringify([{ ...svc('web'), spec: { ports: [{ port: 0 }] } }]), object: 'Service shop/web', field: 'spec.ports[0].port', reason: /between 1 and 65535/ },
    { name: 'the same object twice', text: JSON.stringify([node('n1'), svc('web'), node('n1')]), object: 'Node n1', field: 'metadata.name', reason: /duplicate object .*item 0/ },
    { name: 'a namespace-less object duplicates one in default', text: JSON.stringify([svc('web', 'default'), { ...svc('web'), metadata: { name: 'web' } }]), object: 'Service default/web', field: 'metadata.name', reason: /duplicate/ },
    { name: 'Lists nested absurdly deep', text: `${'{"kind":"List","items":['.repeat(20)}${']}'.repeat(20)}`, object: 'input', field: '<json>', reason: /nested more than 8/ },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const err = thrownBy(() => parseKubeDocument(tc.text, tc.source));
      expect(err).toBeInstanceOf(InvalidObjectError);
      const e = err as InvalidObjectError;
      expect({ object: e.object, field: e.field }).toEqual({ object: tc.object, field: tc.field });
      expect(e.reason).toMatch(tc.reason);
      expect(e.message).not.toMatch(/[\n\r\u2028\u2029]/);
    });
  }
});
