// An IPv6-only or dual-stack node for the pipeline e2e: one node namespace (forwarding on for
// its families) with three pod namespaces on veth pairs — `cli`, a client, and `s1`, `s2`,
// servers answering with their name on POD_PORT (on `::`, one socket for both families). Each
// pod has a /128 (nodad) and, dual-stack, a /32 of the node's pod ranges, a route to the node's
// gateway address and a default route through it; the node has the gateways on every pod link.

import type { ChildProcess } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import { NetnsResources, connectTally, ip, nameServerJs, spawnNodeIn } from '@slicemesh/netfilter/testing/netns-lab';
import type { Tally } from '@slicemesh/netfilter/testing/netns-lab';
import type { LabNode, LabPod } from './netns-cluster.ts';
import { POD_PORT } from './netns-cluster.ts';

export const V6_POD_CIDR = 'fd00:10:1::/64';
export const V4_POD_CIDR = '10.244.1.0/24';
type Family = 'IPv4' | 'IPv6';
const GATEWAY: Readonly<Record<Family, string>> = { IPv6: 'fd00:10:1::1', IPv4: '10.244.1.1' };
/** Host `n` of the node's pod range of `family`. */
const hostIn = (family: Family, n: number): string => (family === 'IPv6' ? `fd00:10:1::${n}` : `10.244.1.${n}`);
const SERVERS = ['s1', 's2'] as const;

const serverJs = (name: string): string => nameServerJs(name, POD_PORT, '::');


export class Ipv6NodeLab {
  readonly node: LabNode;
  /** The server pods (s1, s2) as the cluster's Pods. */
  readonly pods: readonly LabPod[];
  readonly client: string;
  readonly families: readonly Family[];
  readonly #made = new NetnsResources();
  readonly #servers: ChildProcess[] = [];

  /** `families`: the node's and pods' families, the first one giving each its primary address. */
  constructor(prefix: string, name: string, zone: string, families: readonly Family[] = ['IPv6']) {
    const first = families[0] ?? 'IPv6';
    this.families = families;
    this.node = { name, zone, ns: `${prefix}-node`, ip: GATEWAY[first], podSubnet: first === 'IPv6' ? V6_POD_CIDR : V4_POD_CIDR };
    this.client = `${prefix}-cli`;
    this.pods = SERVERS.map((s, i) => ({ name: `${name}-${s}`, ns: `${prefix}-${s}`, ip: hostIn(first, i + 3), node: this.node }));
    try {
      this.#made.add(this.node.ns);
      for (const f of families) {
        const setting = f === 'IPv6' ? 'net.ipv6.conf.all.forwarding=1' : 'net.ipv4.ip_forward=1';
        const r = spawnSync('ip', ['netns', 'exec', this.node.ns, 'sysctl', '-qw', setting], { encoding: 'utf8' });
        if (r.status !== 0) throw new Error(`${setting} in ${this.node.ns}: ${r.stderr.trim()}`);
      }
      this.#addPod(this.client, 'h0', 2);
      this.pods.forEach((p, i) => this.#addPod(p.ns, `h${i + 1}`, i + 3));
      this.#waitForDad();
    } catch (err) {
      this.destroy();
      throw err;
    }
  }

  get nodes(): readonly LabNode[] {
    return [this.node];
  }

  /** The addresses of server pod `pod`, one per family in the lab's order (its podIPs). */
  addressesOf(pod: LabPod): string[] {
    const n = this.pods.indexOf(pod) + 3;
    return this.families.map((f) => hostIn(f, n));
  }

  #addPod(ns: string, hostIf: string, host: number): void {
    this.#made.add(ns);
    ip(['-n', this.node.ns, 'link', 'add', hostIf, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
    ip(['-n', this.node.ns, 'link', 'set', hostIf, 'up']);
    ip(['-n', ns, 'link', 'set', 'eth0', 'up']);
    for (const f of this.families) {
      const [flag, len, extra] = f === 'IPv6' ? ['-6', '128', ['nodad']] : ['-4', '32', []];
      const gw = GATEWAY[f];
      ip(['-n', this.node.ns, flag, 'addr', 'add', `${gw}/${len}`, 'dev', hostIf, ...extra]);
      ip(['-n', this.node.ns, flag, 'route', 'add', `${hostIn(f, host)}/${len}`, 'dev', hostIf]);
      ip(['-n', ns, flag, 'addr', 'add', `${hostIn(f, host)}/${len}`, 'dev', 'eth0', ...extra]);
      ip(['-n', ns, flag, 'route', 'add', gw, 'dev', 'eth0']);
      ip(['-n', ns, flag, 'route', 'add', 'default', 'via', gw, 'dev', 'eth0']);
    }
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
    return connectTally(this.client, host, port, n);
  }


  destroy(): void {
    for (const c of this.#servers) if (c.exitCode === null) c.kill('SIGKILL');
    this.#made.destroy();
  }
}
