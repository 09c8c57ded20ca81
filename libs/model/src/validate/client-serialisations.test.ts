// Objects as different clients serialise them are read as the API server reads them (F.13):
// "" / 0 / false in plain Go fields, null anywhere, empty lists and maps all mean unset; unknown
// fields pass; only what the API server refuses is refused, naming the object and the field.

import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { InvalidObjectError } from '../errors.ts';
import type { EndpointSlice, KubeObject, Pod, Service } from '../kube.ts';
import { parseKubeDocument } from '../parse-input.ts';
import type { ClientForms } from './client-forms.ts';
import { controllerSlice, createdService, loadBalancerService, pendingPod, readService, readyNode, runningPod, selectorlessEndpoints } from './client-forms.ts';
import { validateEndpointSlice } from './endpoint-slice.ts';
import { validateEndpoints } from './endpoints.ts';
import { validateNode } from './node.ts';
import { validatePod } from './pod.ts';
import { validateService } from './service.ts';
import { patched, thrownBy } from './test-support.ts';

type Validate = (raw: unknown, where: string) => KubeObject;

const FORMS = ['kubectl', 'clientGo', 'python'] as const;

/** Validates a frozen copy and proves the input is untouched, accepted or not. */
function validateFrozen(validate: Validate, raw: unknown): KubeObject {
  const frozen = deepFreeze(structuredClone(raw));
  const before = JSON.stringify(frozen);
  try {
    return validate(frozen, 'item 0');
  } finally {
    expect(JSON.stringify(frozen)).toBe(before);
  }
}

const accepted: { name: string; forms: ClientForms; validate: Validate; check: (o: KubeObject) => void }[] = [
  {
    name: 'a Service with one unnamed port, as read from the API server',
    forms: readService,
    validate: validateService,
    check: (o) => expect((o as Service).spec.ports).toEqual([{ port: 80, protocol: 'TCP', targetPort: 8080 }]),
  },
  {
    name: 'a Service as a client creates it: type, protocol, targetPort and clusterIP not set yet',
    forms: createdService,
    validate: validateService,
    check: (o) => expect((o as Service).spec).toEqual({ selector: { app: 'web' }, ports: [{ port: 80, protocol: 'TCP' }] }),
  },
  {
    name: 'a LoadBalancer Service with named ports, node ports and an ingress address',
    forms: loadBalancerService,
    validate: validateService,
    check: (o) => expect((o as Service).status?.loadBalancer?.ingress).toEqual([{ ip: '203.0.113.10', ipMode: 'VIP' }]),
  },
  {
    name: 'a running Pod',
    forms: runningPod,
    validate: validatePod,
    check: (o) => expect([(o as Pod).spec.nodeName, (o as Pod).status?.podIPs]).toEqual(['node-a1', [{ ip: '10.244.1.5' }]]),
  },
  {
    name: 'a Pod not scheduled yet: no nodeName, no podIP, an unnamed container port',
    forms: pendingPod,
    validate: validatePod,
    check: (o) => {
      const p = o as Pod;
      expect([p.spec.nodeName, p.status?.podIP, p.status?.podIPs, p.spec.containers[0]?.ports]).toEqual([undefined, undefined, undefined, [{ containerPort: 8080, protocol: 'TCP' }]]);
    },
  },
  {
    name: 'a ready Node (an empty spec is left out)',
    forms: readyNode,
    validate: validateNode,
    check: (o) => expect(o).toMatchObject({ status: { allocatable: { cpu: '3800m' }, conditions: [{ type: 'Ready', status: 'True' }] } }),
  },
  {
    name: 'Endpoints of a selectorless Service with an unnamed port',
    forms: selectorlessEndpoints,
    validate: validateEndpoints,
    check: (o) => expect(o).toMatchObject({ subsets: [{ addresses: [{ ip: '10.0.9.10' }, { hostname: 'db-1' }], ports: [{ port: 5432, protocol: 'TCP' }] }] }),
  },
  {
    name: 'an EndpointSlice whose port name is "" (the controller\'s form for an unnamed port)',
    forms: controllerSlice,
    validate: validateEndpointSlice,
    check: (o) => expect(o).toMatchObject({ ports: [{ name: '', port: 8080, protocol: 'TCP' }] }),
  },
];

