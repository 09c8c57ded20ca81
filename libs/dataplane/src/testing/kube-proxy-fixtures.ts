// Renders used to prove that the kube-proxy naming mode (D.4.15) changed nothing: each entry
// is a state (and render options) the tests of this library already exercise — the golden
// cluster, the real-tools states, partial syncs, stale-chain deletion, affinity, IPv6, large
// clusters — rendered to one text. `kube-proxy-names.test.ts` compares their digests with
// the ones the renderer produced before chain names had a prefix. Test support only.

import type { DpServicePort, DpState } from '../model.ts';
import { dpEndpoint as ep, dpServicePort as svc, dpState } from './builders.ts';
import type { IptablesRenderResult, RenderIptablesOptions } from '../iptables/render.ts';

/** One render: what to render, and what it was rendered after (a partial sync's previous). */
export interface KubeProxyFixture {
  readonly name: string;
  readonly state: DpState;
  /** Options other than the naming; `previous` is replaced by the render of `after` when given. */
  readonly opts?: RenderIptablesOptions;
  /** Render this state first and pass its result as `previous`. */
  readonly after?: DpState;
}

const golden = dpState([
  svc('ns1/svc1:p80', { clusterIP: '172.30.0.41', endpoints: [ep('10.180.0.1'), ep('10.180.0.2', { isLocal: true })] }),
  svc('ns2/svc2:p80', { clusterIP: '172.30.0.42', nodePort: 3001, externalPolicyLocal: true, healthCheckNodePort: 30000, endpoints: [ep('10.180.0.3', { isLocal: true })] }),
  svc('ns3/svc3:p80', { clusterIP: '172.30.0.43' }),
]);

const v4 = dpState(
  [
    svc('ns1/web:http', { clusterIP: '172.30.0.41', endpoints: [ep('10.180.0.1'), ep('10.180.0.2'), ep('10.180.0.3')], sessionAffinityTimeoutSeconds: 300 }),
    svc('ns1/lb:http', {
      clusterIP: '172.30.0.42',
      nodePort: 30080,
      externalIPs: ['192.168.99.1'],
      loadBalancerIPs: ['1.2.3.4'],
      loadBalancerSourceRanges: ['192.168.0.0/24', '203.0.113.0/25'],
      externalPolicyLocal: true,
      healthCheckNodePort: 30000,
      endpoints: [ep('10.180.1.1', { isLocal: true }), ep('10.180.1.2')],
    }),
    svc('ns1/cluster-lb:http', { clusterIP: '172.30.0.45', loadBalancerIPs: ['1.2.3.5'], externalIPs: ['192.168.99.2'], nodePort: 30082, endpoints: [ep('10.180.4.1')] }),
    svc('ns1/dns:dns', { clusterIP: '172.30.0.10', port: 53, protocol: 'UDP', endpoints: [ep('10.180.2.1', { port: 53 })] }),
    svc('ns1/sctp:s', { clusterIP: '172.30.0.11', port: 9, protocol: 'SCTP', endpoints: [ep('10.180.2.2', { port: 9 })] }),
    svc('ns1/empty:http', { clusterIP: '172.30.0.43', nodePort: 30081, externalIPs: ['192.168.99.3'] }),
    svc('ns1/itp:http', { clusterIP: '172.30.0.44', internalPolicyLocal: true, endpoints: [ep('10.180.3.1')] }),
    svc('ns1/itp-none:http', { clusterIP: '172.30.0.46', internalPolicyLocal: true, endpoints: [ep('10.180.3.2')] }),
    svc('ns1/etp-none:http', { clusterIP: '172.30.0.47', nodePort: 30083, externalPolicyLocal: true, endpoints: [ep('10.180.3.3')] }),
    svc('ns1/unnamed:', { clusterIP: '172.30.0.48', endpoints: [ep('10.180.3.4')] }),
  ],
  { nodeIPs: [], primaryNodeIP: '192.168.0.2' },
);

