import { LABEL_ZONE } from '@slicemesh/model';
import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { endpointInfo as ep, policyPort } from '../testing/builders.ts';
import type { PolicyOpts } from '../testing/builders.ts';
import { categorizeEndpoints } from './categorize-endpoints.ts';
import type { EndpointInfo } from './merge-endpoints.ts';

const zoneA = { [LABEL_ZONE]: 'zone-a' };

interface Case {
  readonly name: string;
  readonly policy?: PolicyOpts;
  readonly labels?: Record<string, string>;
  readonly gate?: boolean;
  readonly endpoints: readonly EndpointInfo[];
  /** null = the port does not use this policy; [] = uses it but has none. */
  readonly cluster: readonly string[] | null;
  readonly local: readonly string[] | null;
  /** Defaults to whichever of cluster/local is the only non-null one. */
  readonly all?: readonly string[];
  /** Defaults to "all is non-empty". */
  readonly any?: boolean;
}

// Four ready endpoints hinted for zones a, b, c, a.
const abca = [
  ep('10.1.2.3:80', { forZones: ['zone-a'] }),
  ep('10.1.2.4:80', { forZones: ['zone-b'] }),
  ep('10.1.2.5:80', { forZones: ['zone-c'] }),
  ep('10.1.2.6:80', { forZones: ['zone-a'] }),
];
const every = ['10.1.2.3:80', '10.1.2.4:80', '10.1.2.5:80', '10.1.2.6:80'];

