import { renderIptables, serviceChainNames } from '@slicemesh/dataplane';
import { describeTrace, traceIptables, traceNftables } from '@slicemesh/dataplane/testing';
import type { KvChange } from '@slicemesh/nats';
import { svcKey } from '@slicemesh/nats';
import { IptablesRestorer, IpvsClient, NftApplier } from '@slicemesh/netfilter';
import { Conntrack } from '@slicemesh/netfilter';
import type { FakeConntrackEntry } from '@slicemesh/netfilter/testing';
import { FakeConntrack, FakeIpLink, FakeIptables, FakeIpvs, FakeNft, RecordingExec } from '@slicemesh/netfilter/testing';
import { FakeClock, createLogger, createMetrics } from '@slicemesh/runtime';
import { deepFreeze, makeService, makeSlice } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import type { Backend } from './backend.ts';
import { DryRunBackend } from './backends/dry-run-backend.ts';
import { IptablesBackend } from './backends/iptables-backend.ts';
import { IpvsBackend } from './backends/ipvs-backend.ts';
import { NftablesBackend } from './backends/nftables-backend.ts';
import { UserspaceBackend } from './backends/userspace-backend.ts';
import type { BackendKind } from './config.ts';
import { KernelConntrackCleaner, RecordingConntrackCleaner } from './conntrack-cleaner.ts';
import type { NodeSettings } from './dp-model.ts';
import { createProxyMetrics } from './metrics.ts';
import { ProxySyncer } from './sync.ts';
import { del, endpoint, service, slice, svcPut, viewPut } from './test-support.ts';
import { ViewState } from './view-state.ts';

const C = 'c1';
const Z = 'zone-a';
const T0 = Date.parse('2026-01-01T00:00:10Z');
const settings: NodeSettings = { nodeName: 'node-a1', zone: Z, family: 'IPv4', nodeIPs: [], podCIDR: '10.244.0.0/16', masqueradeAll: false, masqueradeBit: 14 };
const FULL_SYNC_PERIOD = 3_600_000;

function harness(kind: BackendKind = 'iptables', o: { readonly conntrack?: 'kernel' | 'record' } = {}) {
  const clock = new FakeClock(T0);
  const ipt = new FakeIptables();
  const nft = new FakeNft();
  const ipvs = new FakeIpvs();
  const link = new FakeIpLink();
  const ct = new FakeConntrack();
  const rec = new RecordingExec([ipt, nft, ipvs, link, ct]);
  const files = new Map<string, string>();
  const cleaner =
    o.conntrack === 'kernel'
      ? new KernelConntrackCleaner({ conntrack: new Conntrack({ exec: rec.exec }) })
      : o.conntrack === 'record'
        ? new RecordingConntrackCleaner({ file: '/out/rules.conntrack', clock, appendFile: async (p, t) => void files.set(p, (files.get(p) ?? '') + t) })
        : undefined;
  const backends: Record<BackendKind, () => Backend> = {
    iptables: () => new IptablesBackend({ restorer: new IptablesRestorer({ exec: rec.exec }), clock, jumpCheckIntervalMs: 30_000 }),
    nftables: () => new NftablesBackend({ nft: new NftApplier({ exec: rec.exec }) }),
    ipvs: () => new IpvsBackend({ client: new IpvsClient({ exec: rec.exec }), scheduler: 'rr' }),
    userspace: () =>
      new UserspaceBackend({
        restorer: new IptablesRestorer({ exec: rec.exec }),
        proxies: {
          sync: async (specs) => Object.fromEntries(specs.map((s, i) => [s.key, 40000 + i])),
          stats: async () => ({ connections: 0, connectFailures: 0, retries: 0, exhausted: 0, perEndpoint: {} }),
          close: async () => {},
        },
      }),
    'dry-run': () => new DryRunBackend({ file: '/out/rules', format: 'iptables', scheduler: 'rr', writeFile: async (p, t) => void files.set(p, t) }),
  };
  const state = new ViewState({ cluster: C, view: Z, nodeName: 'node-a1', family: 'IPv4' });
  const metrics = createMetrics('proxy-agent-test');
  const logs: Record<string, unknown>[] = [];
  const log = createLogger({ service: 'proxy-agent', destination: { write: (l: string) => void logs.push(JSON.parse(l) as Record<string, unknown>) } });
  const retries: number[] = [];
  const syncer = new ProxySyncer({
    state, backend: backends[kind](), settings, clock, metrics: createProxyMetrics(metrics, kind), log, fullSyncPeriodMs: FULL_SYNC_PERIOD, retryAfter: (ms) => retries.push(ms), retryDelayMs: 30_000,
    ...(cleaner ? { conntrack: cleaner } : {}),
  });
  const put = (c: Omit<KvChange, 'revision'>) => (c.key.split('.').length === 3 ? state.applyService({ ...c, revision: 1 }) : state.applyView({ ...c, revision: 1 }));
  /** Endpoints a new connection from a pod to ip:port may reach ('' when no rule decides). */
  const reach = (ip: string, port = 80) =>
    kind === 'nftables'
      ? describeTrace(traceNftables(nft.ruleset, { sourceIP: '10.244.9.9', destIP: ip, destPort: port }, { nodeIPs: ['192.168.50.11'] }))
      : describeTrace(traceIptables(ipt.tables, { sourceIP: '10.244.9.9', destIP: ip, destPort: port }, { nodeIPs: ['192.168.50.11'] }));
  type Sample = { readonly value: number; readonly labels: Readonly<Record<string, string | number | undefined>>; readonly metricName?: string };
  const metric = async (name: string): Promise<readonly Sample[]> => ((await metrics.registry.getSingleMetric(`slicemesh_${name}`)?.get())?.values ?? []) as readonly Sample[];
  return { clock, ipt, nft, ipvs, link, ct, rec, files, state, syncer, logs, retries, put, reach, metric };
}

