// UDP conntrack cleanup (D.7) with real packets: a client pod keeps sending datagrams from one
// socket to a UDP service, so every datagram after the first rides the same conntrack entry.
// The agent programs a node namespace (NETNS) from test KV buckets; pods run UDP servers that
// answer with their name. Each case runs with the cleanup and, as the control, without it:
//
// - D.7.1 the endpoint the flow uses is replaced, for a pod sending to the ClusterIP and for an
//   outside client sending to the node's NodePort: without cleanup the flow stays on the old
//   pod (still running, as a terminating pod would); with it, the next datagram after the sync
//   reaches the new pod;
// - D.7.2 the client sends before the Service exists (nothing translates the datagrams, the
//   entry records that): without cleanup the flow stays black-holed after the Service gets an
//   endpoint; with it, the next datagram reaches the pod.
//
// Skips, saying why, without network namespaces or the conntrack tool.

import type { ChildProcess } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Endpoint, Service } from '@slicemesh/model';
import type { KV } from '@slicemesh/nats';
import { ensureKv, kvPutJson, svcKey, viewKey } from '@slicemesh/nats';
import { spawnNodeIn } from '@slicemesh/netfilter/testing/netns-lab';
import { createLogger } from '@slicemesh/runtime';
import { makeService, makeSlice } from '@slicemesh/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JetStreamFixture } from '../../../libs/nats/testing/jetstream.ts';
import { withJetStream } from '../../../libs/nats/testing/jetstream.ts';
import { parseProxyAgentConfig } from './config.ts';
import type { ProxyAgentHandle } from './proxy-agent.ts';
import { startProxyAgent } from './proxy-agent.ts';
import { NetnsLab, POD_RANGE, labUnavailableReason } from './test-lab.ts';
import { endpoint } from './test-support.ts';

const ZONE = 'zone-a';
const DNS_IP = '10.96.0.53';
const UDP_PORT = 5353;
/** How long the control waits to see that nothing changes. */
const WATCH_MS = 2000;
const BOUND_MS = 5000;

function unavailableReason(): string | null {
  const lab = labUnavailableReason();
  if (lab !== null) return lab;
  const ct = spawnSync('conntrack', ['--version'], { encoding: 'utf8' });
  return ct.status === 0 ? null : `the conntrack tool is missing (apt-get install conntrack): ${(ct.stderr || ct.error?.message || '').trim()}`;
}
const unavailable = unavailableReason();

const UDP_SERVER_JS = `
const s = require('dgram').createSocket('udp4');
s.on('message', (m, r) => s.send(process.argv[1], r.port, r.address));
s.bind(${UDP_PORT}, () => console.log('listening'));
`;

// One socket, one source port: every datagram belongs to the same conntrack entry.
const UDP_CLIENT_JS = `
const s = require('dgram').createSocket('udp4');
const [host, port] = [process.argv[1], Number(process.argv[2])];
s.on('message', (m) => console.log(JSON.stringify({ t: Date.now(), from: m.toString() })));
s.on('error', () => {});
s.bind(40053, () => { let i = 0; setInterval(() => s.send(String(i++), port, host, () => {}), 50); });
`;

interface Reply {
  readonly t: number;
  readonly from: string;
}

/** A UDP client running in a namespace; `replies` grows as answers arrive. */
class UdpClient {
  readonly replies: Reply[] = [];
  readonly #child: ChildProcess;

  constructor(ns: string, host: string, port: number) {
    this.#child = spawnNodeIn(ns, UDP_CLIENT_JS, [host, String(port)]);
    let buf = '';
    this.#child.stdout?.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      for (const l of lines) if (l.trim() !== '') this.replies.push(JSON.parse(l) as Reply);
    });
  }

  after(t: number): Reply[] {
    return this.replies.filter((r) => r.t >= t);
  }

  stop(): void {
    if (this.#child.exitCode === null) this.#child.kill('SIGKILL');
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, what: string): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > BOUND_MS) throw new Error(`not within ${BOUND_MS} ms: ${what}`);
    await sleep(20);
  }
}

const NODE_PORT = 30053;

function dnsService(): Service {
  return makeService('dns', { clusterIP: DNS_IP, ports: [{ name: 'dns', port: 53, targetPort: UDP_PORT, protocol: 'UDP', nodePort: NODE_PORT }], spec: { type: 'NodePort' } });
}

