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
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';

export const SERVICE_CIDR = '10.96.0.0/16';
export const POD_CIDR = '10.244.0.0/16';
export const POD_PORT = 8080;
const FABRIC_NET = '192.168.78';

export interface NodeSpec {
  readonly name: string;
  readonly zone: string;
  readonly pods: number;
}

export interface LabNode {
  readonly name: string;
  readonly zone: string;
  readonly ns: string;
  /** Address on the fabric: the node's InternalIP, where NodePorts are reached. */
  readonly ip: string;
  /** The /24 its pods' addresses come from. */
  readonly podSubnet: string;
}

export interface LabPod {
  readonly name: string;
  readonly ns: string;
  readonly ip: string;
  readonly node: LabNode;
}

/** Replies counted by text: a pod's name, or TIMEOUT, ECONNREFUSED, EMPTY, ... */
export type Tally = Readonly<Record<string, number>>;

function ip(args: readonly string[]): void {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr.trim() || r.error?.message || `exit ${r.status}`}`);
}

const SERVER = (name: string): string =>
  `require('net').createServer((s) => { s.on('error', () => {}); s.end(${JSON.stringify(name)}); })` +
  `.listen(${POD_PORT}, '0.0.0.0', () => console.log('listening'))`;

// Reads one JSON request per line ({id, host, port, n, timeoutMs}), opens n connections one
// after another, and answers with one JSON line {id, tally}.
const PROBER = `
const net = require('net');
const once = (host, port, timeoutMs) => new Promise((resolve) => {
  const s = net.connect({ host, port });
  let data = '';
  const timer = setTimeout(() => { s.destroy(); resolve('TIMEOUT'); }, timeoutMs);
  s.on('data', (d) => (data += d));
  s.on('end', () => { clearTimeout(timer); resolve(data || 'EMPTY'); });
  s.on('error', (e) => { clearTimeout(timer); resolve(e.code || 'ERROR'); });
});
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
    this.#child = spawn('ip', ['netns', 'exec', ns, 'node', '-e', PROBER], { stdio: ['pipe', 'pipe', 'pipe'] });
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

export class NetnsCluster {
  readonly nodes: readonly LabNode[];
  readonly pods: readonly LabPod[];
  /** An outside client on the fabric (not a node): NodePorts are tested from here. */
  readonly client: string;
  readonly #fabric: string;
  readonly #created: string[] = [];
  readonly #servers: ChildProcess[] = [];
  readonly #probers = new Map<string, Prober>();
  readonly #onExit = (): void => this.destroy();