const web = deepFreeze(service('web', '10.96.0.10'));
const api = deepFreeze(service('api', '10.96.0.20'));
const webSlice = (...ips: string[]) => deepFreeze(slice('web-1', 'web', ips.map((ip) => endpoint(ip))));
const apiSlice = deepFreeze(slice('api-1', 'api', [endpoint('10.244.1.9')]));
const chains = (svc: string) => serviceChainNames({ servicePortName: `default/${svc}:http`, protocol: 'TCP' });

function seed(h: ReturnType<typeof harness>): void {
  for (const c of [svcPut(C, web), svcPut(C, api), viewPut(C, Z, webSlice('10.244.1.2', '10.244.2.2')), viewPut(C, Z, apiSlice)]) h.put(c);
}

describe('ProxySyncer with the iptables backend', () => {
  it('D.4.12 the first sync is full: the node read once, one restore of the rules, one of the missing jumps; packets reach every endpoint', async () => {
    const h = harness();
    seed(h);
    const r = await h.syncer.sync();
    expect(r).toMatchObject({ ok: true, mode: 'full', changedServices: ['default/api', 'default/web'] });
    expect(h.rec.commandLines()).toEqual(['iptables-save', 'iptables-restore --noflush -w', 'iptables-restore --noflush -w']);
    expect(h.rec.callsTo('iptables-restore')[1]?.input).toContain('-I PREROUTING 1 ');
    expect(h.reach('10.96.0.10')).toBe('10.244.1.2:8080, 10.244.2.2:8080');
    expect(h.reach('10.96.0.20')).toBe('10.244.1.9:8080');
  });

  it('D.4.12 an endpoint change is a partial sync rewriting only that service\'s chains', async () => {
    const h = harness();
    seed(h);
    await h.syncer.sync();
    h.rec.clear();
    h.put(viewPut(C, Z, webSlice('10.244.1.2')));
    const r = await h.syncer.sync();
    expect(r).toMatchObject({ ok: true, mode: 'partial', changedServices: ['default/web'] });
    const script = h.rec.callsTo('iptables-restore')[0]?.input ?? '';
    expect(script).toContain(`:${chains('web').svc} `);
    expect(script).not.toContain(chains('api').svc);
    expect(h.rec.callsTo('iptables-save')).toEqual([]); // a partial sync observes nothing
    expect(h.rec.callsTo('iptables')).toEqual([]); // jumps are re-checked only on full syncs or after syncPeriod
    expect(h.reach('10.96.0.10')).toBe('10.244.1.2:8080');
    expect(h.reach('10.96.0.20')).toBe('10.244.1.9:8080');
  });

  it('D.3.2 deleting every endpoint leaves a REJECT; deleting the service removes its chains', async () => {
    const h = harness();
    seed(h);
    await h.syncer.sync();
    h.put(del(viewPut(C, Z, webSlice()).key));
    await h.syncer.sync();
    expect(h.reach('10.96.0.10')).toBe('REJECT');
    h.put(del(svcKey({ cluster: C, namespace: 'default', name: 'web' })));
    expect(await h.syncer.sync()).toMatchObject({ ok: true, mode: 'partial' });
    expect(h.ipt.userChains('nat').filter((c) => c.includes(chains('web').svc.slice(9)))).toEqual([]);
    expect(h.reach('10.96.0.10')).toBe('');
  });

  it('habit 5: a failed restore logs the failing lines ±3, asks for a retry, and the next sync is full', async () => {
    const h = harness();
    seed(h);
    await h.syncer.sync();
    h.put(viewPut(C, Z, webSlice('10.244.1.2')));
    h.rec.failWhen((c) => c.command === 'iptables-restore', { code: 1, stderr: 'iptables-restore: line 5 failed\n' });
    const failed = await h.syncer.sync();
    expect(failed).toMatchObject({ ok: false, mode: 'partial', error: expect.stringContaining('at line 5') });
    expect(h.retries).toEqual([30_000]);
    const line = h.logs.find((l) => l['level'] === 'error');
    expect(line?.['failingLines']).toMatch(/^ {6}2 {2}.*\n(.*\n){2}> {5}5 {2}/);
    expect(h.syncer.needsFullSync).toBe(true);
    expect((await h.metric('sync_proxy_rules_failures_total'))[0]).toMatchObject({ value: 1, labels: { mode: 'partial' } });
    // The kernel still routes the old endpoints: the failed block committed nothing.
    expect(h.reach('10.96.0.10')).toBe('10.244.1.2:8080, 10.244.2.2:8080');
    h.rec.clear();
    const retry = await h.syncer.sync();
    expect(retry).toMatchObject({ ok: true, mode: 'full' });
    expect(h.rec.callsTo('iptables-save')).toHaveLength(1);
    const script = h.rec.callsTo('iptables-restore')[0]?.input ?? '';
    expect(script).toContain(`:${chains('api').svc} `); // every service rewritten
    expect(h.reach('10.96.0.10')).toBe('10.244.1.2:8080');
  });

  it('a full sync deletes stale service chains it never knew about (left by an earlier run)', async () => {
    const h = harness();
    await h.rec.exec({ command: 'iptables-restore', args: ['--noflush'], input: '*nat\n:SLICEMESH-SVC-OLDOLDOLDOLDOL - [0:0]\n:SLICEMESH-MARK-MASQ - [0:0]\nCOMMIT\n' });
    seed(h);
    await h.syncer.sync();
    expect(h.ipt.userChains('nat')).not.toContain('SLICEMESH-SVC-OLDOLDOLDOLDOL');
  });

  it('D.4.15 a full sync leaves kube-proxy\'s chains, jumps and rules alone', async () => {
    const h = harness();
    const kubeProxy = '*nat\n:KUBE-SERVICES - [0:0]\n:KUBE-SVC-OLDOLDOLDOLDOLD0 - [0:0]\n:KUBE-MARK-MASQ - [0:0]\n-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000\n-A KUBE-SERVICES -d 10.96.0.99/32 -j KUBE-SVC-OLDOLDOLDOLDOLD0\n-I PREROUTING 1 -j KUBE-SERVICES\nCOMMIT\n';
    await h.rec.exec({ command: 'iptables-restore', args: ['--noflush'], input: kubeProxy });
    const before = ['KUBE-SERVICES', 'KUBE-SVC-OLDOLDOLDOLDOLD0', 'KUBE-MARK-MASQ', 'PREROUTING'].map((c) => h.ipt.rules('nat', c));
    seed(h);
    expect(await h.syncer.sync()).toMatchObject({ ok: true, mode: 'full' });
    expect(['KUBE-SERVICES', 'KUBE-SVC-OLDOLDOLDOLDOLD0', 'KUBE-MARK-MASQ'].map((c) => h.ipt.rules('nat', c))).toEqual(before.slice(0, 3));
    // Our jump is inserted at the top; kube-proxy's stays below it.
    expect(h.ipt.rules('nat', 'PREROUTING')).toEqual(['-m comment --comment kubernetes service portals -j SLICEMESH-SERVICES', ...(before[3] ?? [])]);
    expect(h.ipt.userChains('nat').filter((c) => c.startsWith('SLICEMESH-SVC-'))).toHaveLength(2);
    expect(h.reach('10.96.0.10')).toBe('10.244.1.2:8080, 10.244.2.2:8080');
  });

  it('D.4.12 a full sync at least every FULL_SYNC_PERIOD, partial in between', async () => {
    const h = harness();
    seed(h);
    const modes = [(await h.syncer.sync()).mode];
    h.clock.advance(FULL_SYNC_PERIOD - 1);
    modes.push((await h.syncer.sync()).mode);
    h.clock.advance(1);
    modes.push((await h.syncer.sync()).mode);
    modes.push((await h.syncer.sync()).mode);
    expect(modes).toEqual(['full', 'partial', 'full', 'partial']);
  });

  it('metrics: sync duration by mode, programming latency from the trigger time, rule counts', async () => {
    const h = harness();
    h.put(svcPut(C, web));
    h.put(viewPut(C, Z, slice('web-1', 'web', [endpoint('10.244.1.2')], { triggerTime: new Date(T0 - 4000).toISOString() })));
    await h.syncer.sync();
    h.clock.advance(1000);
    h.put(viewPut(C, Z, slice('web-1', 'web', [endpoint('10.244.1.3')], { triggerTime: new Date(T0).toISOString() })));
    await h.syncer.sync();
    const counts = (await h.metric('sync_proxy_rules_duration_seconds')).filter((v) => v.metricName?.endsWith('_count'));
    expect(counts.map((v) => [v.labels['mode'], v.value])).toEqual([['full', 1], ['partial', 1]]);
    const latency = await h.metric('network_programming_duration_seconds');
    expect(latency.find((v) => v.metricName?.endsWith('_sum'))?.value).toBe(5); // 4 s + 1 s
    expect(latency.find((v) => v.metricName?.endsWith('_count'))?.value).toBe(2);
    const rules = await h.metric('sync_proxy_rules_iptables_total');
    const nat = rules.find((v) => v.labels['table'] === 'nat')?.value;
    expect(nat).toBe(renderIptables({ family: 'IPv4', nodeIPs: [], primaryNodeIP: null, podCIDR: '10.244.0.0/16', masqueradeAll: false, masqueradeBit: 14, servicePorts: [] }).ruleCounts.nat + 5); // dispatch, SVC: masquerade non-pod + jump, SEP: hairpin + DNAT
    expect(nat).toBe(h.syncer.lastSync?.counts?.['nat']);
    expect((await h.metric('sync_proxy_rules_endpoint_changes_total'))[0]?.value).toBe(2);
  });
});

