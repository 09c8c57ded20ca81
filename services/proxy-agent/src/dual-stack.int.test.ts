// D.11 IPv6 and dual stack with real packets (issue 13, part 4, the data-plane half): the agent's
// own pieces — endpoint selection per family (serviceModelFor), dpStateOf, and the iptables and
// nftables backends over the real restorers — program a node namespace, and a client pod
// opens TCP connections to a Service's ClusterIPs through them.
//
// - an IPv6-only node: the Service's IPv6 ClusterIP reaches both IPv6 pods, through
//   ip6tables-restore (iptables backend, family IPv6) and through nft (table `ip6 slicemesh`);
// - a dual-stack node: one Service with clusterIPs [IPv4, IPv6] and one EndpointSlice per
//   addressType; one backend per family programs the same namespace (iptables + ip6tables, or
//   the nft tables `ip` and `ip6` side by side) and both ClusterIPs reach both pods.
//
// Topology per case: a node namespace (forwarding on for the families it has) with three pod
// namespaces on veth pairs: `cli` (the client) and `s1`, `s2` (servers answering with their
// name on port 8080, on `::`, so one socket serves both families). Each pod has a /32 and /128
// address (nodad), a route to the node's gateway address and a default route through it.
//
// Skips, saying why, without network namespaces, iptables-restore, ip6tables-restore or nft.

import type { ChildProcess } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { EndpointSlice, IPFamily, Service } from '@slicemesh/model';
import { IptablesRestorer, NftApplier, netnsExec, spawnExec } from '@slicemesh/netfilter';
import { NetnsResources, connectTally, ip, missingTools, nameServerJs, netnsAddFailure, spawnNodeIn } from '@slicemesh/netfilter/testing/netns-lab';
import type { Tally } from '@slicemesh/netfilter/testing/netns-lab';
import { createLogger, createMetrics, realClock } from '@slicemesh/runtime';
import { makeService, makeSlice } from '@slicemesh/testing';
import { afterEach, describe, expect, it } from 'vitest';
import type { Backend } from './backend.ts';
import { IptablesBackend } from './backends/iptables-backend.ts';
import { NftablesBackend } from './backends/nftables-backend.ts';
import type { NodeSettings } from './dp-model.ts';
import { dpStateOf, selfNode, serviceModelFor } from './dp-model.ts';
import { parseProxyAgentConfig } from './config.ts';
import { startProxyAgent } from './proxy-agent.ts';
import { FakeKvSource, endpoint, svcPut, viewPut } from './test-support.ts';

const NODE = 'n1';
const V4 = { clusterIP: '10.96.0.10', podCIDR: '10.244.1.0/24', gw: '10.244.1.1', pod: (i: number) => `10.244.1.${i + 1}` };
const V6 = { clusterIP: 'fd00:96::10', podCIDR: 'fd00:10:1::/64', gw: 'fd00:10:1::1', pod: (i: number) => `fd00:10:1::${i + 1}` };
const SERVERS = ['s1', 's2'] as const;
const PORT = 8080;

function unavailableReason(): string | null {
  const failure = netnsAddFailure();
  if (failure !== null) return `cannot create network namespaces: ${failure}`;
  const tools = missingTools(['iptables-restore', 'ip6tables-restore', 'nft']);
  return tools.length > 0 ? `missing tools: ${tools.join(', ')}` : null;
}
const unavailable = unavailableReason();

const SERVER_JS = (name: string): string => nameServerJs(name, PORT, '::');


function sysctl(ns: string, setting: string): void {
  const r = spawnSync('ip', ['netns', 'exec', ns, 'sysctl', '-qw', setting], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`sysctl ${setting} in ${ns}: ${r.stderr.trim()}`);
}

/** A node namespace with a client pod and two server pods, addressed in `families`. */
class DualLab {
  readonly node: string;
  readonly client: string;
  readonly #made = new NetnsResources();
  readonly #servers: ChildProcess[] = [];
  readonly #prefix: string;

