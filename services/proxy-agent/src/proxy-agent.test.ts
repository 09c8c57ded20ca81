import { describeTrace, traceIptables } from '@slicemesh/dataplane/testing';
import { svcClusterFilter, zoneViewsFilter } from '@slicemesh/nats';
import { FakeIptables, RecordingExec } from '@slicemesh/netfilter/testing';
import { UNZONED_VIEW } from '@slicemesh/proxy-state';
import { FakeClock, createLogger, createMetrics, settle } from '@slicemesh/runtime';
import { describe, expect, it } from 'vitest';
import { parseProxyAgentConfig } from './config.ts';
import { startProxyAgent } from './proxy-agent.ts';
import { FakeKvSource, endpoint, service, slice, svcPut, viewPut } from './test-support.ts';

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
  const agent = startProxyAgent(config, {
    sources: { services, views },
    exec: rec.exec,
    clock,
    log: createLogger({ service: 'proxy-agent', level: 'silent' }),
    metrics: createMetrics('proxy-agent-test'),
    restartDelay: () => 500,
  });
  const syncs = () => rec.callsTo('iptables-restore').length;
  const reach = () => describeTrace(traceIptables(ipt.tables, { sourceIP: '10.244.9.9', destIP: '10.96.0.10', destPort: 80 }, { nodeIPs: [] }));
  /** Lets the watches, the runner and the fake exec make progress (no time passes). */
  const flush = async () => {
    for (let i = 0; i < 20; i++) await settle();
  };
  return { config, clock, ipt, rec, services, views, agent, syncs, reach, flush, zone };
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
});