describe('ProxySyncer with the nftables backend', () => {
  it('D.6.9 the first sync replaces the table, a change is one transaction touching only what changed', async () => {
    const h = harness('nftables');
    seed(h);
    expect(await h.syncer.sync()).toMatchObject({ ok: true, mode: 'full' });
    expect(h.nft.scripts[0]).toMatch(/^add table ip slicemesh\ndelete table ip slicemesh\n/);
    expect(h.reach('10.96.0.10')).toBe('10.244.1.2:8080, 10.244.2.2:8080');
    h.put(viewPut(C, Z, webSlice('10.244.1.2', '10.244.1.5')));
    expect(await h.syncer.sync()).toMatchObject({ ok: true, mode: 'partial' });
    const update = h.nft.scripts[1] ?? '';
    expect(update).not.toContain('delete table');
    expect(update).not.toContain('default/api');
    expect(update).toContain('10.244.1.5');
    expect(h.reach('10.96.0.10')).toBe('10.244.1.2:8080, 10.244.1.5:8080');
    expect(h.reach('10.96.0.20')).toBe('10.244.1.9:8080');
  });

  it('habit 5: after a failed transaction the next sync rewrites the whole table', async () => {
    const h = harness('nftables');
    seed(h);
    await h.syncer.sync();
    h.put(viewPut(C, Z, webSlice('10.244.1.2')));
    h.rec.failWhen((c) => c.command === 'nft', { code: 1, stderr: '/dev/stdin:2:1-5: Error: boom\n' });
    expect(await h.syncer.sync()).toMatchObject({ ok: false, mode: 'partial' });
    expect(await h.syncer.sync()).toMatchObject({ ok: true, mode: 'full' });
    expect(h.nft.scripts.at(-1)).toMatch(/^add table ip slicemesh\ndelete table ip slicemesh\n/);
    expect(h.reach('10.96.0.10')).toBe('10.244.1.2:8080');
  });
});