  /** Builds the namespaces (names start with `prefix`); on failure removes what it made and throws. */
  constructor(prefix: string, specs: readonly NodeSpec[]) {
    this.#fabric = `${prefix}-fab`;
    this.client = `${prefix}-cli`;
    const nodes: LabNode[] = [];
    const pods: LabPod[] = [];
    process.once('exit', this.#onExit); // a killed test run must not leave namespaces behind
    try {
      this.#add(this.#fabric);
      ip(['-n', this.#fabric, 'link', 'add', 'br0', 'type', 'bridge']);
      ip(['-n', this.#fabric, 'link', 'set', 'br0', 'up']);
      this.#plug(this.client, 'cli', `${FABRIC_NET}.100`);
      specs.forEach((spec, i) => {
        const n = i + 1;
        const node: LabNode = { name: spec.name, zone: spec.zone, ns: `${prefix}-n${n}`, ip: `${FABRIC_NET}.${10 + n}`, podSubnet: `10.244.${n}.0/24` };
        this.#plug(node.ns, `n${n}`, node.ip);
        ip(['netns', 'exec', node.ns, 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
        ip(['-n', node.ns, 'route', 'add', SERVICE_CIDR, 'dev', 'fab0']);
        for (let p = 1; p <= spec.pods; p++) {
          const pod: LabPod = { name: `${spec.name}-p${p}`, ns: `${prefix}-n${n}p${p}`, ip: `10.244.${n}.${p + 1}`, node };
          this.#add(pod.ns);
          ip(['-n', node.ns, 'link', 'add', `pod${p}`, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', pod.ns]);
          ip(['-n', node.ns, 'addr', 'add', `10.244.${n}.1/32`, 'dev', `pod${p}`]);
          ip(['-n', node.ns, 'link', 'set', `pod${p}`, 'up']);
          ip(['-n', node.ns, 'route', 'add', `${pod.ip}/32`, 'dev', `pod${p}`]);
          ip(['-n', pod.ns, 'addr', 'add', `${pod.ip}/32`, 'dev', 'eth0']);
          ip(['-n', pod.ns, 'link', 'set', 'eth0', 'up']);
          ip(['-n', pod.ns, 'route', 'add', `10.244.${n}.1`, 'dev', 'eth0']);
          ip(['-n', pod.ns, 'route', 'add', 'default', 'via', `10.244.${n}.1`, 'dev', 'eth0']);
          pods.push(pod);
        }
        nodes.push(node);
      });
      for (const node of nodes) {
        for (const other of nodes) if (other !== node) ip(['-n', node.ns, 'route', 'add', other.podSubnet, 'via', other.ip]);
      }
    } catch (err) {
      this.destroy();
      throw err;
    }
    this.nodes = nodes;
    this.pods = pods;
  }

  #add(ns: string): void {
    ip(['netns', 'add', ns]);
    this.#created.push(ns);
    ip(['-n', ns, 'link', 'set', 'lo', 'up']);
  }

  /** Creates `ns` with `fab0` at `addr`/24, its peer `port` on the fabric bridge. */
  #plug(ns: string, port: string, addr: string): void {
    this.#add(ns);
    ip(['-n', ns, 'link', 'add', 'fab0', 'type', 'veth', 'peer', 'name', port, 'netns', this.#fabric]);
    ip(['-n', this.#fabric, 'link', 'set', port, 'master', 'br0']);
    ip(['-n', this.#fabric, 'link', 'set', port, 'up']);
    ip(['-n', ns, 'addr', 'add', `${addr}/24`, 'dev', 'fab0']);
    ip(['-n', ns, 'link', 'set', 'fab0', 'up']);
  }

  node(name: string): LabNode {
    const n = this.nodes.find((x) => x.name === name);
    if (n === undefined) throw new Error(`no node ${name}`);
    return n;
  }

  pod(name: string): LabPod {
    const p = this.pods.find((x) => x.name === name);
    if (p === undefined) throw new Error(`no pod ${name}`);
    return p;
  }

  podsIn(zone: string): LabPod[] {
    return this.pods.filter((p) => p.node.zone === zone);
  }

  /** Starts every pod's server; resolves once all listen. */
  async startServers(): Promise<void> {
    await Promise.all(
      this.pods.map(
        (pod) =>
          new Promise<void>((resolve, reject) => {
            const child = spawn('ip', ['netns', 'exec', pod.ns, 'node', '-e', SERVER(pod.name)], { stdio: ['ignore', 'pipe', 'pipe'] });
            this.#servers.push(child);
            let err = '';
            child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
            child.stdout?.once('data', () => resolve());
            child.once('exit', (code) => reject(new Error(`server in ${pod.ns} exited ${code}: ${err}`)));
          }),
      ),
    );
  }

  /** Opens `n` TCP connections one after another from namespace `from`; counts the replies. */
  connect(from: string, host: string, port: number, n: number, timeoutMs = 1000): Promise<Tally> {
    let p = this.#probers.get(from);
    if (p === undefined) this.#probers.set(from, (p = new Prober(from)));
    return p.probe(host, port, n, timeoutMs);
  }

  /** Stops every process it started (by pid) and deletes every namespace it created. */
  destroy(): void {
    for (const p of this.#probers.values()) p.stop();
    this.#probers.clear();
    // `ip netns exec` replaces itself with the program, so the pid is the server's.
    for (const s of this.#servers) if (s.exitCode === null && s.pid !== undefined) s.kill('SIGKILL');
    for (const ns of this.#created.splice(0).reverse()) spawnSync('ip', ['netns', 'delete', ns]);
    process.off('exit', this.#onExit);
  }
}

/** Why namespaces with netfilter tools cannot be used here, or null when they can. */
export function netnsUnavailableReason(): string | null {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'needs root (network namespaces and netfilter)';
  const probe = `smprobe${process.pid}`;
  const r = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' });
  if (r.status !== 0) return `\`ip netns add\` fails: ${(r.stderr || r.error?.message || `exit ${r.status}`).trim()}`;
  spawnSync('ip', ['netns', 'delete', probe]);
  const missing = ['iptables-restore', 'iptables-save', 'nft'].filter((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0);
  return missing.length > 0 ? `missing tools: ${missing.join(', ')}` : null;
}