describe('objects as clients serialise them are accepted and read alike', () => {
  for (const tc of accepted) {
    describe(tc.name, () => {
      const kubectl = (): KubeObject => validateFrozen(tc.validate, tc.forms.kubectl);
      it('kubectl: accepted as expected', () => tc.check(kubectl()));
      for (const form of FORMS.slice(1)) {
        it(`${form}: equal to the kubectl form after normalisation`, () => {
          expect(validateFrozen(tc.validate, tc.forms[form])).toEqual(kubectl());
        });
      }
      it('reading the result again changes nothing', () => {
        expect(validateFrozen(tc.validate, kubectl())).toEqual(kubectl());
      });
    });
  }

  it('whole documents: a Python V1ServiceList (items without kind) equals kubectl get output', () => {
    const pyList = { apiVersion: 'v1', kind: 'ServiceList', metadata: { continue: null, remainingItemCount: null, resourceVersion: '48300', selfLink: null }, items: [{ ...(readService.python as object), apiVersion: null, kind: null }] };
    const kubectlList = { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: [readService.kubectl] };
    expect(parseKubeDocument(JSON.stringify(pyList)).objects).toEqual(parseKubeDocument(JSON.stringify(kubectlList)).objects);
  });

  it('whole documents: a List whose items carry kind "" takes the kind of a typed List', () => {
    const goList = { kind: 'PodList', apiVersion: 'v1', items: [{ ...(runningPod.clientGo as object), kind: '', apiVersion: '' }] };
    expect(parseKubeDocument(JSON.stringify(goList)).objects).toEqual([validatePod(runningPod.kubectl, 'item 0')]);
  });

  const normalised: { name: string; forms: ClientForms; validate: Validate; edits: Record<string, unknown>; want: (o: KubeObject) => unknown; is: unknown }[] = [
    { name: 'a label whose value is null is the empty label value, as Go decodes it', forms: readService, validate: validateService, edits: { 'metadata.labels.tier': null }, want: (o) => o.metadata.labels, is: { app: 'web', tier: '' } },
    { name: 'an empty namespace is the default namespace', forms: readService, validate: validateService, edits: { 'metadata.namespace': '' }, want: (o) => o.metadata.namespace, is: 'default' },
    { name: 'targetPort "" is unset (the server defaults it to port)', forms: readService, validate: validateService, edits: { 'spec.ports[0].targetPort': '' }, want: (o) => (o as Service).spec.ports?.[0], is: { port: 80, protocol: 'TCP' } },
    { name: 'an ingress hostname "" is unset', forms: loadBalancerService, validate: validateService, edits: { 'status.loadBalancer.ingress[0].hostname': '' }, want: (o) => (o as Service).status?.loadBalancer?.ingress, is: [{ ip: '203.0.113.10', ipMode: 'VIP' }] },
    { name: 'a pointer field keeps "": an EndpointSlice port name', forms: controllerSlice, validate: validateEndpointSlice, edits: {}, want: (o) => (o as EndpointSlice).ports, is: [{ name: '', port: 8080, protocol: 'TCP' }] },
    { name: 'a pointer field keeps "": an endpoint zone (a valid label value)', forms: controllerSlice, validate: validateEndpointSlice, edits: { 'endpoints[0].zone': '' }, want: (o) => (o as EndpointSlice).endpoints[0]?.zone, is: '' },
  ];
  for (const tc of normalised) {
    it(tc.name, () => expect(tc.want(validateFrozen(tc.validate, patched(tc.forms.clientGo, tc.edits)))).toEqual(tc.is));
  }
});