describe('ProxySyncer with the IPVS backend (fake kernel)', () => {
  it('D.5 virtual servers on the dummy interface; a removed TCP real server is quiesced, then deleted when idle', async () => {
    const h = harness('ipvs');
    seed(h);
    expect(await h.syncer.sync()).toMatchObject({ ok: true, mode: 'full', counts: { virtual_servers: 2, real_servers: 3, addresses: 2 } });
    expect(h.link.addresses('kube-ipvs0')).toEqual(['10.96.0.10/32', '10.96.0.20/32']);
    h.ipvs.setConnections('TCP/10.96.0.10:80', '10.244.2.2:8080', 1);
    h.put(viewPut(C, Z, webSlice('10.244.1.2')));
    await h.syncer.sync();
    expect(h.ipvs.dump()).toContain('  -> 10.244.2.2:8080 weight 0');
    h.ipvs.setConnections('TCP/10.96.0.10:80', '10.244.2.2:8080', 0);
    await h.syncer.sync(); // the periodic sync notices the idle server
    expect(h.ipvs.dump().filter((l) => l.includes('10.244.2.2'))).toEqual([]);
  });
});

describe('ProxySyncer with the userspace backend (fake kernel, fake proxies)', () => {
  it('issue 13: one proxy per service port; the ClusterIP is REDIRECTed to its port from PREROUTING and OUTPUT', async () => {
    const h = harness('userspace');
    seed(h);
    const r = await h.syncer.sync();
    expect(r, JSON.stringify(h.logs.at(-1))).toMatchObject({ ok: true, mode: 'full' });
    const script = h.rec.callsTo('iptables-restore')[0]?.input ?? '';
    expect(script).toContain('-A SLICEMESH-PORTALS-CONTAINER -m comment --comment "default/api:http" -d 10.96.0.20/32 -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 40000');
    expect(script).toContain('-A SLICEMESH-PORTALS-HOST -m comment --comment "default/web:http" -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 40001');
    const inserts = h.rec.callsTo('iptables-restore').flatMap((c) => (c.input ?? '').split('\n').filter((l) => l.startsWith('-I ')));
    expect(inserts.map((l) => l.split(' ')[1])).toEqual(['OUTPUT', 'PREROUTING']);
  });
});

