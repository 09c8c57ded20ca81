// An IPv6-only node for the pipeline e2e: one node namespace (IPv6 forwarding on) with three
// pod namespaces on veth pairs — `cli`, a client, and `s1`, `s2`, servers answering with their
// name on POD_PORT. Each pod has a /128 (nodad) of the node's pod range, a route to the node's
// gateway address and a default route through it; the node has the gateway on every pod link.

import type { ChildProcess } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import { CONNECT_ONCE_JS, NetnsResources, ip, spawnNodeIn } from '@slicemesh/netfilter/testing/netns-lab';
import type { Tally } from '@slicemesh/netfilter/testing/netns-lab';
import type { LabNode, LabPod } from './netns-cluster.ts';
import { POD_PORT } from './netns-cluster.ts';

export const V6_POD_CIDR = 'fd00:10:1::/64';
const GATEWAY = 'fd00:10:1::1';
const SERVERS = ['s1', 's2'] as const;

const serverJs = (name: string): string =>
  `require('net').createServer((s) => { s.on('error', () => {}); s.end(${JSON.stringify(name)}); }).listen(${POD_PORT}, '::', () => console.log('listening'))`;

const clientJs = `${CONNECT_ONCE_JS}
const [host, port, n] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])];
(async () => { const out = {}; for (let i = 0; i < n; i++) { const r = await once(host, port, 1000); out[r] = (out[r] || 0) + 1; } console.log(JSON.stringify(out)); })();
`;

export class Ipv6NodeLab {
  readonly node: LabNode;
  /** The server pods (s1, s2) as the cluster's Pods. */
  readonly pods: readonly LabPod[];
  readonly client: string;
  readonly #made = new NetnsResources();
  readonly #servers: ChildProcess[] = [];

  constructor(prefix: string, name: string, zone: string) {
    this.node = { name, zone, ns: `${prefix}-node`, ip: GATEWAY, podSubnet: V6_POD_CIDR };
    this.client = `${prefix}-cli`;
    this.pods = SERVERS.map((s, i) => ({ name: `${name}-${s}`, ns: `${prefix}-${s}`, ip: `fd00:10:1::${i + 3}`, node: this.node }));
    try {
      this.#made.add(this.node.ns);
      const r = spawnSync('ip', ['netns', 'exec', this.node.ns, 'sysctl', '-qw', 'net.ipv6.conf.all.forwarding=1'], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`IPv6 forwarding in ${this.node.ns}: ${r.stderr.trim()}`);
      this.#addPod(this.client, 'h0', 'fd00:10:1::2');
      this.pods.forEach((p, i) => this.#addPod(p.ns, `h${i + 1}`, p.ip));
      this.#waitForDad();
    } catch (err) {
      this.destroy();
      throw err;
    }
  }

  get nodes(): readonly LabNode[] {
    return [this.node];
  }

  #addPod(ns: string, hostIf: string, address: string): void {
    this.#made.add(ns);
    ip(['-n', this.node.ns, 'link', 'add', hostIf, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
    ip(['-n', this.node.ns, 'link', 'set', hostIf, 'up']);
    ip(['-n', ns, 'link', 'set', 'eth0', 'up']);
    ip(['-n', this.node.ns, '-6', 'addr', 'add', `${GATEWAY}/128`, 'dev', hostIf, 'nodad']);
    ip(['-n', this.node.ns, '-6', 'route', 'add', `${address}/128`, 'dev', hostIf]);
    ip(['-n', ns, '-6', 'addr', 'add', `${address}/128`, 'dev', 'eth0', 'nodad']);
    ip(['-n', ns, '-6', 'route', 'add', GATEWAY, 'dev', 'eth0']);
    ip(['-n', ns, '-6', 'route', 'add', 'default', 'via', GATEWAY, 'dev', 'eth0']);
  }

  /** Waits (up to 5 s) for the veths' link-local addresses to leave duplicate address detection, so no first SYN is lost. */
  #waitForDad(): void {
    const namespaces = [this.node.ns, this.client, ...this.pods.map((p) => p.ns)];
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      if (namespaces.every((ns) => spawnSync('ip', ['-n', ns, '-6', 'addr', 'show', 'tentative'], { encoding: 'utf8' }).stdout.trim() === '')) return;
      spawnSync('sleep', ['0.1']);
    }
    throw new Error('IPv6 addresses still tentative after 5 s');
  }

  /** Starts the name servers (on `::`); resolves once both listen. */
  async startServers(): Promise<void> {
    await Promise.all(
      this.pods.map(
        (p) =>
          new Promise<void>((resolve, reject) => {
            const child = spawnNodeIn(p.ns, serverJs(p.name));
            this.#servers.push(child);
            let err = '';
            child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
            child.stdout?.once('data', () => resolve());
            child.once('exit', (code) => reject(new Error(`server ${p.name} exited ${code}: ${err}`)));
          }),
      ),
    );
  }

  /** `n` connections one after another from the client pod to host:port, tallied by reply. */
  connect(host: string, port: number, n = 20): Promise<Tally> {
    return new Promise((resolve, reject) => {
      const child = spawnNodeIn(this.client, clientJs, [host, String(port), String(n)]);
      let out = '';
      let err = '';
      child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
      child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as Tally) : reject(new Error(`client exited ${code}: ${err}`))));
    });
  }

  destroy(): void {
    for (const c of this.#servers) if (c.exitCode === null) c.kill('SIGKILL');
    this.#made.destroy();
  }
}
