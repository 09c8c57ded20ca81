import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { InvalidObjectError } from '../errors.ts';
import { validateService } from './service.ts';
import { patched } from './test-support.ts';

// A Service as `kubectl get svc -o json` prints it, extra fields included.
const base = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: {
    name: 'web',
    namespace: 'shop',
    uid: '6c1a2f9e-3b1d-4d2e-9a7c-1f2e3d4c5b6a',
    resourceVersion: '48213',
    creationTimestamp: '2026-03-01T10:00:00Z',
    labels: { 'app.kubernetes.io/name': 'web' },
    annotations: { 'service.kubernetes.io/topology-mode': 'Auto' },
    managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:spec': {} } }],
  },
  spec: {
    type: 'ClusterIP',
    selector: { app: 'web' },
    clusterIP: '10.96.12.7',
    clusterIPs: ['10.96.12.7'],
    ipFamilies: ['IPv4'],
    ipFamilyPolicy: 'SingleStack',
    ports: [
      { name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' },
      { name: 'metrics', port: 9090, targetPort: 9090 },
    ],
    sessionAffinity: 'None',
    internalTrafficPolicy: 'Cluster',
  },
  status: { loadBalancer: {} },
};

const O = 'Service shop/web';
const UNNAMED = 'item 0 (kind Service)';

