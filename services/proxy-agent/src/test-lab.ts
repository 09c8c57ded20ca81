// A small routed cluster in network namespaces, for the real-kernel tests (never used by
// production code). Every node is a namespace with ip_forward=1 on a shared bridge (the
// "fabric", its own namespace); every pod is a namespace on a veth pair to its node with a
// /32 address and a default route, running a TCP server that answers with its name. Nodes
// route other nodes' pod ranges over the fabric and the service range onto it, so processes
// on a node can reach ClusterIPs. A client namespace on the fabric plays an outside client.
//
//   pod 10.244.<n>.<p+1>/32 ── veth ── node (10.244.<n>.1 on each pod veth; 192.168.77.<10+n>)
//                                           └── fabric bridge ── client 192.168.77.100

import { spawnSync } from 'node:child_process';
import { NetnsLabBase, connectTally, ip as sh, missingTools, netnsAddFailure } from '@slicemesh/netfilter/testing/netns-lab';
import type { LabNode, LabNodeSpec, LabParts, LabPod, NetnsResources, Tally } from '@slicemesh/netfilter/testing/netns-lab';

export type { LabNode, LabNodeSpec, LabPod, Tally };

export const SERVICE_RANGE = '10.96.0.0/16';
export const POD_RANGE = '10.244.0.0/16';
export const POD_PORT = 8080;


export class NetnsLab extends NetnsLabBase<LabNode, LabPod> {
  /** Names start with `prefix` (keep it unique per test run). Throws, after cleaning up, if a step fails. */
  constructor(prefix: string, specs: readonly LabNodeSpec[]) {
    super((made) => build(made, prefix, specs), POD_PORT);
  }

  /** Opens `n` connections one after another from namespace `from` to host:port; tallies the replies. */
  connect(from: string, host: string, port: number, n = 20, timeoutMs = 1000): Promise<Tally> {
    return connectTally(from, host, port, n, timeoutMs);
  }

}

function build(made: NetnsResources, prefix: string, specs: readonly LabNodeSpec[]): LabParts<LabNode, LabPod> {
  const { fabric, client } = made.addFabric(prefix, 'cl', '192.168.77.100');
  const nodes: LabNode[] = [];
  const pods: LabPod[] = [];
  specs.forEach((spec, i) => {
    const n = i + 1;
    const node: LabNode = { name: spec.name, zone: spec.zone, ns: `${prefix}-${spec.name}`, ip: `192.168.77.${10 + n}` };
    made.plug(node.ns, `f${n}`, fabric, node.ip);
    spawnSync('ip', ['netns', 'exec', node.ns, 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
    sh(['-n', node.ns, 'route', 'add', SERVICE_RANGE, 'dev', 'fab0']);
    for (let p = 1; p <= spec.pods; p++) {
      const pod: LabPod = { name: `${spec.name}-pod${p}`, ns: `${prefix}-${spec.name}-p${p}`, ip: `10.244.${n}.${p + 1}`, node };
      made.addPod(node.ns, `p${p}`, pod.ns, pod.ip, `10.244.${n}.1`);
      pods.push(pod);
    }
    nodes.push(node);
  });
  for (const [i, node] of nodes.entries()) {
    for (const [j, other] of nodes.entries()) if (i !== j) sh(['-n', node.ns, 'route', 'add', `10.244.${j + 1}.0/24`, 'via', other.ip]);
  }
  return { client, nodes, pods };
}

/** Why the lab cannot run here (not root, no `ip netns`), or null. */
export function labUnavailableReason(): string | null {
  const failure = netnsAddFailure();
  if (failure !== null) return `cannot create network namespaces: ${failure}`;
  const tools = missingTools(['iptables-restore', 'nft']);
  return tools.length > 0 ? `missing tools: ${tools.join(', ')}` : null;
}
