// A small routed cluster in network namespaces, for the real-kernel tests (never used by
// production code). Every node is a namespace with ip_forward=1 on a shared bridge (the
// "fabric", its own namespace); every pod is a namespace on a veth pair to its node with a
// /32 address and a default route, running a TCP server that answers with its name. Nodes
// route other nodes' pod ranges over the fabric and the service range onto it, so processes
// on a node can reach ClusterIPs. A client namespace on the fabric plays an outside client.
//
//   pod 10.244.<n>.<p+1>/32 ── veth ── node (10.244.<n>.1 on each pod veth; 192.168.77.<10+n>)
//                                           └── fabric bridge ── client 192.168.77.100

import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';

export interface LabNodeSpec {
  readonly name: string;
  readonly zone: string;
  readonly pods: number;
}

export interface LabNode {
  readonly name: string;
  readonly zone: string;
  /** Network namespace name. */
  readonly ns: string;
  /** Address on the fabric (NodePorts are reached here). */
  readonly ip: string;
}

export interface LabPod {
  readonly name: string;
  readonly ns: string;
  readonly ip: string;
  readonly node: LabNode;
}

/** Connection outcomes by reply: a pod's name, or TIMEOUT / ECONNREFUSED / ... */
export type Tally = Readonly<Record<string, number>>;

export const SERVICE_RANGE = '10.96.0.0/16';
export const POD_RANGE = '10.244.0.0/16';
export const POD_PORT = 8080;

