import { describe, expect, it } from 'vitest';
import type { EndpointSlicePort, Pod, Service, ServicePort } from '@slicemesh/model';
import { deepFreeze, makePod, makeService } from '@slicemesh/testing';
import { endpointPortsForPod, findTargetPort, portsArePodIndependent } from './target-port.ts';

const sidecar = { name: 'proxy', restartPolicy: 'Always', ports: [{ name: 'http', containerPort: 15001, protocol: 'TCP' as const }] };
const plainInit = { name: 'init', ports: [{ name: 'http', containerPort: 9999, protocol: 'TCP' as const }] };

const cases: { name: string; pod: Pod; port: ServicePort; want: number | null }[] = [
  { name: 'A.5.1 numeric targetPort is used as is, no container port needed', pod: makePod('p', { containerPorts: [] }), port: { port: 80, targetPort: 1234 }, want: 1234 },
  { name: 'A.5.1 absent targetPort means the service port', pod: makePod('p'), port: { port: 80 }, want: 80 },
  { name: 'A.5.1 named targetPort resolves by name and protocol', pod: makePod('p', { containerPorts: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }] }), port: { port: 80, targetPort: 'http', protocol: 'TCP' }, want: 8080 },
  { name: 'A.5.1 protocol must match too', pod: makePod('p', { containerPorts: [{ name: 'dns', containerPort: 53, protocol: 'TCP' }] }), port: { port: 53, targetPort: 'dns', protocol: 'UDP' }, want: null },
  { name: 'A.5.1 absent protocols default to TCP on both sides', pod: makePod('p', { containerPorts: [{ name: 'http', containerPort: 8081 }] }), port: { port: 80, targetPort: 'http' }, want: 8081 },
  {
    name: 'A.5.1 the first matching regular container wins',
    pod: makePod('p', { containerPorts: [{ name: 'x', containerPort: 1 }, { name: 'http', containerPort: 2 }, { name: 'http', containerPort: 3 }] }),
    port: { port: 80, targetPort: 'http' },
    want: 2,
  },
  { name: 'A.5.1 a sidecar (init container with restartPolicy Always) is used when no regular container has the port', pod: makePod('p', { containerPorts: [], initContainers: [sidecar] }), port: { port: 80, targetPort: 'http' }, want: 15001 },
  { name: 'A.5.1 regular containers win over sidecars', pod: makePod('p', { initContainers: [sidecar] }), port: { port: 80, targetPort: 'http' }, want: 8080 },
  { name: 'A.5.1 a plain init container is never used', pod: makePod('p', { containerPorts: [], initContainers: [plainInit] }), port: { port: 80, targetPort: 'http' }, want: null },
  { name: 'A.5.1 an unknown name does not resolve', pod: makePod('p'), port: { port: 80, targetPort: 'metrics' }, want: null },
];

describe('findTargetPort', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      expect(findTargetPort(deepFreeze(tc.pod), deepFreeze(tc.port))).toBe(tc.want);
    });
  }
});

const portCases: { name: string; service: Service; pod: Pod; want: EndpointSlicePort[] }[] = [
  {
    name: 'A.5.2 name ("" when unnamed), resolved port, protocol and appProtocol of the service port',
    service: makeService('s', { ports: [{ port: 80, targetPort: 8080, protocol: 'TCP', appProtocol: 'http' }, { name: 'dns', port: 53, protocol: 'UDP' }] }),
    pod: makePod('p'),
    want: [
      { name: '', port: 8080, protocol: 'TCP', appProtocol: 'http' },
      { name: 'dns', port: 53, protocol: 'UDP' },
    ],
  },
  {
    name: 'A.5.1 an unresolvable named port is silently omitted for that pod',
    service: makeService('s', { ports: [{ name: 'a', port: 80, targetPort: 'http' }, { name: 'b', port: 81, targetPort: 'nope' }] }),
    pod: makePod('p'),
    want: [{ name: 'a', port: 8080, protocol: 'TCP' }],
  },
  { name: 'A.5.3 headless service without ports -> []', service: makeService('s', { clusterIP: 'None', ports: [] }), pod: makePod('p'), want: [] },
  { name: 'A.5.3 any service without ports -> []', service: makeService('s', { ports: [] }), pod: makePod('p'), want: [] },
];

describe('endpointPortsForPod', () => {
  for (const tc of portCases) {
    it(tc.name, () => {
      expect(endpointPortsForPod(deepFreeze(tc.service), deepFreeze(tc.pod))).toEqual(tc.want);
    });
  }
  it('knows when ports cannot differ between pods (no named targetPort)', () => {
    expect(portsArePodIndependent(makeService('s', { ports: [{ port: 80, targetPort: 8080 }, { port: 81 }] }))).toBe(true);
    expect(portsArePodIndependent(makeService('s', { ports: [{ port: 80, targetPort: 'http' }] }))).toBe(false);
  });
});
