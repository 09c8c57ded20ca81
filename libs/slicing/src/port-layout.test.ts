import { describe, expect, it } from 'vitest';
import type { Pod, Service } from '@slicemesh/model';
import { deepFreeze, makePod, makeService } from '@slicemesh/testing';
import { PortLayouts } from './port-layout.ts';
import { portMapKey, sortPorts } from './port-map-key.ts';
import { endpointPortsForPod } from './target-port.ts';

const named = deepFreeze(
  makeService('web', {
    ports: [
      { name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' },
      { name: 'dns', port: 53, targetPort: 53, protocol: 'UDP' },
      { name: 'metrics', port: 9090, targetPort: 'metrics', protocol: 'TCP', appProtocol: 'http' },
    ],
  }),
);
const oneNamed = deepFreeze(makeService('one', { ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }] }));
const numeric = deepFreeze(makeService('num', { ports: [{ name: 'http', port: 80, targetPort: 8080 }] }));
const portless = deepFreeze(makeService('none', { clusterIP: 'None', ports: [] }));

const withPorts = (name: string, ports: { name?: string; containerPort: number; protocol?: 'TCP' | 'UDP' }[], init?: Pod['spec']['initContainers']): Pod =>
  deepFreeze(makePod(name, { containerPorts: ports, ...(init ? { initContainers: init } : {}) }));

const pods: readonly Pod[] = [
  withPorts('both', [{ name: 'http', containerPort: 8080 }, { name: 'metrics', containerPort: 9100 }]),
  withPorts('http-only', [{ name: 'http', containerPort: 8080 }]),
  withPorts('other-http', [{ name: 'http', containerPort: 8081 }, { name: 'metrics', containerPort: 9100 }]),
  withPorts('udp-http', [{ name: 'http', containerPort: 8080, protocol: 'UDP' }]),
  withPorts('sidecar-metrics', [{ name: 'http', containerPort: 8080 }], [{ name: 'agent', restartPolicy: 'Always', ports: [{ name: 'metrics', containerPort: 9200 }] }]),
  withPorts('init-not-sidecar', [{ name: 'http', containerPort: 8080 }], [{ name: 'setup', ports: [{ name: 'metrics', containerPort: 9200 }] }]),
  withPorts('nothing', []),
  withPorts('zero', [{ name: 'http', containerPort: 0 }]),
  withPorts('minus-zero', [{ name: 'http', containerPort: -0 }]),
];

describe('PortLayouts: a layout equals resolving the pod on its own (A.5.1, A.5.2, A.5.4)', () => {
  for (const service of [named, oneNamed, numeric, portless]) {
    for (const pod of pods) {
      it(`${service.metadata.name} / ${pod.metadata.name}`, () => {
        const layouts = new PortLayouts(service);
        for (const p of pods) layouts.layoutFor(p); // warm the cache with every other layout first
        const got = layouts.layoutFor(pod);
        const direct = endpointPortsForPod(service, pod);
        expect(got.ports).toEqual(direct);
        // -0 and 0 are different port values; the cache must keep them apart.
        expect(got.ports.map((p) => Object.is(p.port, -0))).toEqual(direct.map((p) => Object.is(p.port, -0)));
        expect(got.sorted).toEqual(sortPorts(direct));
        expect(got.key).toBe(portMapKey(direct));
      });
    }
  }
});

describe('PortLayouts sharing', () => {
  const cases: readonly { name: string; service: Service; a: Pod; b: Pod; shared: boolean }[] = [
    { name: 'pods resolving to the same numbers share one layout object', service: named, a: pods[0] as Pod, b: withPorts('twin', [{ name: 'metrics', containerPort: 9100 }, { name: 'http', containerPort: 8080 }]), shared: true },
    { name: 'a different number for one named port gives another layout', service: named, a: pods[0] as Pod, b: pods[2] as Pod, shared: false },
    { name: 'an unresolved named port is not confused with any number', service: oneNamed, a: pods[6] as Pod, b: pods[7] as Pod, shared: false },
    { name: 'numeric target ports: every pod shares the one layout', service: numeric, a: pods[0] as Pod, b: pods[6] as Pod, shared: true },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const layouts = new PortLayouts(tc.service);
      expect(layouts.layoutFor(tc.a) === layouts.layoutFor(tc.b)).toBe(tc.shared);
    });
  }

  it('a container port that is not a number (invalid input) is resolved uncached, as the pod says', () => {
    const odd = deepFreeze({ ...makePod('odd'), spec: { containers: [{ name: 'main', ports: [{ name: 'http', containerPort: '8080' as unknown as number }] }] } });
    const layouts = new PortLayouts(oneNamed);
    layouts.layoutFor(pods[1] as Pod);
    expect(layouts.layoutFor(odd).ports).toEqual(endpointPortsForPod(oneNamed, odd));
  });
});