  constructor(families: readonly IPFamily[]) {
    this.#prefix = `ds${randomUUID().slice(0, 6)}`;
    this.node = `${this.#prefix}-node`;
    this.client = `${this.#prefix}-cli`;
    try {
      this.#made.add(this.node);
      if (families.includes('IPv4')) sysctl(this.node, 'net.ipv4.ip_forward=1');
      if (families.includes('IPv6')) sysctl(this.node, 'net.ipv6.conf.all.forwarding=1');
      ['cli', ...SERVERS].forEach((name, i) => this.#addPod(name === 'cli' ? this.client : `${this.#prefix}-${name}`, `h${i}`, i + 1, families));
      if (families.includes('IPv6')) this.#waitForLinkLocal();
    } catch (err) {
      this.destroy();
      throw err;
    }
  }

  #addPod(ns: string, hostIf: string, index: number, families: readonly IPFamily[]): void {
    this.#made.add(ns);
    ip(['-n', this.node, 'link', 'add', hostIf, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
    ip(['-n', this.node, 'link', 'set', hostIf, 'up']);
    ip(['-n', ns, 'link', 'set', 'eth0', 'up']);
    for (const f of families) {
      const a = f === 'IPv6' ? V6 : V4;
      const [flag, len, extra] = f === 'IPv6' ? ['-6', '128', ['nodad']] : ['-4', '32', []];
      ip(['-n', this.node, flag, 'addr', 'add', `${a.gw}/${len}`, 'dev', hostIf, ...extra]);
      ip(['-n', this.node, flag, 'route', 'add', `${a.pod(index)}/${len}`, 'dev', hostIf]);
      ip(['-n', ns, flag, 'addr', 'add', `${a.pod(index)}/${len}`, 'dev', 'eth0', ...extra]);
      ip(['-n', ns, flag, 'route', 'add', a.gw, 'dev', 'eth0']);
      ip(['-n', ns, flag, 'route', 'add', 'default', 'via', a.gw, 'dev', 'eth0']);
    }
  }

  /**
   * Waits (up to 5 s) until no namespace holds a tentative IPv6 address: while the veths'
   * link-local addresses are in duplicate address detection, the first neighbour solicitations
   * go unanswered and the first SYN of a connection is lost.
   */
  #waitForLinkLocal(): void {
    const namespaces = [this.node, this.client, ...SERVERS.map((n) => `${this.#prefix}-${n}`)];
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      const tentative = namespaces.some((ns) => spawnSync('ip', ['-n', ns, '-6', 'addr', 'show', 'tentative'], { encoding: 'utf8' }).stdout.trim() !== '');
      if (!tentative) return;
      spawnSync('sleep', ['0.1']);
    }
    throw new Error('IPv6 addresses still tentative after 5 s');
  }