describe(`UDP conntrack cleanup on the real kernel${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  let js: JetStreamFixture | undefined;
  let kv: { svc: KV; views: KV } | undefined;
  const servers: ChildProcess[] = [];
  const labs: NetnsLab[] = [];
  const results: Record<string, unknown>[] = [];

  beforeAll(async () => {
    if (unavailable) return;
    js = await withJetStream();
    kv = { svc: await ensureKv(js.nc, js.names.svc, { storage: 'memory' }), views: await ensureKv(js.nc, js.names.views, { storage: 'memory' }) };
  });

  afterAll(async () => {
    for (const s of servers) if (s.exitCode === null) s.kill('SIGKILL');
    for (const l of labs) l.destroy();
    await js?.cleanup();
    // The figures the report quotes: one line per case.
    for (const r of results) console.log(`conntrack cleanup: ${JSON.stringify(r)}`);
  });

  /** A fresh one-node lab: pods p1 and p2 serve UDP, p3 is the client. Each case has its own cluster name. */
  async function setup(backend: 'iptables' | 'nftables', cleanup: boolean) {
    if (!js || !kv) throw new Error('setup failed');
    const id = randomUUID().slice(0, 6);
    const cluster = `ct${id}`;
    const lab = new NetnsLab(`ct13${id}`, [{ name: 'node-a1', zone: ZONE, pods: 3 }]);
    labs.push(lab);
    await Promise.all(
      ['node-a1-pod1', 'node-a1-pod2'].map(
        (name) =>
          new Promise<void>((resolve, reject) => {
            const child = spawnNodeIn(lab.pod(name).ns, UDP_SERVER_JS, [name]);
            servers.push(child);
            child.stdout?.once('data', () => resolve());
            child.once('exit', (code) => reject(new Error(`UDP server ${name} exited ${code}`)));
          }),
      ),
    );
    const k = kv;
    const putService = () => kvPutJson(k.svc, svcKey({ cluster, namespace: 'default', name: 'dns' }), dnsService());
    const putEndpoints = (eps: readonly Endpoint[]) =>
      kvPutJson(
        k.views,
        viewKey({ cluster, zone: ZONE, namespace: 'default', service: 'dns', slice: 'dns-1' }),
        makeSlice('dns-1', eps, { service: 'dns', ports: [{ name: 'dns', port: UDP_PORT, protocol: 'UDP' }] }),
      );
    const ep = (pod: string) => endpoint(lab.pod(pod).ip, { node: 'node-a1', zone: ZONE });
    const node = lab.node('node-a1');
    const config = parseProxyAgentConfig([], {
      NODE_NAME: node.name, NODE_ZONE: ZONE, CLUSTER: cluster, BACKEND: backend, NETNS: node.ns, POD_CIDR: POD_RANGE, CONNTRACK_CLEANUP: String(cleanup),
      MIN_SYNC_PERIOD: '100ms', SYNC_PERIOD: '30s', SVC_BUCKET: js.names.svc, VIEWS_BUCKET: js.names.views, HEALTH_CHECK_SERVERS: 'off',
    });
    const start = () => startProxyAgent(config, { nc: js?.nc, log: createLogger({ service: 'proxy-agent', level: 'warn' }) });
    return {
      lab,
      putService,
      putEndpoints,
      ep,
      start,
      /** From pod p3 to the ClusterIP, or from the outside client to the node's NodePort. */
      client: (via: 'ClusterIP' | 'NodePort') =>
        via === 'ClusterIP' ? new UdpClient(lab.pod('node-a1-pod3').ns, DNS_IP, 53) : new UdpClient(lab.client, lab.node('node-a1').ip, NODE_PORT),
    };
  }

  const cases = [
    { backend: 'iptables', cleanup: true },
    { backend: 'iptables', cleanup: false },
    { backend: 'nftables', cleanup: true },
    { backend: 'nftables', cleanup: false },
  ] as const;

  for (const c of cases) for (const via of ['ClusterIP', 'NodePort'] as const) {
    const label = `${c.backend}, cleanup ${c.cleanup ? 'on' : 'off (control)'}, through the ${via}`;

    it(`D.7.1 ${label}: a client keeps sending while its endpoint is replaced — ${c.cleanup ? 'the next datagram after the sync reaches the new pod' : 'the flow stays on the old pod'}`, async (ctx) => {
      if (unavailable) ctx.skip(unavailable);
      const s = await setup(c.backend, c.cleanup);
      await s.putService();
      await s.putEndpoints([s.ep('node-a1-pod1')]);
      let agent: ProxyAgentHandle | undefined;
      let client: UdpClient | undefined;
      try {
        agent = s.start();
        await agent.ready;
        // Only now: a datagram sent before the rules exist would start a black-holed flow (D.7.2).
        client = s.client(via);
        const c1 = client;
        await until(() => c1.replies.some((r) => r.from === 'node-a1-pod1'), 'replies from pod1');
        const changedAt = Date.now();
        await s.putEndpoints([s.ep('node-a1-pod2')]);
        if (c.cleanup) {
          await until(() => c1.after(changedAt).some((r) => r.from === 'node-a1-pod2'), 'replies from pod2');
          const firstNew = c1.after(changedAt).find((r) => r.from === 'node-a1-pod2')?.t ?? NaN;
          await sleep(500);
          const afterSwitch = c1.after(firstNew);
          expect(afterSwitch.filter((r) => r.from === 'node-a1-pod1')).toEqual([]); // never back to the old pod
          const report = agent.lastSync?.conntrack;
          expect(report).toMatchObject({ mode: 'executed', failures: [] });
          expect(report?.deleted).toBeGreaterThanOrEqual(1);
          results.push({
            case: `D.7.1 ${label}`,
            toOldPodAfterChange: c1.after(changedAt).filter((r) => r.from === 'node-a1-pod1').length,
            msUntilNewPod: firstNew - changedAt,
            toNewPodIn500ms: afterSwitch.filter((r) => r.from === 'node-a1-pod2').length,
            entriesDeleted: report?.deleted,
            cleanupMs: report?.durationMs,
          });
        } else {
          await sleep(WATCH_MS);
          const seen = c1.after(changedAt);
          expect(seen.length).toBeGreaterThan(10);
          expect(seen.filter((r) => r.from !== 'node-a1-pod1')).toEqual([]);
          expect(agent.lastSync?.conntrack).toBeUndefined();
          results.push({ case: `D.7.1 ${label}`, toOldPodIn2s: seen.length, toNewPodIn2s: 0 });
        }
      } finally {
        client?.stop();
        await agent?.close();
      }
    });

    if (via === 'NodePort') continue; // the black-holed flow is shown through the ClusterIP

    it(`D.7.2 ${label}: a flow that started before the Service existed is black-holed — ${c.cleanup ? 'until the first endpoint arrives' : 'and stays so'}`, async (ctx) => {
      if (unavailable) ctx.skip(unavailable);
      const s = await setup(c.backend, c.cleanup);
      let agent: ProxyAgentHandle | undefined;
      const client = s.client('ClusterIP');
      try {
        agent = s.start(); // knows no Service yet: nothing translates the datagrams
        await sleep(300);
        await agent.ready.catch(() => {});
        const entry = spawnSync('ip', ['netns', 'exec', s.lab.node('node-a1').ns, 'conntrack', '-L', '-p', 'udp', '--orig-dst', DNS_IP], { encoding: 'utf8' });
        expect(entry.stdout).toContain(`dst=${DNS_IP} sport=40053 dport=53 [UNREPLIED] src=${DNS_IP}`); // recorded without NAT
        const changedAt = Date.now();
        await s.putService();
        await s.putEndpoints([s.ep('node-a1-pod1')]);
        if (c.cleanup) {
          await until(() => client.replies.some((r) => r.from === 'node-a1-pod1'), 'replies from pod1');
          const report = agent.lastSync?.conntrack;
          expect(report).toMatchObject({ mode: 'executed', failures: [] });
          results.push({ case: `D.7.2 ${label}`, msUntilFirstReply: (client.replies[0]?.t ?? NaN) - changedAt, entriesDeleted: report?.deleted, cleanupMs: report?.durationMs });
        } else {
          await sleep(WATCH_MS);
          expect(client.replies).toEqual([]);
          results.push({ case: `D.7.2 ${label}`, repliesIn2s: 0 });
        }
      } finally {
        client.stop();
        await agent?.close();
      }
    });
  }
});
