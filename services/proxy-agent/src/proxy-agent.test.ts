import { Server } from 'node:net';
import { describeTrace, traceIptables } from '@slicemesh/dataplane/testing';
import type { Service } from '@slicemesh/model';
import { svcClusterFilter, zoneViewsFilter } from '@slicemesh/nats';
import type { ListenOptions } from '@slicemesh/netfilter';
import { ListenError } from '@slicemesh/netfilter';
import { FakeIpLink, FakeIpset, FakeIptables, FakeIpvs, FakeSysctl, RecordingExec } from '@slicemesh/netfilter/testing';
import { UNZONED_VIEW } from '@slicemesh/proxy-state';
import { FakeClock, createLogger, createMetrics, settle } from '@slicemesh/runtime';
import { makeService, makeSlice } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import type { Backend } from './backend.ts';
import { parseProxyAgentConfig } from './config.ts';
import { startProxyAgent } from './proxy-agent.ts';
import { FakeKvSource, del, endpoint, service, slice, svcPut, viewPut } from './test-support.ts';

const C = 'c1';

function harness(env: Record<string, string> = {}) {
  const config = parseProxyAgentConfig([], { NODE_NAME: 'node-a1', NODE_ZONE: 'zone-a', CLUSTER: C, NETNS: 'node-a1-ns', POD_CIDR: '10.244.0.0/16', ...env });
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const ipt = new FakeIptables();
  const rec = new RecordingExec([ipt]);
  const services = new FakeKvSource();
  const views = new FakeKvSource();
  const zone = config.nodeZone === '' ? UNZONED_VIEW : config.nodeZone;
  services.put(svcPut(C, service('web', '10.96.0.10')));
  views.put(viewPut(C, zone, slice('web-1', 'web', [endpoint('10.244.1.2'), endpoint('10.244.2.2')])));
  const listens: ListenOptions[] = [];
  let listenFailures = 0;
  const agent = startProxyAgent(config, {
    sources: { services, views },
    exec: rec.exec,
    // Records what would be opened; the sockets are never bound (the int tests bind real ones).
    listen: async (o) => {
      listens.push(o);
      if (listenFailures > 0) {
        listenFailures--;
        throw new ListenError('EADDRINUSE', o);
      }
      return new Server();
    },
    clock,
    log: createLogger({ service: 'proxy-agent', level: 'silent' }),
    metrics: createMetrics('proxy-agent-test'),
    restartDelay: () => 500,
  });
  // Restores of rules (declaring our chains), not the one that inserts missing jumps.
  const syncs = () => rec.callsTo('iptables-restore').filter((c) => c.input?.includes(':SLICEMESH-')).length;
  const reach = () => describeTrace(traceIptables(ipt.tables, { sourceIP: '10.244.9.9', destIP: '10.96.0.10', destPort: 80 }, { nodeIPs: [] }));
  /** Lets the watches, the runner and the fake exec make progress (no time passes). */
  const flush = async () => {
    for (let i = 0; i < 20; i++) await settle();
  };
  const failNextListens = (n: number) => (listenFailures = n);
  return { config, clock, ipt, rec, services, views, agent, syncs, reach, flush, zone, listens, failNextListens };
}

/** A LoadBalancer Service with externalTrafficPolicy Local and health-check node port `hc`. */
function lbLocal(hc: number): Service {
  return makeService('lb', {
    clusterIP: '10.96.0.30',
    ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP', nodePort: 30080 }],
    spec: { type: 'LoadBalancer', externalTrafficPolicy: 'Local', healthCheckNodePort: hc },
  });
}