describe('ProxySyncer with the dry-run backend', () => {
  it('writes the complete ruleset a fresh node would need after every sync, programming nothing', async () => {
    const h = harness('dry-run');
    seed(h);
    await h.syncer.sync();
    const text = h.files.get('/out/rules') ?? '';
    expect(text).toMatch(/^\*filter\n/);
    expect(text).toContain('-I PREROUTING 1');
    expect(describeTrace(traceIptables(text, { sourceIP: '10.244.9.9', destIP: '10.96.0.20', destPort: 80 }, { nodeIPs: [] }))).toBe('10.244.1.9:8080');
    expect(h.rec.calls).toEqual([]);
  });
});

// A UDP DNS service with a NodePort, and flows a client keeps sending (D.7).
const dns = deepFreeze(
  makeService('dns', { clusterIP: '10.96.0.53', ports: [{ name: 'dns', port: 53, targetPort: 5353, protocol: 'UDP', nodePort: 30053 }], spec: { type: 'NodePort' } }),
);
const dnsSlice = (...ips: string[]) => deepFreeze(makeSlice('dns-1', ips.map((ip) => endpoint(ip)), { service: 'dns', ports: [{ name: 'dns', port: 5353, protocol: 'UDP' }] }));
const udpFlow = (client: string, dst: string, dport: number, replySrc: string): FakeConntrackEntry => ({
  family: 'IPv4',
  protocol: 'UDP',
  orig: { src: client, dst, sport: 41000, dport },
  reply: { src: replySrc, dst: client, sport: 5353, dport: 41000 },
});
const flows = (h: ReturnType<typeof harness>) => h.ct.entries().map((e) => `${e.orig.dst}:${e.orig.dport}>${e.reply.src}`).sort();

