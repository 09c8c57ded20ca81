import { describe, expect, it } from 'vitest';
import type { EndpointSlice, Node, Service } from '@slicemesh/model';
import { ANNOTATION_TOPOLOGY_MODE as TM, MANAGED_BY_MIRRORING } from '@slicemesh/model';
import { deepFreeze, makeService, makeSlice } from '@slicemesh/testing';
import type { HintsDecision } from '@slicemesh/topology';
import { hintCluster } from './hint-cluster.ts';
import { ep, hintsOf, zoneNodes } from '../../topology/src/test-endpoints.ts';

const nodes = zoneNodes({ 'zone-a': 1000, 'zone-b': 1000 });
const abEndpoints = [ep('10.0.0.1', { zone: 'zone-a' }), ep('10.0.0.2', { zone: 'zone-b' })];

interface Case {
  name: string;
  nodes: Node[];
  slices: EndpointSlice[];
  services?: Service[];
  hints: string[][];
  decisions: Partial<HintsDecision>[];
  reasons: RegExp[];
}

describe('computeHints (slicemesh hints core)', () => {
  const cases: Case[] = [
    { name: 'empty input: no slices, no decisions', nodes: [], slices: [], hints: [], decisions: [], reasons: [] },
    {
      name: 'a group without its Service is treated as topology-mode: Auto',
      nodes,
      slices: [makeSlice('web-1', abEndpoints)],
      hints: [['10.0.0.1:zone-a', '10.0.0.2:zone-b']],
      decisions: [{ service: 'default/web', addressType: 'IPv4', enabled: true, mode: 'Auto' }],
      reasons: [/^Service default\/web was not supplied, so it is treated as annotated service.kubernetes.io\/topology-mode: Auto; .*CPU-proportional zone hints/],
    },
    {
      name: 'a supplied Service without hints config strips existing hints and says nothing asked',
      nodes,
      slices: [makeSlice('web-1', [ep('10.0.0.1', { zone: 'zone-a', hz: ['zone-a'] })])],
      services: [makeService('web')],
      hints: [['10.0.0.1:-']],
      decisions: [{ service: 'default/web', enabled: false, mode: 'None', event: null }],
      reasons: [/^nothing asked for hints/],
    },
    {
      name: 'a supplied Service with PreferSameNode gets zone and node hints',
      nodes,
      slices: [makeSlice('web-1', [ep('10.0.0.1', { zone: 'zone-a', node: 'n1' })])],
      services: [makeService('web', { spec: { trafficDistribution: 'PreferSameNode' } })],
      hints: [['10.0.0.1:zone-a|n1']],
      decisions: [{ enabled: true, mode: 'PreferSameNode', event: null }],
      reasons: [/same-node/],
    },
    {
      name: 'groups by namespace, service-name label and address type; decisions sorted; output keeps input order',
      nodes,
      slices: [
        makeSlice('web-v6', [ep('fd00::1', { zone: 'zone-a' }), ep('fd00::2', { zone: 'zone-b' })], { addressType: 'IPv6' }),
        makeSlice('web-1', [ep('10.0.0.1', { zone: 'zone-a' })]),
        makeSlice('web-2', [ep('10.0.0.2', { zone: 'zone-b' })]),
        makeSlice('api-1', [ep('10.1.0.1', { zone: 'zone-a' })], { service: 'api', namespace: 'other' }),
      ],
      hints: [['fd00::1:zone-a', 'fd00::2:zone-b'], ['10.0.0.1:zone-a'], ['10.0.0.2:zone-b'], ['10.1.0.1:-']],
      decisions: [
        { service: 'default/web', addressType: 'IPv4', enabled: true, event: { type: 'Normal', reason: 'TopologyAwareHintsEnabled', message: 'Topology Aware Hints has been enabled, addressType: IPv4' } },
        { service: 'default/web', addressType: 'IPv6', enabled: true, event: null },
        {
          service: 'other/api',
          addressType: 'IPv4',
          enabled: false,
          event: { type: 'Warning', reason: 'TopologyAwareHintsDisabled', message: 'Insufficient number of endpoints (1 endpoints, 2 zones), addressType: IPv4' },
        },
      ],
      reasons: [/for 2 ready endpoints/, /for 2 ready endpoints/, /1 ready endpoint cannot cover 2 zones/],
    },
    {
      name: 'insufficient nodes: every group refused with the node reason',
      nodes: [],
      slices: [makeSlice('web-1', [ep('10.0.0.1', { zone: 'zone-a', hz: ['zone-a'] })])],
      hints: [['10.0.0.1:-']],
      decisions: [
        {
          enabled: false,
          event: { type: 'Warning', reason: 'TopologyAwareHintsDisabled', message: 'Insufficient Node information: allocatable CPU or zone not specified on one or more nodes, addressType: IPv4' },
        },
      ],
      reasons: [/node information is insufficient: no nodes are known; removed hints from 1 endpoint, rewriting 1 unchanged slice$/],
    },
    {
      name: 'slices managed by another controller are left untouched and explained',
      nodes,
      slices: [makeSlice('m-1', [ep('10.0.0.1', { zone: 'zone-a', hz: ['zone-z'] })], { service: 'legacy', managedBy: MANAGED_BY_MIRRORING })],
      hints: [['10.0.0.1:zone-z']],
      decisions: [{ service: 'default/legacy', enabled: false, event: null, mode: 'Auto' }],
      reasons: [/every IPv4 slice \(1\) is managed by another controller than endpointslice-controller.k8s.io/],
    },
    {
      name: 'slices without a service-name label are passed through with no decision',
      nodes,
      slices: [{ ...makeSlice('x', [ep('10.0.0.1', { zone: 'zone-a', hz: ['zone-z'] })]), metadata: { name: 'x', namespace: 'default' } }],
      hints: [['10.0.0.1:zone-z']],
      decisions: [],
      reasons: [],
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const input = deepFreeze({ nodes: tc.nodes, slices: tc.slices, ...(tc.services ? { services: tc.services } : {}) });
      const got = hintCluster(input);
      expect(got.slices.map(hintsOf)).toEqual(tc.hints);
      expect(got.decisions).toHaveLength(tc.decisions.length);
      tc.decisions.forEach((d, i) => expect(got.decisions[i]).toMatchObject(d));
      tc.reasons.forEach((re, i) => expect(got.decisions[i]?.reason).toMatch(re));
    });
  }

  it('slices whose hints are already right come back as the same objects', () => {
    const right = makeSlice('web-1', [ep('10.0.0.1', { zone: 'zone-a', hz: ['zone-a'] }), ep('10.0.0.2', { zone: 'zone-b', hz: ['zone-b'] })]);
    const got = hintCluster(deepFreeze({ nodes, slices: [right], services: [makeService('web', { annotations: { [TM]: 'auto' } })] }));
    expect(got.slices[0]).toBe(right);
    expect(got.decisions[0]?.reason).toMatch(/1 unchanged slice kept its hints, 0 rewritten/);
  });

  it('a group mixing own and foreign slices hints only its own and says so', () => {
    const own = makeSlice('web-1', abEndpoints);
    const foreign = makeSlice('web-m', [ep('10.0.0.9', { zone: 'zone-a' })], { managedBy: 'someone-else' });
    const got = hintCluster(deepFreeze({ nodes, slices: [own, foreign] }));
    expect(got.slices[1]).toBe(foreign);
    expect(got.slices.map(hintsOf)[0]).toEqual(['10.0.0.1:zone-a', '10.0.0.2:zone-b']);
    expect(got.decisions[0]?.reason).toMatch(/; 1 slice managed by another controller left untouched$/);
  });

  it('managedBy selects which controller the slices must belong to', () => {
    const mirrored = makeSlice('m-1', abEndpoints, { managedBy: MANAGED_BY_MIRRORING });
    const got = hintCluster(deepFreeze({ nodes, slices: [mirrored], managedBy: MANAGED_BY_MIRRORING }));
    expect(got.decisions[0]?.enabled).toBe(true);
  });
});