const cases: Case[] = [
  // D.3.1 / D.3.2 zone hints
  { name: 'D.3.2 zone mode keeps the ready endpoints hinted for the node zone', labels: zoneA, endpoints: abca, cluster: ['10.1.2.3:80', '10.1.2.6:80'], local: null },
  { name: 'F.11 a node without zone label never filters', labels: {}, endpoints: abca, cluster: every, local: null },
  { name: 'F.11 an empty zone label never filters', labels: { [LABEL_ZONE]: '' }, endpoints: abca, cluster: every, local: null },
  { name: 'F.11 node labels absent altogether never filter', endpoints: abca, cluster: every, local: null },
  {
    name: 'D.3.1 no endpoint hinted for the node zone: no filtering',
    labels: { [LABEL_ZONE]: 'zone-z' },
    endpoints: abca,
    cluster: every,
    local: null,
  },
  {
    name: 'F.11 one ready endpoint without a zone hint disables zone filtering',
    labels: zoneA,
    endpoints: [ep('10.1.2.3:80', { forZones: ['zone-a'] }), ep('10.1.2.4:80', { forZones: ['zone-b'] }), ep('10.1.2.5:80'), ep('10.1.2.6:80', { forZones: ['zone-a'] })],
    cluster: every,
    local: null,
  },
  {
    name: 'D.3.1 an unready endpoint without hints does not disable zone filtering',
    labels: zoneA,
    endpoints: [ep('10.1.2.3:80', { forZones: ['zone-a'] }), ep('10.1.2.4:80', { forZones: ['zone-b'] }), ep('10.1.2.5:80', { ready: false })],
    cluster: ['10.1.2.3:80'],
    local: null,
  },
  {
    name: 'D.3.2 an unready endpoint hinted for the zone is not selected',
    labels: zoneA,
    endpoints: [...abca.slice(0, 3), ep('10.1.2.6:80', { forZones: ['zone-a'], ready: false })],
    cluster: ['10.1.2.3:80'],
    local: null,
  },
  {
    name: 'D.3.1 only unready endpoints hinted for the zone: no filtering, ready ones elsewhere used',
    labels: zoneA,
    endpoints: [
      ep('10.1.2.3:80', { forZones: ['zone-a'], ready: false }),
      ep('10.1.2.4:80', { forZones: ['zone-b'] }),
      ep('10.1.2.5:80', { forZones: ['zone-c'] }),
      ep('10.1.2.6:80', { forZones: ['zone-a'], ready: false }),
    ],
    cluster: ['10.1.2.4:80', '10.1.2.5:80'],
    local: null,
  },
  {
    name: 'D.3.2 several zone hints per endpoint: any endpoint naming the zone is selected',
    labels: { [LABEL_ZONE]: 'zone-c' },
    endpoints: [
      ep('10.1.2.3:80', { forZones: ['zone-a', 'zone-b', 'zone-c'] }),
      ep('10.1.2.4:80', { forZones: ['zone-b', 'zone-c'] }),
      ep('10.1.2.5:80', { forZones: ['zone-b', 'zone-d'] }),
      ep('10.1.2.6:80', { forZones: ['zone-c'] }),
    ],
    cluster: ['10.1.2.3:80', '10.1.2.4:80', '10.1.2.6:80'],
    local: null,
  },
  // D.3.1 node hints (PreferSameNode)
  {
    name: 'D.3.1 node mode: every ready endpoint node-hinted and one for this node',
    labels: zoneA,
    endpoints: [
      ep('10.0.0.1:80', { forZones: ['zone-a'], forNodes: ['node-1'] }),
      ep('10.0.0.2:80', { forZones: ['zone-a'], forNodes: ['node-2'] }),
      ep('10.0.0.3:80', { forZones: ['zone-b'], forNodes: ['node-3'] }),
    ],
    cluster: ['10.0.0.1:80'],
    local: null,
  },
  {
    name: 'C.6 node hints are ignored with the PreferSameTrafficDistribution gate off',
    labels: zoneA,
    gate: false,
    endpoints: [
      ep('10.0.0.1:80', { forZones: ['zone-a'], forNodes: ['node-1'] }),
      ep('10.0.0.2:80', { forZones: ['zone-a'], forNodes: ['node-2'] }),
      ep('10.0.0.3:80', { forZones: ['zone-b'], forNodes: ['node-3'] }),
    ],
    cluster: ['10.0.0.1:80', '10.0.0.2:80'],
    local: null,
  },
  {
    name: 'D.3.1 one ready endpoint without a node hint falls back to zone mode',
    labels: zoneA,
    endpoints: [
      ep('10.0.0.1:80', { forZones: ['zone-a'], forNodes: ['node-1'] }),
      ep('10.0.0.2:80', { forZones: ['zone-a'] }),
      ep('10.0.0.3:80', { forZones: ['zone-b'], forNodes: ['node-3'] }),
    ],
    cluster: ['10.0.0.1:80', '10.0.0.2:80'],
    local: null,
  },
  {
    name: 'D.3.1 node hints complete but none for this node: zone mode',
    labels: zoneA,
    endpoints: [ep('10.0.0.2:80', { forZones: ['zone-a'], forNodes: ['node-2'] }), ep('10.0.0.3:80', { forZones: ['zone-b'], forNodes: ['node-3'] })],
    cluster: ['10.0.0.2:80'],
    local: null,
  },
  {
    name: 'D.3.1 node hints without zone hints, none for this node: no filtering',
    labels: zoneA,
    endpoints: [ep('10.0.0.2:80', { forNodes: ['node-2'] }), ep('10.0.0.3:80', { forNodes: ['node-3'] })],
    cluster: ['10.0.0.2:80', '10.0.0.3:80'],
    local: null,
  },
  // D.3.2 terminating fallback
  {
    name: 'D.3.2 no ready endpoint: cluster uses the serving terminating ones',
    endpoints: [
      ep('10.0.0.0:80', { ready: false, serving: true, terminating: true, isLocal: true }),
      ep('10.0.0.1:80', { ready: false, serving: true, terminating: true }),
      ep('10.0.0.2:80', { ready: false, serving: false, terminating: true }),
    ],
    cluster: ['10.0.0.0:80', '10.0.0.1:80'],
    local: null,
  },
  {
    name: 'D.3.2 terminating fallback ignores topology hints',
    labels: zoneA,
    endpoints: [ep('10.0.0.0:80', { ready: false, terminating: true, forZones: ['zone-b'] }), ep('10.0.0.1:80', { ready: false, terminating: true, forZones: ['zone-a'] })],
    cluster: ['10.0.0.0:80', '10.0.0.1:80'],
    local: null,
  },
  {
    name: 'D.3.2 nothing ready or serving: cluster is empty, not null',
    endpoints: [ep('10.0.0.0:80', { ready: false, serving: false }), ep('10.0.0.1:80', { ready: false, serving: false })],
    cluster: [],
    local: null,
    any: false,
  },
  { name: 'D.3.6 no endpoints at all: the used policy gets [], hasAny false', endpoints: [], cluster: [], local: null, any: false },
  {
    name: 'D.3.2 some ready: not-ready endpoints are dropped',
    endpoints: [ep('10.0.0.0:80', { ready: false }), ep('10.0.0.1:80')],
    cluster: ['10.0.0.1:80'],
    local: null,
  },
  // D.3.3 local
  {
    name: 'D.3.3 eTP Local: topology is ignored for local endpoints, reachable is the union',
    labels: zoneA,
    policy: { type: 'NodePort', etp: 'Local' },
    endpoints: [
      ep('10.1.2.3:80', { forZones: ['zone-a'], isLocal: true }),
      ep('10.1.2.4:80', { forZones: ['zone-b'], isLocal: true }),
      ep('10.1.2.5:80', { forZones: ['zone-c'] }),
      ep('10.1.2.6:80', { forZones: ['zone-a'] }),
    ],
    cluster: ['10.1.2.3:80', '10.1.2.6:80'],
    local: ['10.1.2.3:80', '10.1.2.4:80'],
    all: ['10.1.2.3:80', '10.1.2.4:80', '10.1.2.6:80'],
  },
  {
    name: 'D.3.3 iTP Local on a NodePort: topology ignored for local endpoints',
    labels: zoneA,
    policy: { type: 'NodePort', itp: 'Local' },
    endpoints: [
      ep('10.1.2.3:80', { forZones: ['zone-a'], isLocal: true }),
      ep('10.1.2.4:80', { forZones: ['zone-b'], isLocal: true }),
      ep('10.1.2.5:80', { forZones: ['zone-c'] }),
      ep('10.1.2.6:80', { forZones: ['zone-a'] }),
    ],
    cluster: ['10.1.2.3:80', '10.1.2.6:80'],
    local: ['10.1.2.3:80', '10.1.2.4:80'],
    all: ['10.1.2.3:80', '10.1.2.4:80', '10.1.2.6:80'],
  },
  {
    name: 'D.3.6 iTP Local internal-only with no endpoints: cluster null, local []',
    policy: { itp: 'Local' },
    endpoints: [],
    cluster: null,
    local: [],
    any: false,
  },
  {
    name: 'D.3.4 iTP Local, all endpoints remote: nothing reachable but hasAny is true',
    policy: { itp: 'Local' },
    endpoints: [ep('10.0.0.0:80'), ep('10.0.0.1:80')],
    cluster: null,
    local: [],
    any: true,
  },
  {
    name: 'D.3.3 iTP Local, some endpoints local',
    policy: { itp: 'Local' },
    endpoints: [ep('10.0.0.0:80', { isLocal: true }), ep('10.0.0.1:80')],
    cluster: null,
    local: ['10.0.0.0:80'],
  },
  {
    name: 'D.3.3 local falls back to local serving terminating endpoints',
    policy: { type: 'NodePort', etp: 'Local' },
    endpoints: [
      ep('10.0.0.0:80'),
      ep('10.0.0.1:80', { ready: false, serving: false, isLocal: true }),
      ep('10.0.0.2:80', { ready: false, serving: true, terminating: true, isLocal: true }),
      ep('10.0.0.3:80', { ready: false, serving: true, terminating: true }),
    ],
    cluster: ['10.0.0.0:80'],
    local: ['10.0.0.2:80'],
    all: ['10.0.0.0:80', '10.0.0.2:80'],
  },
  {
    name: 'D.3.3 a local ready endpoint beats local terminating ones',
    policy: { itp: 'Local' },
    endpoints: [ep('10.0.0.1:80', { isLocal: true }), ep('10.0.0.2:80', { ready: false, terminating: true, isLocal: true })],
    cluster: null,
    local: ['10.0.0.1:80'],
  },
  {
    name: 'D.3.4 all endpoints remote and terminating: local [] but hasAny true',
    policy: { type: 'NodePort', itp: 'Local', etp: 'Local' },
    endpoints: [ep('10.0.0.0:80', { ready: false, terminating: true }), ep('10.0.0.1:80', { ready: false, terminating: true })],
    cluster: ['10.0.0.0:80', '10.0.0.1:80'],
    local: [],
    all: ['10.0.0.0:80', '10.0.0.1:80'],
  },
  {
    name: 'D.1.4 iTP Local with eTP Cluster on a NodePort uses both policies',
    policy: { type: 'NodePort', itp: 'Local' },
    endpoints: [ep('10.0.0.0:80', { isLocal: true }), ep('10.0.0.1:80')],
    cluster: ['10.0.0.0:80', '10.0.0.1:80'],
    local: ['10.0.0.0:80'],
    all: ['10.0.0.0:80', '10.0.0.1:80'],
  },
  {
    name: 'D.1.3 eTP Local is ignored when the service is not externally accessible',
    policy: { etp: 'Local' },
    endpoints: [ep('10.0.0.0:80'), ep('10.0.0.1:80', { isLocal: true })],
    cluster: ['10.0.0.0:80', '10.0.0.1:80'],
    local: null,
  },
  {
    name: 'D.3.5 cluster filtered by topology, local ready: reachable is the union',
    labels: zoneA,
    policy: { type: 'NodePort', etp: 'Local' },
    endpoints: [
      ep('10.0.0.0:80', { forZones: ['zone-a'], isLocal: true }),
      ep('10.0.0.1:80', { forZones: ['zone-b'], isLocal: true }),
      ep('10.0.0.2:80', { forZones: ['zone-a'] }),
      ep('10.0.0.3:80', { forZones: ['zone-b'] }),
    ],
    cluster: ['10.0.0.0:80', '10.0.0.2:80'],
    local: ['10.0.0.0:80', '10.0.0.1:80'],
    all: ['10.0.0.0:80', '10.0.0.1:80', '10.0.0.2:80'],
  },
];

describe('categorizeEndpoints', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const endpoints = deepFreeze(tc.endpoints.map((e) => ({ ...e })));
      const got = categorizeEndpoints(endpoints, policyPort(tc.policy), 'node-1', tc.labels, tc.gate === undefined ? {} : { preferSameNodeGate: tc.gate });
      const names = (l: readonly EndpointInfo[] | null) => (l === null ? null : l.map((e) => e.endpoint));
      expect(names(got.clusterEndpoints)).toEqual(tc.cluster);
      expect(names(got.localEndpoints)).toEqual(tc.local);
      const all = tc.all ?? (tc.cluster === null ? tc.local : tc.local === null ? tc.cluster : null);
      expect(all).not.toBeNull();
      expect(names(got.allReachableEndpoints)).toEqual(all);
      expect(got.hasAnyEndpoints).toBe(tc.any ?? (all ?? []).length > 0);
    });
  }
});
