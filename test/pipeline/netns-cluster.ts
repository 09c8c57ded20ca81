// A routed "cluster" made of network namespaces, for end-to-end tests with real packets.
//
//   pod ns (10.244.<n>.<p+1>/32, default via 10.244.<n>.1)
//     └─ veth ─ node ns (ip_forward=1; 10.244.<n>.1 on each pod link; 192.168.78.<10+n> on fab0)
//                 └─ veth ─ fabric ns (bridge br0) ─ veth ─ client ns (192.168.78.100)
//
// Nodes route each other's pod /24 over the fabric and the service range onto it (so a
// process on a node can reach ClusterIPs). Every pod runs a TCP server that answers with its
// name. Connections are made by one long-lived prober process per source namespace (no
// process start per measurement, so latencies measure the data plane, not `node` start-up).

import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { CONNECT_ONCE_JS, NetnsLabBase, ip, missingTools, netnsAddFailure, spawnNodeIn } from '@slicemesh/netfilter/testing/netns-lab';
import type { LabNode as BaseLabNode, LabNodeSpec, LabParts, LabPod as BaseLabPod, NetnsResources, Tally } from '@slicemesh/netfilter/testing/netns-lab';

export type { Tally };

export const SERVICE_CIDR = '10.96.0.0/16';
export const POD_CIDR = '10.244.0.0/16';
export const POD_PORT = 8080;
const FABRIC_NET = '192.168.78';

export type NodeSpec = LabNodeSpec;

export interface LabNode extends BaseLabNode {
  /** The /24 its pods' addresses come from. */
  readonly podSubnet: string;
}

export type LabPod = BaseLabPod<LabNode>;

// Reads one JSON request per line ({id, host, port, n, timeoutMs}), opens n connections one
// after another, and answers with one JSON line {id, tally}.
const PROBER = `${CONNECT_ONCE_JS}
let chain = Promise.resolve();
require('readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const r = JSON.parse(line);
  chain = chain.then(async () => {
    const tally = {};
    for (let i = 0; i < r.n; i++) { const k = await once(r.host, r.port, r.timeoutMs); tally[k] = (tally[k] || 0) + 1; }
    process.stdout.write(JSON.stringify({ id: r.id, tally }) + '\\n');
  });
});
console.log(JSON.stringify({ ready: true }));
`;

class Prober {
  readonly #child: ChildProcess;
  readonly #waiting = new Map<number, (t: Tally) => void>();
  readonly #ready: Promise<void>;
  #next = 0;
  #stderr = '';

  constructor(ns: string) {
    this.#child = spawnNodeIn(ns, PROBER, [], 'pipe');
    this.#child.stderr?.on('data', (d: Buffer) => (this.#stderr += d.toString()));
    let markReady: () => void = () => {};
    let failStart: (e: Error) => void = () => {};
    this.#ready = new Promise((resolve, reject) => {
      markReady = resolve;
      failStart = reject;
    });
    this.#ready.catch(() => {});
    this.#child.once('exit', (code) => failStart(new Error(`prober in ${ns} exited ${code}: ${this.#stderr}`)));
    createInterface({ input: this.#child.stdout! }).on('line', (line) => {
      const msg = JSON.parse(line) as { ready?: boolean; id?: number; tally?: Tally };
      if (msg.ready) return markReady();
      const done = msg.id === undefined ? undefined : this.#waiting.get(msg.id);
      if (done && msg.id !== undefined) {
        this.#waiting.delete(msg.id);
        done(msg.tally ?? {});
      }
    });
  }

  async probe(host: string, port: number, n: number, timeoutMs: number): Promise<Tally> {
    await this.#ready;
    const id = ++this.#next;
    return new Promise((resolve) => {
      this.#waiting.set(id, resolve);
      this.#child.stdin?.write(`${JSON.stringify({ id, host, port, n, timeoutMs })}\n`);
    });
  }

  stop(): void {
    if (this.#child.exitCode === null && this.#child.pid !== undefined) this.#child.kill('SIGKILL');
  }
}

export class NetnsCluster extends NetnsLabBase<LabNode, LabPod> {
  readonly #probers = new Map<string, Prober>();
  readonly #onExit = (): void => this.destroy();

  /** Builds the namespaces (names start with `prefix`); on failure removes what it made and throws. */
  constructor(prefix: string, specs: readonly NodeSpec[]) {
    super((made) => build(made, prefix, specs), POD_PORT);
    process.once('exit', this.#onExit); // a killed test run must not leave namespaces behind
  }

  podsIn(zone: string): LabPod[] {
    return this.pods.filter((p) => p.node.zone === zone);
  }

  /** Opens `n` TCP connections one after another from namespace `from`; counts the replies. */
  connect(from: string, host: string, port: number, n: number, timeoutMs = 1000): Promise<Tally> {
    let p = this.#probers.get(from);
    if (p === undefined) this.#probers.set(from, (p = new Prober(from)));
    return p.probe(host, port, n, timeoutMs);
  }

  /** Stops every process it started (by pid) and deletes every namespace it created. */
  override destroy(): void {
    for (const p of this.#probers.values()) p.stop();
    this.#probers.clear();
    super.destroy();
    process.off('exit', this.#onExit);
  }
}

function build(made: NetnsResources, prefix: string, specs: readonly NodeSpec[]): LabParts<LabNode, LabPod> {
  const { fabric, client } = made.addFabric(prefix, 'cli', `${FABRIC_NET}.100`);
  const nodes: LabNode[] = [];
  const pods: LabPod[] = [];
  specs.forEach((spec, i) => {
    const n = i + 1;
    const node: LabNode = { name: spec.name, zone: spec.zone, ns: `${prefix}-n${n}`, ip: `${FABRIC_NET}.${10 + n}`, podSubnet: `10.244.${n}.0/24` };
    made.plug(node.ns, `n${n}`, fabric, node.ip);
    ip(['netns', 'exec', node.ns, 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
    ip(['-n', node.ns, 'route', 'add', SERVICE_CIDR, 'dev', 'fab0']);
    for (let p = 1; p <= spec.pods; p++) {
      const pod: LabPod = { name: `${spec.name}-p${p}`, ns: `${prefix}-n${n}p${p}`, ip: `10.244.${n}.${p + 1}`, node };
      made.addPod(node.ns, `pod${p}`, pod.ns, pod.ip, `10.244.${n}.1`);
      pods.push(pod);
    }
    nodes.push(node);
  });
  for (const node of nodes) {
    for (const other of nodes) if (other !== node) ip(['-n', node.ns, 'route', 'add', other.podSubnet, 'via', other.ip]);
  }
  return { client, nodes, pods };
}

/** Why namespaces with netfilter tools cannot be used here, or null when they can. */
export function netnsUnavailableReason(): string | null {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'needs root (network namespaces and netfilter)';
  const failure = netnsAddFailure();
  if (failure !== null) return `\`ip netns add\` fails: ${failure}`;
  const missing = missingTools(['iptables-restore', 'iptables-save', 'nft']);
  return missing.length > 0 ? `missing tools: ${missing.join(', ')}` : null;
}