describe('ProxySyncer conntrack cleanup (D.7)', () => {
  it('D.7.1 a removed UDP endpoint: the rules are applied first, then its flows through the ClusterIP and the NodePort are deleted', async () => {
    const h = harness('iptables', { conntrack: 'kernel' });
    h.put(svcPut(C, dns));
    h.put(viewPut(C, Z, dnsSlice('10.244.1.2', '10.244.2.2')));
    expect((await h.syncer.sync()).conntrack).toMatchObject({ mode: 'executed', deleted: 0 }); // newly active, nothing black-holed yet
    h.ct.insert(
      udpFlow('10.244.9.9', '10.96.0.53', 53, '10.244.1.2'),
      udpFlow('10.244.9.8', '10.96.0.53', 53, '10.244.2.2'),
      udpFlow('192.168.77.100', '192.168.50.11', 30053, '10.244.1.2'),
      udpFlow('10.244.9.9', '10.96.0.99', 53, '10.244.1.2'), // another service's flow to the same pod IP
    );
    h.rec.clear();
    h.put(viewPut(C, Z, dnsSlice('10.244.2.2')));
    const r = await h.syncer.sync();
    expect(r).toMatchObject({ ok: true, mode: 'partial', conntrack: { mode: 'executed', deleted: 2, failures: [] } });
    expect(flows(h)).toEqual(['10.96.0.53:53>10.244.2.2', '10.96.0.99:53>10.244.1.2']);
    const order = h.rec.calls.map((c) => c.command);
    expect(order.indexOf('iptables-restore')).toBeLessThan(order.indexOf('conntrack'));
    expect(h.rec.callsTo('conntrack').map((c) => c.args.join(' '))).toEqual([
      '-D -p udp --orig-port-dst 30053 --reply-src 10.244.1.2 -f ipv4',
      '-D -p udp --orig-dst 10.96.0.53 --orig-port-dst 53 --reply-src 10.244.1.2 -f ipv4',
    ]);
    expect((await h.metric('conntrack_cleanup_filters_total')).find((v) => v.labels['reason'] === 'endpoint-removed')).toMatchObject({ value: 2, labels: { result: 'executed' } });
    expect((await h.metric('conntrack_entries_deleted_total'))[0]?.value).toBe(2);
  });

  it('D.7.2 the first endpoint of a UDP service: flows black-holed while it had none are deleted', async () => {
    const h = harness('nftables', { conntrack: 'kernel' });
    h.put(svcPut(C, dns));
    await h.syncer.sync();
    h.ct.insert(udpFlow('10.244.9.9', '10.96.0.53', 53, '10.96.0.53'), udpFlow('192.168.77.100', '192.168.50.11', 30053, '192.168.50.11'));
    h.put(viewPut(C, Z, dnsSlice('10.244.1.2')));
    expect(await h.syncer.sync()).toMatchObject({ ok: true, conntrack: { deleted: 2 } });
    expect(flows(h)).toEqual([]);
  });

  it('D.7 a TCP change runs no conntrack at all', async () => {
    const h = harness('iptables', { conntrack: 'kernel' });
    seed(h);
    await h.syncer.sync();
    h.put(viewPut(C, Z, webSlice('10.244.1.2')));
    expect((await h.syncer.sync()).conntrack).toBeUndefined();
    expect(h.rec.callsTo('conntrack')).toEqual([]);
  });

  it('D.7 a failed apply cleans nothing; the full sync that follows cleans what it would have', async () => {
    const h = harness('iptables', { conntrack: 'kernel' });
    h.put(svcPut(C, dns));
    h.put(viewPut(C, Z, dnsSlice('10.244.1.2', '10.244.2.2')));
    await h.syncer.sync();
    h.ct.insert(udpFlow('10.244.9.9', '10.96.0.53', 53, '10.244.1.2'));
    h.put(viewPut(C, Z, dnsSlice('10.244.2.2')));
    h.rec.failWhen((c) => c.command === 'iptables-restore', { stderr: 'iptables-restore: line 2 failed\n' });
    expect(await h.syncer.sync()).toMatchObject({ ok: false });
    expect(flows(h)).toEqual(['10.96.0.53:53>10.244.1.2']); // the old rules still route there
    expect(await h.syncer.sync()).toMatchObject({ ok: true, mode: 'full', conntrack: { deleted: 1 } });
    expect(flows(h)).toEqual([]);
  });

  it('D.7 best effort: a failing conntrack is logged and counted, the sync still succeeds', async () => {
    const h = harness('iptables', { conntrack: 'kernel' });
    h.put(svcPut(C, dns));
    h.put(viewPut(C, Z, dnsSlice('10.244.1.2')));
    await h.syncer.sync();
    h.put(viewPut(C, Z, dnsSlice('10.244.2.2')));
    h.rec.failWhen((c) => c.command === 'conntrack', { code: 127, stderr: 'conntrack: command not found\n' }, 10);
    const r = await h.syncer.sync();
    expect(r).toMatchObject({ ok: true, conntrack: { deleted: 0 } });
    expect(r.conntrack?.failures.length).toBeGreaterThan(0);
    expect(h.logs.some((l) => l['level'] === 'warn' && String(l['err']).includes('command not found'))).toBe(true);
    expect((await h.metric('conntrack_cleanup_filters_total')).some((v) => v.labels['result'] === 'failed' && v.value > 0)).toBe(true);
  });

  it('D.7 dry-run records the commands next to the rules file and runs nothing', async () => {
    const h = harness('dry-run', { conntrack: 'record' });
    h.put(svcPut(C, dns));
    h.put(viewPut(C, Z, dnsSlice('10.244.1.2')));
    await h.syncer.sync();
    h.clock.advance(5000);
    h.put(viewPut(C, Z, dnsSlice('10.244.2.2')));
    expect(await h.syncer.sync()).toMatchObject({ ok: true, conntrack: { mode: 'recorded', deleted: 0 } });
    expect(h.rec.calls).toEqual([]);
    expect(h.files.get('/out/rules.conntrack')).toBe(
      [
        '# 2026-01-01T00:00:10.000Z',
        '# default/dns:dns/UDP newly-active',
        'conntrack -D -p udp --orig-port-dst 30053 -f ipv4',
        '# default/dns:dns/UDP newly-active',
        'conntrack -D -p udp --orig-dst 10.96.0.53 --orig-port-dst 53 -f ipv4',
        '# 2026-01-01T00:00:15.000Z',
        '# default/dns:dns/UDP endpoint-removed',
        'conntrack -D -p udp --orig-port-dst 30053 --reply-src 10.244.1.2 -f ipv4',
        '# default/dns:dns/UDP endpoint-removed',
        'conntrack -D -p udp --orig-dst 10.96.0.53 --orig-port-dst 53 --reply-src 10.244.1.2 -f ipv4',
        '',
      ].join('\n'),
    );
    expect((await h.metric('conntrack_cleanup_filters_total')).every((v) => v.labels['result'] === 'recorded')).toBe(true);
  });
});