const swap = (s: DpState, name: string, f: (sp: DpServicePort) => DpServicePort | null): DpState => ({
  ...s,
  servicePorts: s.servicePorts.flatMap((sp) => {
    if (sp.servicePortName !== name) return [sp];
    const next = f(sp);
    return next === null ? [] : [next];
  }),
});

const v4next = swap(v4, 'ns1/web:http', (sp) => ({ ...sp, clusterEndpoints: [ep('10.180.0.1'), ep('10.180.0.9')] }));
const v4gone = swap(v4, 'ns1/lb:http', () => null);
const v4empty = swap(v4, 'ns1/dns:dns', (sp) => ({ ...sp, clusterEndpoints: [], hasAnyEndpoints: false }));

const v6 = dpState(
  [
    svc('ns1/web:http', { clusterIP: 'fd00:172::41', nodePort: 30080, endpoints: [ep('fd00:10::1'), ep('fd00:10::2')] }),
    svc('ns1/lb:http', { clusterIP: 'fd00:172::42', loadBalancerIPs: ['2001:db8::1234'], loadBalancerSourceRanges: ['2001:db8:1::/48'], externalPolicyLocal: true, endpoints: [ep('fd00:10::3', { isLocal: true })] }),
  ],
  { family: 'IPv6', podCIDR: 'fd00:10::/64', nodeIPs: ['fd00:192:168::2'] },
);

const many = (n: number, base: string) => Array.from({ length: n }, (_, i) => ep(`${base}${Math.floor(i / 250)}.${(i % 250) + 1}`));

export const KUBE_PROXY_FIXTURES: readonly KubeProxyFixture[] = [
  { name: 'golden cluster, full script with jumps', state: golden, opts: { includeJumps: true } },
  { name: 'golden cluster, sync script', state: golden },
  { name: 'an empty node', state: dpState([]), opts: { includeJumps: true } },
  { name: 'every entry point, full script with jumps', state: v4, opts: { includeJumps: true } },
  { name: 'every entry point, node IPs and masquerade-all', state: { ...v4, nodeIPs: ['192.168.0.2', '192.168.1.2'], masqueradeAll: true, podCIDR: null } },
  { name: 'every entry point, another mark bit', state: { ...v4, masqueradeBit: 3 } },
  { name: 'partial: an endpoint change', state: v4next, after: v4, opts: { changedServicePorts: new Set(['ns1/web:http/TCP']) } },
  { name: 'partial: a deleted service', state: v4gone, after: v4, opts: { changedServicePorts: new Set(['ns1/lb']) } },
  { name: 'partial: losing every endpoint', state: v4empty, after: v4, opts: { changedServicePorts: new Set(['ns1/dns:dns']) } },
  { name: 'partial: nothing changed', state: v4, after: v4, opts: { changedServicePorts: new Set() } },
  {
    name: 'full sync deleting stale chains found on the node',
    state: v4next,
    opts: { previous: { chains: { filter: [], nat: ['KUBE-SERVICES', 'KUBE-SVC-GONEGONEGONEGONE', 'KUBE-SEP-GONEGONEGONEGONE', 'KUBE-FW-GONEGONEGONEGONE', 'SOMEONE-ELSES'] } } },
  },
  { name: 'IPv6, full script with jumps', state: v6, opts: { includeJumps: true } },
  { name: 'large cluster', state: dpState([svc('ns1/a:p', { endpoints: many(600, '10.1.') }), svc('ns1/b:p', { clusterIP: '172.30.0.42', sessionAffinityTimeoutSeconds: 60, endpoints: many(500, '10.2.') })]) },
];

/** What a fixture's render produced, as one text: the script and the bookkeeping a sync relies on. */
export function fixtureText(r: IptablesRenderResult): string {
  return [
    r.script,
    JSON.stringify({ chains: r.chains, ruleCounts: r.ruleCounts, fullSync: r.fullSync, rewritten: r.rewrittenChains, deleted: r.deletedChains, large: r.largeClusterMode }),
  ].join('\n--\n');
}