function sh(args: readonly string[]): void {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr.trim() || r.error?.message}`);
}

const SERVER = (name: string) =>
  `require('net').createServer((s) => { s.on('error', () => {}); s.end(${JSON.stringify(name)}); }).listen(${POD_PORT}, '0.0.0.0', () => console.log('ready'))`;

const CLIENT = `
const net = require('net');
const [host, port, n, timeout] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3]), Number(process.argv[4])];
const once = () => new Promise((resolve) => {
  const s = net.connect({ host, port });
  let data = '';
  const timer = setTimeout(() => { s.destroy(); resolve('TIMEOUT'); }, timeout);
  s.on('data', (d) => (data += d));
  s.on('end', () => { clearTimeout(timer); resolve(data || 'EMPTY'); });
  s.on('error', (e) => { clearTimeout(timer); resolve(e.code || 'ERROR'); });
});
(async () => { const out = {}; for (let i = 0; i < n; i++) { const r = await once(); out[r] = (out[r] || 0) + 1; } console.log(JSON.stringify(out)); })();
`;

export class NetnsLab {
  readonly nodes: readonly LabNode[];
  readonly pods: readonly LabPod[];
  /** The outside client's namespace (on the fabric, 192.168.77.100). */
  readonly client: string;
  readonly #fabric: string;
  readonly #namespaces: string[] = [];
  readonly #servers: ChildProcess[] = [];

  /** Names start with `prefix` (keep it unique per test run). Throws, after cleaning up, if a step fails. */
  constructor(prefix: string, specs: readonly LabNodeSpec[]) {
    this.#fabric = `${prefix}-fab`;
    this.client = `${prefix}-cli`;
    const nodes: LabNode[] = [];
    const pods: LabPod[] = [];
    try {
      this.#add(this.#fabric);
      sh(['-n', this.#fabric, 'link', 'add', 'br0', 'type', 'bridge']);
      sh(['-n', this.#fabric, 'link', 'set', 'br0', 'up']);
      this.#attach(this.client, 'cl', '192.168.77.100');
      specs.forEach((spec, i) => {
        const n = i + 1;
        const node: LabNode = { name: spec.name, zone: spec.zone, ns: `${prefix}-${spec.name}`, ip: `192.168.77.${10 + n}` };
        this.#attach(node.ns, `f${n}`, node.ip);
        spawnSync('ip', ['netns', 'exec', node.ns, 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
        sh(['-n', node.ns, 'route', 'add', SERVICE_RANGE, 'dev', 'fab0']);
        for (let p = 1; p <= spec.pods; p++) {
          const pod: LabPod = { name: `${spec.name}-pod${p}`, ns: `${prefix}-${spec.name}-p${p}`, ip: `10.244.${n}.${p + 1}`, node };
          this.#add(pod.ns);
          sh(['-n', node.ns, 'link', 'add', `p${p}`, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', pod.ns]);
          sh(['-n', node.ns, 'addr', 'add', `10.244.${n}.1/32`, 'dev', `p${p}`]);
          sh(['-n', node.ns, 'link', 'set', `p${p}`, 'up']);
          sh(['-n', node.ns, 'route', 'add', `${pod.ip}/32`, 'dev', `p${p}`]);
          sh(['-n', pod.ns, 'addr', 'add', `${pod.ip}/32`, 'dev', 'eth0']);
          sh(['-n', pod.ns, 'link', 'set', 'eth0', 'up']);
          sh(['-n', pod.ns, 'route', 'add', `10.244.${n}.1`, 'dev', 'eth0']);
          sh(['-n', pod.ns, 'route', 'add', 'default', 'via', `10.244.${n}.1`, 'dev', 'eth0']);
          pods.push(pod);
        }
        nodes.push(node);
      });
      for (const [i, node] of nodes.entries()) {
        for (const [j, other] of nodes.entries()) if (i !== j) sh(['-n', node.ns, 'route', 'add', `10.244.${j + 1}.0/24`, 'via', other.ip]);
      }
    } catch (e) {
      this.destroy();
      throw e;
    }
    this.nodes = nodes;
    this.pods = pods;
  }

  #add(ns: string): void {
    sh(['netns', 'add', ns]);
    this.#namespaces.push(ns);
    sh(['-n', ns, 'link', 'set', 'lo', 'up']);
  }

  /** A namespace with `fab0` on the fabric bridge at `ip`/24. */
  #attach(ns: string, port: string, ip: string): void {
    this.#add(ns);
    sh(['-n', ns, 'link', 'add', 'fab0', 'type', 'veth', 'peer', 'name', port, 'netns', this.#fabric]);
    sh(['-n', this.#fabric, 'link', 'set', port, 'master', 'br0']);
    sh(['-n', this.#fabric, 'link', 'set', port, 'up']);
    sh(['-n', ns, 'addr', 'add', `${ip}/24`, 'dev', 'fab0']);
    sh(['-n', ns, 'link', 'set', 'fab0', 'up']);
  }

  pod(name: string): LabPod {
    const p = this.pods.find((x) => x.name === name);
    if (!p) throw new Error(`no pod ${name}`);
    return p;
  }

  node(name: string): LabNode {
    const n = this.nodes.find((x) => x.name === name);
    if (!n) throw new Error(`no node ${name}`);
    return n;
  }

  /** Starts every pod's server; resolves when all listen. */
  async startServers(): Promise<void> {
    await Promise.all(
      this.pods.map(
        (pod) =>
          new Promise<void>((resolve, reject) => {
            const child = spawn('ip', ['netns', 'exec', pod.ns, 'node', '-e', SERVER(pod.name)], { stdio: ['ignore', 'pipe', 'pipe'] });
            this.#servers.push(child);
            let err = '';
            child.stderr.on('data', (d: Buffer) => (err += d.toString()));
            child.stdout.once('data', () => resolve());
            child.once('exit', (code) => reject(new Error(`server in ${pod.ns} exited ${code}: ${err}`)));
          }),
      ),
    );
  }

  /** Opens `n` connections one after another from namespace `from` to host:port; tallies the replies. */
  connect(from: string, host: string, port: number, n = 20, timeoutMs = 1000): Promise<Tally> {
    return new Promise((resolve, reject) => {
      const child = spawn('ip', ['netns', 'exec', from, 'node', '-e', CLIENT, host, String(port), String(n), String(timeoutMs)], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.once('exit', (code) => {
        if (code !== 0) reject(new Error(`client in ${from} exited ${code}: ${err}`));
        else resolve(JSON.parse(out) as Tally);
      });
    });
  }

  /** Stops the servers (by their process ids) and deletes every namespace this lab created. */
  destroy(): void {
    for (const s of this.#servers) {
      // `ip netns exec` execs node in place, so this pid is the server itself.
      if (s.exitCode === null && s.pid !== undefined) s.kill('SIGKILL');
    }
    for (const ns of [...this.#namespaces].reverse()) spawnSync('ip', ['netns', 'delete', ns]);
    this.#namespaces.length = 0;
  }
}

/** Why the lab cannot run here (not root, no `ip netns`), or null. */
export function labUnavailableReason(): string | null {
  const probe = `smprobe-${process.pid}`;
  const r = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' });
  if (r.status !== 0) return `cannot create network namespaces: ${r.stderr.trim() || r.error?.message}`;
  spawnSync('ip', ['netns', 'delete', probe]);
  const tools = ['iptables-restore', 'nft'].filter((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0);
  return tools.length > 0 ? `missing tools: ${tools.join(', ')}` : null;
}