  /** Starts the name servers in s1 and s2 (on `::`, both families); resolves once both listen. */
  async start(): Promise<void> {
    await Promise.all(
      SERVERS.map(
        (name) =>
          new Promise<void>((resolve, reject) => {
            const child = spawnNodeIn(`${this.#prefix}-${name}`, SERVER_JS(name));
            this.#servers.push(child);
            let err = '';
            child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
            child.stdout?.once('data', () => resolve());
            child.once('exit', (code) => reject(new Error(`server ${name} exited ${code}: ${err}`)));
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

/** Web service `default/web` with the ClusterIPs of `families` (clusterIPs[i] of ipFamilies[i]). */
function webService(families: readonly IPFamily[]): Service {
  const ips = families.map((f) => (f === 'IPv6' ? V6.clusterIP : V4.clusterIP));
  return makeService('web', { clusterIP: ips[0], ipFamilies: families, spec: { clusterIPs: ips } });
}

/** One EndpointSlice per family holding s1 and s2 (addressType IPv4 / IPv6). */
function webSlices(families: readonly IPFamily[]): EndpointSlice[] {
  return families.map((f) => {
    const a = f === 'IPv6' ? V6 : V4;
    return makeSlice(`web-${f.toLowerCase()}`, [endpoint(a.pod(2), { node: NODE }), endpoint(a.pod(3), { node: NODE })], { service: 'web', addressType: f });
  });
}

function settingsOf(family: IPFamily): NodeSettings {
  return { nodeName: NODE, zone: '', family, nodeIPs: [], podCIDR: family === 'IPv6' ? V6.podCIDR : V4.podCIDR, masqueradeAll: false, masqueradeBit: 13 };
}

type BackendKind = 'iptables' | 'nftables';

function backendFor(kind: BackendKind, ns: string, family: IPFamily): Backend {
  const exec = netnsExec(spawnExec(), ns);
  return kind === 'iptables'
    ? new IptablesBackend({ restorer: new IptablesRestorer({ exec, family }), clock: realClock, jumpCheckIntervalMs: 60_000 })
    : new NftablesBackend({ nft: new NftApplier({ exec }) });
}

/** What a dual-stack agent does in one sync: per family, select endpoints and apply that family's rules. */
async function programNode(kind: BackendKind, ns: string, nodeFamilies: readonly IPFamily[], service: Service, slices: readonly EndpointSlice[]): Promise<void> {
  for (const family of nodeFamilies) {
    const s = settingsOf(family);
    const model = serviceModelFor(service, slices, selfNode(s), s);
    await backendFor(kind, ns, family).sync({ state: dpStateOf(model.ports, s), changedServices: null });
  }
}

function expectBoth(t: Tally, n: number): void {
  expect(Object.keys(t).sort()).toEqual(['s1', 's2']);
  expect((t['s1'] ?? 0) + (t['s2'] ?? 0)).toBe(n);
}

describe(`IPv6 and dual-stack nodes with real packets${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  let lab: DualLab | undefined;
  afterEach(() => {
    lab?.destroy();
    lab = undefined;
  });

  const both = ['IPv4', 'IPv6'] as const;

  it('endpoint selection per family: each family gets its own ClusterIP and only its slice', () => {
    for (const family of both) {
      const s = settingsOf(family);
      const [port] = serviceModelFor(webService(both), webSlices(both), selfNode(s), s).ports;
      const a = family === 'IPv6' ? V6 : V4;
      expect(port?.clusterIP).toBe(a.clusterIP);
      expect(port?.clusterEndpoints?.map((e) => e.ip).sort()).toEqual([a.pod(2), a.pod(3)]);
    }
  });

  for (const kind of ['iptables', 'nftables'] as const) {
    for (const [label, env, families] of [
      ['IP_FAMILY=IPv6', { IP_FAMILY: 'IPv6', POD_CIDR: V6.podCIDR }, ['IPv6']],
      ['DUAL_STACK=true', { DUAL_STACK: 'true', POD_CIDR: V4.podCIDR }, both],
    ] as const) {
      it(`${kind}: one agent with ${label} programs the node; the pod reaches every ClusterIP of the Service`, async (ctx) => {
        if (unavailable) ctx.skip(unavailable);
        const l = (lab = new DualLab(families));
        await l.start();
        const config = parseProxyAgentConfig([], { NODE_NAME: NODE, NODE_ZONE: 'zone-a', CLUSTER: 'c1', NETNS: l.node, BACKEND: kind, HEALTH_CHECK_SERVERS: 'off', CONNTRACK_CLEANUP: 'false', ...env });
        const services = new FakeKvSource();
        const views = new FakeKvSource();
        services.put(svcPut('c1', webService(families)));
        for (const sl of webSlices(families)) views.put(viewPut('c1', 'zone-a', sl));
        const agent = startProxyAgent(config, { sources: { services, views }, log: createLogger({ service: 'proxy-agent', level: 'silent' }), metrics: createMetrics('proxy-agent-dual-stack-test') });
        try {
          await agent.ready;
          for (const f of families) expectBoth(await l.connect(f === 'IPv6' ? V6.clusterIP : V4.clusterIP, 80, 20), 20);
        } finally {
          await agent.close();
        }
      });
    }

    it(`${kind}: an IPv6-only node takes a pod to both IPv6 endpoints of the IPv6 ClusterIP`, async (ctx) => {
      if (unavailable) ctx.skip(unavailable);
      const l = (lab = new DualLab(['IPv6']));
      await l.start();
      // Before the rules: nothing answers on the ClusterIP.
      const before = await l.connect(V6.clusterIP, 80, 1);
      expect(before['s1'] ?? before['s2']).toBeUndefined();
      await programNode(kind, l.node, ['IPv6'], webService(['IPv6']), webSlices(['IPv6']));
      expectBoth(await l.connect(V6.clusterIP, 80, 20), 20);
    });

    it(`${kind}: a dual-stack node takes a pod to both endpoints over the IPv4 and the IPv6 ClusterIP`, async (ctx) => {
      if (unavailable) ctx.skip(unavailable);
      const l = (lab = new DualLab(both));
      await l.start();
      await programNode(kind, l.node, both, webService(both), webSlices(both));
      expectBoth(await l.connect(V4.clusterIP, 80, 20), 20);
      expectBoth(await l.connect(V6.clusterIP, 80, 20), 20);
      // The second family's rules did not displace the first's (separate iptables/ip6tables, or nft tables ip/ip6).
      // 20 connections, as above: with 10, a random balancer sends all to one pod once in 512 runs (seen in CI).
      expectBoth(await l.connect(V4.clusterIP, 80, 20), 20);
    });
  }
});