const rejects: { name: string; edits: Record<string, unknown>; object?: string; field: string; reason: RegExp }[] = [
  { name: 'name must be a DNS-1035 label: no dots', edits: { 'metadata.name': 'web.v2' }, object: 'Service shop/web.v2', field: 'metadata.name', reason: /DNS-1035/ },
  { name: 'name must start with a letter', edits: { 'metadata.name': '1web' }, object: 'Service shop/1web', field: 'metadata.name', reason: /DNS-1035/ },
  { name: 'name at most 63 characters', edits: { 'metadata.name': `w${'a'.repeat(63)}` }, object: `Service shop/w${'a'.repeat(63)}`, field: 'metadata.name', reason: /at most 63/ },
  { name: 'name over 253 characters is reported without printing it', edits: { 'metadata.name': 'a'.repeat(300) }, object: UNNAMED, field: 'metadata.name', reason: /\(300 characters\)/ },
  { name: 'name with uppercase', edits: { 'metadata.name': 'Web' }, object: 'Service shop/Web', field: 'metadata.name', reason: /DNS-1035/ },
  { name: 'name with "*"', edits: { 'metadata.name': 'web*' }, object: 'Service shop/web*', field: 'metadata.name', reason: /DNS-1035/ },
  { name: 'name with ">"', edits: { 'metadata.name': 'web>' }, object: 'Service shop/web>', field: 'metadata.name', reason: /DNS-1035/ },
  { name: 'name with a space is not printed raw', edits: { 'metadata.name': 'my web' }, object: UNNAMED, field: 'metadata.name', reason: /"my web"/ },
  { name: 'name with unicode is escaped in the message', edits: { 'metadata.name': 'wéb' }, object: UNNAMED, field: 'metadata.name', reason: /"w\\u00e9b"/ },
  { name: 'name with a newline stays on one line', edits: { 'metadata.name': 'we\nb' }, object: UNNAMED, field: 'metadata.name', reason: /"we\\u000ab"/ },
  { name: 'name is required', edits: { 'metadata.name': undefined }, object: UNNAMED, field: 'metadata.name', reason: /required/ },
  { name: 'name must be a string', edits: { 'metadata.name': 42 }, object: UNNAMED, field: 'metadata.name', reason: /string \(got number\)/ },
  { name: 'metadata is required', edits: { metadata: undefined }, object: UNNAMED, field: 'metadata', reason: /required/ },
  { name: 'namespace must be a DNS-1123 label', edits: { 'metadata.namespace': 'kube.system' }, object: 'Service kube.system/web', field: 'metadata.namespace', reason: /DNS-1123 label/ },
  { name: 'namespace at most 63 characters', edits: { 'metadata.namespace': 'n'.repeat(64) }, object: `Service ${'n'.repeat(64)}/web`, field: 'metadata.namespace', reason: /at most 63/ },
  { name: 'label keys must be qualified names', edits: { 'metadata.labels["bad key"]': 'x' }, field: 'metadata.labels["bad key"]', reason: /qualified name/ },
  { name: 'label values at most 63 characters', edits: { 'metadata.labels.tier': 'v'.repeat(64) }, field: 'metadata.labels["tier"]', reason: /at most 63/ },
  { name: 'label values must be strings', edits: { 'metadata.labels.tier': 3 }, field: 'metadata.labels["tier"]', reason: /string/ },
  { name: 'annotations at most 256 KiB in total', edits: { 'metadata.annotations.big': 'x'.repeat(256 * 1024) }, field: 'metadata.annotations', reason: /total size/ },
  { name: 'annotation keys must be qualified names', edits: { 'metadata.annotations["a b"]': 'x' }, field: 'metadata.annotations["a b"]', reason: /qualified name/ },
  { name: 'at most one controller owner reference', edits: { 'metadata.ownerReferences': [1, 2].map((i) => ({ apiVersion: 'v1', kind: 'X', name: `o${i}`, uid: `u${i}`, controller: true })) }, field: 'metadata.ownerReferences', reason: /only one/ },
  { name: 'owner reference uid required', edits: { 'metadata.ownerReferences': [{ apiVersion: 'v1', kind: 'X', name: 'o' }] }, field: 'metadata.ownerReferences[0].uid', reason: /required/ },
  { name: 'uid at most 128 characters', edits: { 'metadata.uid': 'u'.repeat(129) }, field: 'metadata.uid', reason: /at most 128/ },
  { name: 'generation is a non-negative integer', edits: { 'metadata.generation': -1 }, field: 'metadata.generation', reason: /between 0/ },
  { name: 'creationTimestamp must be RFC 3339', edits: { 'metadata.creationTimestamp': 'yesterday' }, field: 'metadata.creationTimestamp', reason: /RFC 3339/ },
  { name: 'kind must match the validator', edits: { kind: 'Pod' }, field: 'kind', reason: /must be Service/ },
  { name: 'apiVersion must be v1', edits: { apiVersion: 'v2' }, field: 'apiVersion', reason: /must be v1/ },
  { name: 'spec is required', edits: { spec: undefined }, field: 'spec', reason: /required/ },
  { name: 'spec.type is an enum', edits: { 'spec.type': 'Internal' }, field: 'spec.type', reason: /one of ClusterIP/ },
  { name: 'selector values are label values', edits: { 'spec.selector.app': 'a b' }, field: 'spec.selector["app"]', reason: /label value/ },
  { name: 'ports must be an array', edits: { 'spec.ports': { port: 80 } }, field: 'spec.ports', reason: /array \(got object\)/ },
  { name: 'port 0 is out of range', edits: { 'spec.ports[0].port': 0 }, field: 'spec.ports[0].port', reason: /between 1 and 65535/ },
  { name: 'port 65536 is out of range', edits: { 'spec.ports[1].port': 65536 }, field: 'spec.ports[1].port', reason: /between 1 and 65535/ },
  { name: 'port must be a number, not a string', edits: { 'spec.ports[0].port': '80' }, field: 'spec.ports[0].port', reason: /integer \(got string\)/ },
  { name: 'port must be an integer', edits: { 'spec.ports[0].port': 80.5 }, field: 'spec.ports[0].port', reason: /integer/ },
  { name: 'port is required', edits: { 'spec.ports[0].port': undefined }, field: 'spec.ports[0].port', reason: /required/ },
  { name: 'numeric targetPort -1 is out of range', edits: { 'spec.ports[1].targetPort': -1 }, field: 'spec.ports[1].targetPort', reason: /between 1 and 65535/ },
  { name: 'numeric targetPort 70000 is out of range', edits: { 'spec.ports[1].targetPort': 70000 }, field: 'spec.ports[1].targetPort', reason: /between 1 and 65535/ },
  { name: 'named targetPort at most 15 characters', edits: { 'spec.ports[0].targetPort': 'http-port-number' }, field: 'spec.ports[0].targetPort', reason: /at most 15/ },
  { name: 'named targetPort rejects an underscore', edits: { 'spec.ports[0].targetPort': 'http_port' }, field: 'spec.ports[0].targetPort', reason: /IANA/ },
  { name: 'named targetPort needs a letter', edits: { 'spec.ports[0].targetPort': '8080' }, field: 'spec.ports[0].targetPort', reason: /letter/ },
  { name: 'targetPort must be a number or a name', edits: { 'spec.ports[0].targetPort': true }, field: 'spec.ports[0].targetPort', reason: /port number or a port name/ },
  { name: 'protocol must be TCP, UDP or SCTP', edits: { 'spec.ports[0].protocol': 'ICMP' }, field: 'spec.ports[0].protocol', reason: /one of TCP, UDP, SCTP/ },
  { name: 'protocol is case-sensitive', edits: { 'spec.ports[0].protocol': 'tcp' }, field: 'spec.ports[0].protocol', reason: /one of TCP/ },
  { name: 'port names are DNS-1123 labels', edits: { 'spec.ports[0].name': 'HTTP' }, field: 'spec.ports[0].name', reason: /DNS-1123 label/ },
  { name: 'every port is named when there are several', edits: { 'spec.ports[1].name': undefined }, field: 'spec.ports[1].name', reason: /more than one port/ },
  { name: 'a port named "" has no name, so it is refused among several (F.13)', edits: { 'spec.ports[1].name': '' }, field: 'spec.ports[1].name', reason: /more than one port/ },
  { name: 'port names are unique', edits: { 'spec.ports[1].name': 'http' }, field: 'spec.ports[1].name', reason: /duplicate port name/ },
  { name: 'port and protocol pairs are unique', edits: { 'spec.ports[1].port': 80 }, field: 'spec.ports[1]', reason: /duplicate port 80\/TCP/ },
  { name: 'nodePort range', edits: { 'spec.ports[0].nodePort': 65536 }, field: 'spec.ports[0].nodePort', reason: /between 1 and 65535/ },
  { name: 'appProtocol is a qualified name', edits: { 'spec.ports[0].appProtocol': 'h t t p' }, field: 'spec.ports[0].appProtocol', reason: /qualified name/ },
  { name: 'clusterIP must be an IP, None or empty', edits: { 'spec.clusterIP': '10.96.0.300' }, field: 'spec.clusterIP', reason: /valid IP/ },
  { name: 'clusterIPs entries must be IPs', edits: { 'spec.clusterIPs': ['10.96.12.7', 'fd00::zz'] }, field: 'spec.clusterIPs[1]', reason: /valid IP/ },
  { name: 'clusterIPs "None" is the only entry', edits: { 'spec.clusterIP': 'None', 'spec.clusterIPs': ['None', 'fd00::1'] }, field: 'spec.clusterIPs', reason: /only entry/ },
  { name: 'clusterIPs one per family', edits: { 'spec.clusterIPs': ['10.96.12.7', '10.96.12.8'] }, field: 'spec.clusterIPs', reason: /one address per IP family/ },
  { name: 'clusterIPs at most two', edits: { 'spec.clusterIPs': ['10.96.12.7', 'fd00::1', 'fd00::2'] }, field: 'spec.clusterIPs', reason: /at most 2/ },
  { name: 'clusterIPs[0] equals clusterIP', edits: { 'spec.clusterIPs': ['10.96.12.8'] }, field: 'spec.clusterIPs[0]', reason: /must equal spec.clusterIP/ },
  { name: 'ipFamilies are IPv4 or IPv6', edits: { 'spec.ipFamilies': ['IPv5'] }, field: 'spec.ipFamilies[0]', reason: /one of IPv4, IPv6/ },
  { name: 'ipFamilies without duplicates', edits: { 'spec.ipFamilies': ['IPv4', 'IPv4'] }, field: 'spec.ipFamilies[1]', reason: /duplicate/ },
  { name: 'externalIPs must be IPs', edits: { 'spec.externalIPs': ['example.com'] }, field: 'spec.externalIPs[0]', reason: /valid IP/ },
  { name: 'affinity timeout at least 1 second', edits: { 'spec.sessionAffinityConfig': { clientIP: { timeoutSeconds: 0 } } }, field: 'spec.sessionAffinityConfig.clientIP.timeoutSeconds', reason: /between 1 and 86400/ },
  { name: 'affinity timeout at most one day', edits: { 'spec.sessionAffinityConfig': { clientIP: { timeoutSeconds: 86401 } } }, field: 'spec.sessionAffinityConfig.clientIP.timeoutSeconds', reason: /between 1 and 86400/ },
  { name: 'sessionAffinity is an enum', edits: { 'spec.sessionAffinity': 'Cookie' }, field: 'spec.sessionAffinity', reason: /one of None, ClientIP/ },
  { name: 'externalTrafficPolicy is Cluster or Local', edits: { 'spec.externalTrafficPolicy': 'Global' }, field: 'spec.externalTrafficPolicy', reason: /one of Cluster, Local/ },
  { name: 'loadBalancerSourceRanges prefix fits the family', edits: { 'spec.loadBalancerSourceRanges': ['10.0.0.0/33'] }, field: 'spec.loadBalancerSourceRanges[0]', reason: /CIDR/ },
  { name: 'loadBalancerSourceRanges must be CIDRs', edits: { 'spec.loadBalancerSourceRanges': ['10.0.0.0'] }, field: 'spec.loadBalancerSourceRanges[0]', reason: /CIDR/ },
  { name: 'trafficDistribution must be a string', edits: { 'spec.trafficDistribution': 1 }, field: 'spec.trafficDistribution', reason: /string/ },
  { name: 'load-balancer ingress IPs must be IPs', edits: { 'status.loadBalancer.ingress': [{ ip: '1.2.3' }] }, field: 'status.loadBalancer.ingress[0].ip', reason: /valid IP/ },
  { name: 'load-balancer ipMode is VIP or Proxy', edits: { 'status.loadBalancer.ingress': [{ ip: '1.2.3.4', ipMode: 'Direct' }] }, field: 'status.loadBalancer.ingress[0].ipMode', reason: /VIP, Proxy/ },
];