describe('startProxyAgent', () => {
  const filterCases: { name: string; env: Record<string, string>; views: string }[] = [
    { name: 'a zoned node watches every service of its cluster and exactly ONE views wildcard, its zone\'s', env: {}, views: zoneViewsFilter(C, 'zone-a') },
    { name: 'a node without zone watches the unfiltered view', env: { NODE_ZONE: '' }, views: zoneViewsFilter(C, UNZONED_VIEW) },
  ];
  for (const tc of filterCases) {
    it(tc.name, async () => {
      const h = harness(tc.env);
      await h.agent.ready;
      expect(h.services.filters).toEqual([svcClusterFilter(C)]);
      expect(h.views.filters).toEqual([tc.views]);
      expect(h.agent.filters).toEqual({ svc: svcClusterFilter(C), views: tc.views });
      await h.agent.close();
    });
  }

  it('habit 5: programs nothing until both initial sets have arrived, then syncs in full', async () => {
    const h = harness();
    h.services.holdInitial();
    await h.flush();
    h.views.put(viewPut(C, 'zone-a', slice('web-1', 'web', [endpoint('10.244.1.2')])));
    await h.flush();
    await h.clock.advanceAsync(60_000);
    expect(h.rec.calls).toEqual([]);
    expect(h.agent.isReady()).toBe(false);
    h.services.releaseInitial();
    await h.agent.ready;
    expect(h.agent.lastSync).toMatchObject({ ok: true, mode: 'full' });
    expect(h.reach()).toBe('10.244.1.2:8080');
    await h.agent.close();
  });

  it('runs every command in the configured network namespace', async () => {
    const h = harness();
    await h.agent.ready;
    expect(new Set(h.rec.calls.map((c) => c.netns))).toEqual(new Set(['node-a1-ns']));
    await h.agent.close();
  });

  it('D.4.14 habit 6: a burst of changes inside MIN_SYNC_PERIOD is coalesced; the last state wins', async () => {
    const h = harness();
    await h.agent.ready;
    expect(h.syncs()).toBe(1);
    for (let i = 3; i < 13; i++) {
      h.views.put(viewPut(C, 'zone-a', slice('web-1', 'web', [endpoint(`10.244.1.${i}`)])));
      await h.flush();
    }
    // Burst 2: the initial sync took one token, the first change the second; the rest wait.
    expect(h.syncs()).toBe(2);
    await h.clock.advanceAsync(1000);
    await h.flush();
    expect(h.syncs()).toBe(3);
    expect(h.reach()).toBe('10.244.1.12:8080');
    await h.agent.close();
  });

  it('habit 2: a no-op update does not wake the runner', async () => {
    const h = harness();
    await h.agent.ready;
    h.views.put(viewPut(C, 'zone-a', slice('web-1', 'web', [endpoint('10.244.1.2'), endpoint('10.244.2.2')])));
    h.services.put(svcPut(C, service('web', '10.96.0.10')));
    await h.flush();
    await h.clock.advanceAsync(5000);
    expect(h.syncs()).toBe(1);
    await h.agent.close();
  });

  it('D.4.14 syncs every SYNC_PERIOD without changes', async () => {
    const h = harness();
    await h.agent.ready;
    await h.clock.advanceAsync(30_000);
    await h.flush();
    expect(h.syncs()).toBe(2);
    expect(h.agent.lastSync).toMatchObject({ ok: true, mode: 'partial', changedServices: [] });
    await h.agent.close();
  });

  it('a failed watch is watched again, and what vanished meanwhile is dropped', async () => {
    const h = harness();
    await h.agent.ready;
    h.views.replaceSilently([]); // the slice was deleted and purged while we were not watching
    h.views.endWatches(new Error('connection lost'));
    await h.flush();
    await h.clock.advanceAsync(500);
    await h.flush();
    await h.clock.advanceAsync(1000);
    await h.flush();
    expect(h.views.filters).toHaveLength(2);
    expect(h.reach()).toBe('REJECT');
    await h.agent.close();
  });

  it('close() before the initial state rejects ready and stops the watches', async () => {
    const h = harness();
    h.views.holdInitial();
    await h.flush();
    await h.agent.close();
    await expect(h.agent.ready).rejects.toThrow(/closed before its first sync/);
    expect(h.rec.calls).toEqual([]);
  });

  it('the ipvs backend refuses to start where IPVS is missing, saying why', async () => {
    const config = parseProxyAgentConfig([], { NODE_NAME: 'n1', BACKEND: 'ipvs' });
    const agent = startProxyAgent(config, {
      sources: { services: new FakeKvSource(), views: new FakeKvSource() },
      exec: new RecordingExec([]).exec,
      log: createLogger({ service: 'proxy-agent', level: 'silent' }),
      metrics: createMetrics('proxy-agent-test'),
    });
    await expect(agent.ready).rejects.toThrow(/the ipvs backend needs IPVS, but `ipvsadm -L -n` fails here: ipvsadm: command not found/);
    await agent.close();
  });

  it('D.11 DUAL_STACK (issue 13, part 4): one sync programs both families, each from its ClusterIP, slices and node settings; a change of either family syncs both backends', async () => {
    const config = parseProxyAgentConfig([], { NODE_NAME: 'n1', NODE_ZONE: 'zone-a', CLUSTER: C, DUAL_STACK: 'true', NODE_IPS: '192.168.0.10,fd00::10', POD_CIDR: 'fd00:10::/64', HEALTH_CHECK_SERVERS: 'off', CONNTRACK_CLEANUP: 'false' });
    const seen: { family: string; clusterIPs: (string | null)[]; endpoints: string[]; nodeIPs: readonly string[]; podCIDR: string | null; changed: string[] | null }[] = [];
    const recorder = (): Backend => ({
      kind: 'iptables',
      sync: async (req) => {
        const ports = req.state.servicePorts;
        seen.push({
          family: req.state.family,
          clusterIPs: ports.map((p) => p.clusterIP),
          endpoints: ports.flatMap((p) => (p.clusterEndpoints ?? []).map((e) => e.ip)),
          nodeIPs: req.state.nodeIPs,
          podCIDR: req.state.podCIDR,
          changed: req.changedServices === null ? null : [...req.changedServices],
        });
        return { mode: req.changedServices === null ? 'full' : 'partial', counts: { nat: ports.length } };
      },
    });
    const services = new FakeKvSource();
    const views = new FakeKvSource();
    services.put(svcPut(C, makeService('web', { clusterIP: '10.96.0.10', ipFamilies: ['IPv4', 'IPv6'], spec: { clusterIPs: ['10.96.0.10', 'fd00:96::10'] } })));
    views.put(viewPut(C, 'zone-a', makeSlice('web-v4', [endpoint('10.244.1.2')], { service: 'web', addressType: 'IPv4' })));
    views.put(viewPut(C, 'zone-a', makeSlice('web-v6', [endpoint('fd00:10::2')], { service: 'web', addressType: 'IPv6' })));
    const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
    const agent = startProxyAgent(config, {
      sources: { services, views },
      backend: recorder(),
      secondaryBackend: recorder(),
      clock,
      log: createLogger({ service: 'proxy-agent', level: 'silent' }),
      metrics: createMetrics('proxy-agent-test'),
    });
    await agent.ready;
    expect(seen).toEqual([
      { family: 'IPv4', clusterIPs: ['10.96.0.10'], endpoints: ['10.244.1.2'], nodeIPs: ['192.168.0.10'], podCIDR: null, changed: null },
      { family: 'IPv6', clusterIPs: ['fd00:96::10'], endpoints: ['fd00:10::2'], nodeIPs: ['fd00::10'], podCIDR: 'fd00:10::/64', changed: null },
    ]);
    expect(agent.lastSync?.counts).toEqual({ nat: 2 });
    seen.length = 0;
    // Only the IPv6 slice changes: still a change for this agent, and both families sync.
    views.put(viewPut(C, 'zone-a', makeSlice('web-v6', [endpoint('fd00:10::3')], { service: 'web', addressType: 'IPv6' })));
    for (let i = 0; i < 20; i++) await settle();
    await clock.advanceAsync(2000);
    for (let i = 0; i < 20; i++) await settle();
    expect(seen.map((s) => [s.family, s.endpoints, s.changed])).toEqual([
      ['IPv4', ['10.244.1.2'], ['default/web']],
      ['IPv6', ['fd00:10::3'], ['default/web']],
    ]);
    await agent.close();
  });

  it('D.11 DUAL_STACK with BACKEND=ipvs: both families share one IPVS table and dummy interface; a later full sync keeps both, an IPv6 Service removed leaves IPv4 alone', async () => {
    const config = parseProxyAgentConfig([], { NODE_NAME: 'n1', NODE_ZONE: 'zone-a', CLUSTER: C, BACKEND: 'ipvs', DUAL_STACK: 'true', NODE_IPS: '192.168.0.10,fd00::10', HEALTH_CHECK_SERVERS: 'off', CONNTRACK_CLEANUP: 'false' });
    const ipvs = new FakeIpvs();
    const link = new FakeIpLink();
    const sysctl = new FakeSysctl({ 'net.ipv4.vs.conntrack': '0', 'net.ipv4.vs.expire_nodest_conn': '0', 'net.ipv4.vs.expire_quiescent_template': '0', 'net.ipv4.ip_forward': '0', 'net.ipv6.conf.all.forwarding': '0' });
    const rec = new RecordingExec([new FakeIpset(), new FakeIptables(), new FakeIptables({ family: 'IPv6' }), ipvs, link, sysctl]);
    const services = new FakeKvSource();
    const views = new FakeKvSource();
    services.put(svcPut(C, makeService('web', { clusterIP: '10.96.0.10', ipFamilies: ['IPv4', 'IPv6'], spec: { clusterIPs: ['10.96.0.10', 'fd00:96::10'] } })));
    services.put(svcPut(C, makeService('six', { clusterIP: 'fd00:96::20', ipFamilies: ['IPv6'] })));
    views.put(viewPut(C, 'zone-a', makeSlice('web-v4', [endpoint('10.244.1.2')], { service: 'web', addressType: 'IPv4' })));
    views.put(viewPut(C, 'zone-a', makeSlice('web-v6', [endpoint('fd00:10::2')], { service: 'web', addressType: 'IPv6' })));
    views.put(viewPut(C, 'zone-a', makeSlice('six-v6', [endpoint('fd00:10::3')], { service: 'six', addressType: 'IPv6' })));
    const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
    const agent = startProxyAgent(config, { sources: { services, views }, exec: rec.exec, clock, log: createLogger({ service: 'proxy-agent', level: 'silent' }), metrics: createMetrics('proxy-agent-test') });
    await agent.ready;
    const vs = () => ipvs.dump().filter((l) => !l.startsWith(' '));
    expect(vs()).toEqual(['TCP/10.96.0.10:80 rr', 'TCP/[fd00:96::10]:80 rr', 'TCP/[fd00:96::20]:80 rr']);
    expect(link.addresses('kube-ipvs0')).toEqual(['10.96.0.10/32', 'fd00:96::10/128', 'fd00:96::20/128']);
    // A full sync later (the sync period) finds both families' servers and keeps them.
    await clock.advanceAsync(config.syncPeriod + 1000);
    for (let i = 0; i < 20; i++) await settle();
    expect(vs()).toEqual(['TCP/10.96.0.10:80 rr', 'TCP/[fd00:96::10]:80 rr', 'TCP/[fd00:96::20]:80 rr']);
    services.put(del(svcPut(C, makeService('six', { clusterIP: 'fd00:96::20', ipFamilies: ['IPv6'] })).key));
    for (let i = 0; i < 20; i++) await settle();
    await clock.advanceAsync(2000);
    for (let i = 0; i < 20; i++) await settle();
    expect(vs()).toEqual(['TCP/10.96.0.10:80 rr', 'TCP/[fd00:96::10]:80 rr']);
    expect(link.addresses('kube-ipvs0')).toEqual(['10.96.0.10/32', 'fd00:96::10/128']);
    expect(ipvs.dump().filter((l) => l.includes('[fd00:10::2]'))).toHaveLength(1);
    await agent.close();
  });

  it('close() releases what the backend holds open (the userspace proxies, issue 13)', async () => {
    const config = parseProxyAgentConfig([], { NODE_NAME: 'n1', BACKEND: 'userspace', HEALTH_CHECK_SERVERS: 'off' });
    let closed = 0;
    const agent = startProxyAgent(config, {
      sources: { services: new FakeKvSource(), views: new FakeKvSource() },
      backend: { kind: 'userspace', sync: async () => ({ mode: 'full', counts: {} }), close: async () => void closed++ },
      exec: new RecordingExec([]).exec,
      log: createLogger({ service: 'proxy-agent', level: 'silent' }),
      metrics: createMetrics('proxy-agent-test'),
    });
    await settle();
    await agent.close();
    await agent.ready.catch(() => {});
    expect(closed).toBe(1);
  });

  it('D.9.3 /healthz: a change that waits HEALTHZ_TIMEOUT for a successful sync turns the agent unhealthy; the next good sync heals it', async () => {
    const h = harness({ HEALTHZ_TIMEOUT: '10s' });
    await h.agent.ready;
    expect(h.agent.healthy()).toBe(true);
    await h.clock.advanceAsync(3_600_000); // quiet for an hour: still healthy
    expect(h.agent.healthy()).toBe(true);
    h.rec.failWhen((c) => c.command === 'iptables-restore', { stderr: 'iptables-restore: line 3 failed\n' }, 1);
    const queuedAt = h.clock.now();
    h.views.put(viewPut(C, 'zone-a', slice('web-1', 'web', [endpoint('10.244.1.7')])));
    await h.flush();
    expect(h.agent.lastSync).toMatchObject({ ok: false });
    await h.clock.advanceAsync(9_999);
    expect(h.agent.healthy()).toBe(true);
    await h.clock.advanceAsync(1);
    expect(h.agent.health()).toMatchObject({ healthy: false, oldestPending: queuedAt });
    await h.clock.advanceAsync(20_000); // the retry after SYNC_PERIOD succeeds
    await h.flush();
    expect(h.agent.lastSync).toMatchObject({ ok: true, mode: 'full' });
    expect(h.agent.health()).toMatchObject({ healthy: true, oldestPending: null, lastUpdated: h.clock.now() });
    await h.agent.close();
  });

  it('D.9.1 a health-check server opens on every node IP of the NETNS for a Local LoadBalancer, moves with its port and closes when the Service goes', async () => {
    const h = harness({ NODE_IPS: '192.168.77.11,192.168.78.11' });
    await h.agent.ready;
    expect(h.listens).toEqual([]);
    h.services.put(svcPut(C, lbLocal(32001)));
    await h.flush();
    await h.clock.advanceAsync(1000);
    await h.flush();
    expect(h.listens).toEqual([
      { host: '192.168.77.11', port: 32001, netns: 'node-a1-ns' },
      { host: '192.168.78.11', port: 32001, netns: 'node-a1-ns' },
    ]);
    expect([...h.agent.healthCheckPorts()]).toEqual([['default/lb', 32001]]);
    h.services.put(svcPut(C, lbLocal(32002)));
    await h.flush();
    await h.clock.advanceAsync(1000);
    await h.flush();
    expect(h.listens.map((l) => l.port)).toEqual([32001, 32001, 32002, 32002]);
    expect([...h.agent.healthCheckPorts()]).toEqual([['default/lb', 32002]]);
    h.services.put(del(svcPut(C, lbLocal(32002)).key));
    await h.flush();
    await h.clock.advanceAsync(1000);
    await h.flush();
    expect([...h.agent.healthCheckPorts()]).toEqual([]);
    await h.agent.close();
  });

  it('D.9.1 a health-check port that cannot be opened is tried again at the next sync', async () => {
    const h = harness();
    await h.agent.ready;
    h.failNextListens(1);
    h.services.put(svcPut(C, lbLocal(32001)));
    await h.flush();
    await h.clock.advanceAsync(1000);
    await h.flush();
    expect(h.listens).toEqual([{ host: '0.0.0.0', port: 32001, netns: 'node-a1-ns' }]);
    expect(h.agent.healthCheckPorts().size).toBe(0);
    await h.clock.advanceAsync(30_000); // the periodic sync
    await h.flush();
    expect(h.listens).toHaveLength(2);
    expect([...h.agent.healthCheckPorts()]).toEqual([['default/lb', 32001]]);
    await h.agent.close();
  });

  it('D.9.1 the dry-run backend serves no health-check ports unless asked to', async () => {
    for (const [setting, opened] of [['auto', 0], ['on', 1]] as const) {
      const config = parseProxyAgentConfig([], { NODE_NAME: 'n1', BACKEND: 'dry-run', HEALTH_CHECK_SERVERS: setting });
      const services = new FakeKvSource();
      services.put(svcPut('local', lbLocal(32001)));
      const listens: ListenOptions[] = [];
      const agent = startProxyAgent(config, {
        sources: { services, views: new FakeKvSource() },
        writeFile: async () => {},
        listen: async (o) => {
          listens.push(o);
          return new Server();
        },
        log: createLogger({ service: 'proxy-agent', level: 'silent' }),
        metrics: createMetrics('proxy-agent-test'),
      });
      await agent.ready;
      expect(listens, setting).toHaveLength(opened);
      await agent.close();
    }
  });
});