// What the API server refuses stays refused, whichever client sent it. `form` is the client
// form the edits apply to.
const rejected: { name: string; form: unknown; validate: Validate; edits: Record<string, unknown>; object: string; field: string; reason: RegExp }[] = [
  // Service ports (validateServicePort in pkg/apis/core/validation/validation.go).
  { name: 'several ports: a port named "" has no name', form: loadBalancerService.clientGo, validate: validateService, edits: { 'spec.ports[1].name': '' }, object: 'Service edge/gateway', field: 'spec.ports[1].name', reason: /is required when the service has more than one port/ },
  { name: 'several ports: a port named null has no name', form: loadBalancerService.python, validate: validateService, edits: { 'spec.ports[0].name': null }, object: 'Service edge/gateway', field: 'spec.ports[0].name', reason: /is required when the service has more than one port/ },
  { name: 'several ports: a port without a name', form: loadBalancerService.kubectl, validate: validateService, edits: { 'spec.ports[1].name': undefined }, object: 'Service edge/gateway', field: 'spec.ports[1].name', reason: /is required when the service has more than one port/ },
  { name: 'two ports with the same name', form: loadBalancerService.clientGo, validate: validateService, edits: { 'spec.ports[1].name': 'http' }, object: 'Service edge/gateway', field: 'spec.ports[1].name', reason: /duplicate port name "http" \(also spec.ports\[0\]\)/ },
  { name: 'a port name that is not a DNS-1123 label', form: readService.python, validate: validateService, edits: { 'spec.ports[0].name': 'HTTP' }, object: 'Service shop/web', field: 'spec.ports[0].name', reason: /DNS-1123 label/ },
  { name: 'port 0 (port is not optional, so 0 is not unset)', form: readService.clientGo, validate: validateService, edits: { 'spec.ports[0].port': 0 }, object: 'Service shop/web', field: 'spec.ports[0].port', reason: /between 1 and 65535 \(got 0\)/ },
  { name: 'a port list holding null', form: readService.python, validate: validateService, edits: { 'spec.ports': [null] }, object: 'Service shop/web', field: 'spec.ports[0]', reason: /required/ },
  { name: 'a numeric targetPort sent as a string is a port name, and names need a letter', form: readService.python, validate: validateService, edits: { 'spec.ports[0].targetPort': '8080' }, object: 'Service shop/web', field: 'spec.ports[0].targetPort', reason: /at least one letter/ },
  // Pointer fields: "" is a value there, and not an allowed one.
  { name: 'appProtocol "" (a pointer: not a qualified name)', form: readService.clientGo, validate: validateService, edits: { 'spec.ports[0].appProtocol': '' }, object: 'Service shop/web', field: 'spec.ports[0].appProtocol', reason: /must not be empty/ },
  { name: 'internalTrafficPolicy "" (a pointer: not a policy)', form: readService.clientGo, validate: validateService, edits: { 'spec.internalTrafficPolicy': '' }, object: 'Service shop/web', field: 'spec.internalTrafficPolicy', reason: /one of Cluster, Local/ },
  { name: 'an EndpointSlice port protocol "" (a pointer: not a protocol)', form: controllerSlice.clientGo, validate: validateEndpointSlice, edits: { 'ports[0].protocol': '' }, object: 'EndpointSlice shop/web-x7k2p', field: 'ports[0].protocol', reason: /one of TCP, UDP, SCTP/ },
  { name: 'two EndpointSlice ports both unnamed ("" and null are the same name "")', form: controllerSlice.python, validate: validateEndpointSlice, edits: { ports: [{ name: '', port: 8080, protocol: 'TCP' }, { name: null, port: 8443, protocol: 'TCP' }] }, object: 'EndpointSlice shop/web-x7k2p', field: 'ports[1].name', reason: /duplicate port name ""/ },
  { name: 'an EndpointSlice addressType ""', form: controllerSlice.clientGo, validate: validateEndpointSlice, edits: { addressType: '' }, object: 'EndpointSlice shop/web-x7k2p', field: 'addressType', reason: /one of IPv4, IPv6/ },
  // Times: metav1.Time decodes null but not "".
  { name: 'creationTimestamp "" (a time cannot be "")', form: readService.clientGo, validate: validateService, edits: { 'metadata.creationTimestamp': '' }, object: 'Service shop/web', field: 'metadata.creationTimestamp', reason: /RFC 3339/ },
  // Required fields: "" and null do not make them optional.
  { name: 'a container named ""', form: runningPod.clientGo, validate: validatePod, edits: { 'spec.containers[0].name': '' }, object: 'Pod shop/web-6b8f9c-x2k4q', field: 'spec.containers[0].name', reason: /must not be empty/ },
  { name: 'containers null', form: runningPod.python, validate: validatePod, edits: { 'spec.containers': null }, object: 'Pod shop/web-6b8f9c-x2k4q', field: 'spec.containers', reason: /required/ },
  { name: 'a pod IP entry ""', form: runningPod.clientGo, validate: validatePod, edits: { 'status.podIPs[0].ip': '', 'status.podIP': '' }, object: 'Pod shop/web-6b8f9c-x2k4q', field: 'status.podIPs[0].ip', reason: /valid IP/ },
  { name: 'a Node named ""', form: readyNode.clientGo, validate: validateNode, edits: { 'metadata.name': '' }, object: 'item 0 (kind Node)', field: 'metadata.name', reason: /must not be empty/ },
  { name: 'a namespace on a Node', form: readyNode.python, validate: validateNode, edits: { 'metadata.namespace': 'default' }, object: 'Node node-a1', field: 'metadata.namespace', reason: /cluster-scoped/ },
  { name: 'an Endpoints port 0', form: selectorlessEndpoints.clientGo, validate: validateEndpoints, edits: { 'subsets[0].ports[0].port': 0 }, object: 'Endpoints data/legacy-db', field: 'subsets[0].ports[0].port', reason: /between 1 and 65535/ },
  { name: 'a label key ""', form: readService.clientGo, validate: validateService, edits: { 'metadata.labels[""]': 'x' }, object: 'Service shop/web', field: 'metadata.labels[""]', reason: /must not be empty/ },
  { name: 'a kind that is not the validator\'s', form: readService.python, validate: validateService, edits: { kind: 'Pod' }, object: 'Service shop/web', field: 'kind', reason: /must be Service/ },
];

describe('what the API server refuses is refused, naming object and field', () => {
  for (const tc of rejected) {
    it(tc.name, () => {
      const err = thrownBy(() => validateFrozen(tc.validate, patched(tc.form, tc.edits)));
      expect(err).toBeInstanceOf(InvalidObjectError);
      const e = err as InvalidObjectError;
      expect({ object: e.object, field: e.field }).toEqual({ object: tc.object, field: tc.field });
      expect(e.reason).toMatch(tc.reason);
      expect(e.message).not.toMatch(/[\n\r]/);
    });
  }
});