describe('validateService rejects', () => {
  for (const tc of rejects) {
    it(tc.name, () => {
      const raw = deepFreeze(patched(base, tc.edits));
      let caught: unknown;
      try {
        validateService(raw, 'item 0');
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(InvalidObjectError);
      const err = caught as InvalidObjectError;
      expect({ object: err.object, field: err.field }).toEqual({ object: tc.object ?? O, field: tc.field });
      expect(err.reason).toMatch(tc.reason);
      expect(err.message).not.toMatch(/[\n\r]/);
    });
  }
  it('a non-object names the caller position', () => {
    expect(() => validateService('web', 'item 7')).toThrow(new InvalidObjectError('item 7', '<object>', 'must be a JSON object (got string)'));
  });
});

describe('validateService normalises', () => {
  const cases: { name: string; edits: Record<string, unknown>; check: (s: ReturnType<typeof validateService>) => void }[] = [
    { name: 'service ports default to TCP', edits: {}, check: (s) => expect(s.spec.ports?.map((p) => p.protocol)).toEqual(['TCP', 'TCP']) },
    { name: 'a single port named "" is unnamed (F.13)', edits: { 'spec.ports': [{ name: '', port: 80, targetPort: 8080 }] }, check: (s) => expect(s.spec.ports).toEqual([{ port: 80, protocol: 'TCP', targetPort: 8080 }]) },
    { name: 'protocol "", targetPort 0 and nodePort 0 are unset (F.13)', edits: { 'spec.ports': [{ port: 80, protocol: '', targetPort: 0, nodePort: 0 }] }, check: (s) => expect(s.spec.ports).toEqual([{ port: 80, protocol: 'TCP' }]) },
    { name: 'named and numeric targetPorts are kept as given', edits: {}, check: (s) => expect(s.spec.ports?.map((p) => p.targetPort)).toEqual(['http', 9090]) },
    { name: 'an empty selector means no selector, as the API server stores it', edits: { 'spec.selector': {} }, check: (s) => expect('selector' in s.spec).toBe(false) },
    { name: 'a null selector means no selector', edits: { 'spec.selector': null }, check: (s) => expect(s.spec.selector).toBeUndefined() },
    { name: 'null optional fields count as absent', edits: { 'metadata.creationTimestamp': null, 'spec.type': null }, check: (s) => expect([s.metadata.creationTimestamp, s.spec.type]).toEqual([undefined, undefined]) },
    { name: 'a missing namespace becomes default', edits: { 'metadata.namespace': undefined }, check: (s) => expect(s.metadata.namespace).toBe('default') },
    { name: 'headless clusterIP None is accepted', edits: { 'spec.clusterIP': 'None', 'spec.clusterIPs': ['None'] }, check: (s) => expect(s.spec.clusterIPs).toEqual(['None']) },
    { name: 'dual-stack clusterIPs are accepted', edits: { 'spec.clusterIPs': ['10.96.12.7', 'fd00:10:96::7'], 'spec.ipFamilies': ['IPv4', 'IPv6'] }, check: (s) => expect(s.spec.ipFamilies).toEqual(['IPv4', 'IPv6']) },
    { name: 'unknown fields are dropped (managedFields, ipFamilyPolicy)', edits: {}, check: (s) => expect([JSON.stringify(s).includes('managedFields'), JSON.stringify(s).includes('ipFamilyPolicy')]).toEqual([false, false]) },
    { name: 'an empty load-balancer status is dropped', edits: {}, check: (s) => expect(s.status).toBeUndefined() },
    { name: 'whitespace around a source range is tolerated (D.1.6)', edits: { 'spec.loadBalancerSourceRanges': [' 10.0.0.0/8 '] }, check: (s) => expect(s.spec.loadBalancerSourceRanges).toEqual([' 10.0.0.0/8 ']) },
    { name: 'an unknown trafficDistribution is kept for the hints logic to ignore (C.2.2)', edits: { 'spec.trafficDistribution': 'PreferSomewhere' }, check: (s) => expect(s.spec.trafficDistribution).toBe('PreferSomewhere') },
    { name: 'the kind may be omitted when the caller picked the validator', edits: { kind: undefined, apiVersion: undefined }, check: (s) => expect([s.kind, s.apiVersion]).toEqual(['Service', 'v1']) },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const raw = deepFreeze(patched(base, tc.edits));
      const before = JSON.stringify(raw);
      tc.check(validateService(raw, 'item 0'));
      expect(JSON.stringify(raw)).toBe(before);
    });
  }
});
