import { LABEL_ZONE } from '@slicemesh/model';
import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import type { NodeSettings } from './dp-model.ts';
import { dpStateOf, selfNode, servicePortsFor } from './dp-model.ts';
import { endpoint, service, slice } from './test-support.ts';

const settings = (zone: string): NodeSettings => ({ nodeName: 'node-a1', zone, family: 'IPv4', nodeIPs: [], podCIDR: '10.244.0.0/16', masqueradeAll: false, masqueradeBit: 14 });

describe('selfNode', () => {
  const cases = [
    { name: 'a zoned node carries the zone label', zone: 'zone-a', want: { [LABEL_ZONE]: 'zone-a' } },
    { name: 'D.3.1 a node without zone has no zone label (zone hints never match it)', zone: '', want: {} },
  ];
  for (const tc of cases) it(tc.name, () => expect(selfNode(settings(tc.zone)).metadata.labels).toEqual(tc.want));
});

describe('servicePortsFor', () => {
  const svc = deepFreeze(service('web', '10.96.0.10'));
  const hinted = deepFreeze(
    slice('web-1', 'web', [
      endpoint('10.244.1.2', { node: 'node-a1', zone: 'zone-a', hints: ['zone-a'] }),
      endpoint('10.244.2.2', { node: 'node-b1', zone: 'zone-b', hints: ['zone-b'] }),
    ]),
  );
  const cases: { name: string; zone: string; slices: readonly ReturnType<typeof slice>[]; want: string[] | null }[] = [
    { name: 'D.3.1 a zone-a node with complete zone hints uses only zone-a endpoints', zone: 'zone-a', slices: [hinted], want: ['10.244.1.2:8080'] },
    { name: 'D.3.1 a node without zone ignores the hints', zone: '', slices: [hinted], want: ['10.244.1.2:8080', '10.244.2.2:8080'] },
    { name: 'a service without slices keeps its port with no endpoints', zone: 'zone-a', slices: [], want: [] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const ports = servicePortsFor(svc, tc.slices, selfNode(settings(tc.zone)), settings(tc.zone));
      expect(ports).toHaveLength(1);
      expect(ports[0]?.clusterIP).toBe('10.96.0.10');
      expect(ports[0]?.clusterEndpoints?.map((e) => `${e.ip}:${e.port}`)).toEqual(tc.want);
      expect(ports[0]?.clusterEndpoints?.find((e) => e.ip === '10.244.1.2')?.isLocal ?? true).toBe(true);
    });
  }

  it('a headless service programs nothing', () => {
    const headless = deepFreeze(service('db', 'None'));
    expect(servicePortsFor(headless, [], selfNode(settings('')), settings(''))).toEqual([]);
  });
});

describe('dpStateOf', () => {
  it('carries the node settings; the first node IP is the primary one', () => {
    const s = dpStateOf([], { ...settings('zone-a'), nodeIPs: ['192.168.50.11', '192.168.50.12'] });
    expect(s).toEqual({ family: 'IPv4', nodeIPs: ['192.168.50.11', '192.168.50.12'], primaryNodeIP: '192.168.50.11', podCIDR: '10.244.0.0/16', masqueradeAll: false, masqueradeBit: 14, servicePorts: [] });
  });
  it('no node IPs: no primary node IP', () => expect(dpStateOf([], settings('')).primaryNodeIP).toBeNull());
});
