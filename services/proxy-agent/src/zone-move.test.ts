// The agent and its Node's zone, end to end in memory: startProxyAgent with the Node's KUBE
// subject, the svc and views buckets and iptables faked; packets traced through the rules.

import { describeTrace, traceIptables } from '@slicemesh/dataplane/testing';
import { FakeIptables, RecordingExec } from '@slicemesh/netfilter/testing';
import { UNZONED_VIEW } from '@slicemesh/proxy-state';
import { FakeClock, createLogger, createMetrics, settle } from '@slicemesh/runtime';
import { describe, expect, it } from 'vitest';
import { parseProxyAgentConfig } from './config.ts';
import { startProxyAgent } from './proxy-agent.ts';
import { FakeKvSource, FakeNodeSource, endpoint, nodeMessage, service, slice, svcPut, viewPut } from './test-support.ts';

const C = 'c1';
const A = '10.244.1.2';
const B = '10.244.2.2';

function harness(env: Record<string, string> = {}, o: { readonly node?: 'zone-a' | 'zone-b' | 'no-label' | 'absent'; readonly failFirstReads?: number } = {}) {
  const config = parseProxyAgentConfig([], { NODE_NAME: 'node-1', CLUSTER: C, POD_CIDR: '10.244.0.0/16', ...env });
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const ipt = new FakeIptables();
  const rec = new RecordingExec([ipt]);
  const services = new FakeKvSource();
  const views = new FakeKvSource();
  const node = new FakeNodeSource();
  // One endpoint per zone, each hinted for its own zone, in every view: what the node picks
  // depends on the view it reads and on its own zone label.
  const web = slice('web-1', 'web', [endpoint(A, { zone: 'zone-a', hints: ['zone-a'] }), endpoint(B, { zone: 'zone-b', hints: ['zone-b'] })]);
  services.put(svcPut(C, service('web', '10.96.0.10')));
  for (const v of ['zone-a', 'zone-b', UNZONED_VIEW]) views.put(viewPut(C, v, web));
  const stored = o.node ?? 'zone-a';
  if (stored !== 'absent') node.publish(nodeMessage(C, 'node-1', stored === 'no-label' ? undefined : stored));
  if (o.failFirstReads !== undefined) node.failFollows(o.failFirstReads, new Error('stream not found'));
  const logs: Record<string, unknown>[] = [];
  const metrics = createMetrics('proxy-agent-test');
  const agent = startProxyAgent(config, {
    sources: { services, views },
    node,
    exec: rec.exec,
    clock,
    log: createLogger({ service: 'proxy-agent', destination: { write: (l: string) => void logs.push(JSON.parse(l) as Record<string, unknown>) } }),
    metrics,
    restartDelay: () => 500,
  });
  const reach = () => describeTrace(traceIptables(ipt.tables, { sourceIP: '10.244.9.9', destIP: '10.96.0.10', destPort: 80 }, { nodeIPs: [] }));
  /** What every restore so far programmed for the ClusterIP, in order. */
  const programmed: string[] = [];
  let restores = 0;
  const flush = async () => {
    for (let i = 0; i < 20; i++) await settle();
    const n = rec.callsTo('iptables-restore').length;
    if (n !== restores) programmed.push(reach());
    restores = n;
  };
  const metric = async (name: string) => (await metrics.registry.getSingleMetric(`slicemesh_${name}`)?.get())?.values ?? [];
  return { config, clock, ipt, rec, services, views, node, agent, reach, flush, programmed, logs, metric };
}

describe('the agent follows its Node\'s zone', () => {
  it('the zone comes from the Node in KUBE, and the first sync already has it (no unzoned sync first)', async () => {
    const h = harness();
    await h.agent.ready;
    await h.flush();
    expect(h.views.filters).toEqual(['c1.zone-a.>']);
    expect(h.agent.zone()).toMatchObject({ zone: 'zone-a', source: 'node', node: 'present', view: 'zone-a' });
    expect(h.programmed).toEqual([`${A}:8080`]);
    expect(h.logs.filter((l) => l['msg'] === 'reading the views of this node\'s zone')).toEqual([expect.objectContaining({ zone: 'zone-a', reason: 'zone zone-a from Node node-1\'s topology.kubernetes.io/zone label' })]);
    expect(await h.metric('proxy_zone_info')).toEqual([expect.objectContaining({ value: 1, labels: expect.objectContaining({ view: 'zone-a', source: 'node' }) as unknown })]);
    await h.agent.close();
  });

  it('a relabel moves the agent to the new zone\'s views without a restart: ready throughout, the old rules until the new view is in, then one full sync', async () => {
    const h = harness();
    await h.agent.ready;
    await h.flush();
    h.views.holdInitial(); // the new zone's views arrive slowly
    h.node.publish(nodeMessage(C, 'node-1', 'zone-b'));
    await h.flush();
    await h.clock.advanceAsync(60_000); // periodic syncs meanwhile keep the old zone's rules
    await h.flush();
    expect(h.agent.isReady()).toBe(true);
    expect(h.agent.healthy()).toBe(true);
    expect(h.views.filters).toEqual(['c1.zone-a.>', 'c1.zone-b.>']);
    expect(h.agent.zone()).toMatchObject({ zone: 'zone-b', view: 'zone-a' });
    expect(h.reach()).toBe(`${A}:8080`);
    h.views.releaseInitial();
    await h.flush();
    await h.clock.advanceAsync(1000);
    await h.flush();
    expect(h.agent.zone()).toMatchObject({ zone: 'zone-b', source: 'node', node: 'present', view: 'zone-b' });
    expect(h.agent.lastSync).toMatchObject({ ok: true, mode: 'full' });
    expect(h.reach()).toBe(`${B}:8080`);
    // Never an empty rule set, never the unfiltered view in between.
    expect(new Set(h.programmed)).toEqual(new Set([`${A}:8080`, `${B}:8080`]));
    expect(h.programmed.at(-1)).toBe(`${B}:8080`);
    expect(h.logs.filter((l) => l['msg'] === 'moved to the views of the new zone; one full sync follows')).toEqual([expect.objectContaining({ from: 'zone-a', to: 'zone-b', entries: 1 })]);
    expect((await h.metric('proxy_zone_moves_total'))[0]?.value).toBe(1);
    expect(await h.metric('proxy_zone_info')).toEqual([expect.objectContaining({ value: 1, labels: expect.objectContaining({ view: 'zone-b' }) as unknown })]);
    await h.agent.close();
  });

  it('removing the zone label moves the agent to the unfiltered view', async () => {
    const h = harness();
    await h.agent.ready;
    h.node.publish(nodeMessage(C, 'node-1', undefined));
    await h.flush();
    await h.clock.advanceAsync(1000);
    await h.flush();
    expect(h.agent.filters.views).toBe('c1._.>');
    expect(h.agent.zone()).toMatchObject({ zone: '', view: UNZONED_VIEW });
    // No zone: hints do not apply, every endpoint is used.
    expect(h.reach()).toBe(`${A}:8080, ${B}:8080`);
    await h.agent.close();
  });

  const starts: { name: string; node: 'zone-a' | 'no-label' | 'absent'; views: string; reach: string; description: RegExp }[] = [
    { name: 'a Node without a zone label reads the unfiltered view, as an agent without NODE_ZONE did', node: 'no-label', views: 'c1._.>', reach: `${A}:8080, ${B}:8080`, description: /^no zone \(view _\) from Node node-1's topology\.kubernetes\.io\/zone label$/ },
    { name: 'a Node KUBE does not hold yet: the unfiltered view at start, and the zone says why', node: 'absent', views: 'c1._.>', reach: `${A}:8080, ${B}:8080`, description: /kept: KUBE holds no Node node-1 yet$/ },
  ];
  for (const tc of starts) {
    it(tc.name, async () => {
      const h = harness({}, { node: tc.node });
      await h.agent.ready;
      expect(h.agent.filters.views).toBe(tc.views);
      expect(h.reach()).toBe(tc.reach);
      expect(h.agent.zone().description).toMatch(tc.description);
      await h.agent.close();
    });
  }

  it('a Node published after the agent started moves it to its zone', async () => {
    const h = harness({}, { node: 'absent' });
    await h.agent.ready;
    h.node.publish(nodeMessage(C, 'node-1', 'zone-b'));
    await h.flush();
    await h.clock.advanceAsync(1000);
    await h.flush();
    expect(h.agent.zone()).toMatchObject({ zone: 'zone-b', node: 'present', view: 'zone-b' });
    expect(h.reach()).toBe(`${B}:8080`);
    await h.agent.close();
  });

  it('KUBE unreadable at start: the agent starts on the unfiltered view, says why, and moves to its zone once the Node is read', async () => {
    const h = harness({}, { node: 'absent', failFirstReads: 1 });
    await h.agent.ready;
    expect(h.agent.zone()).toMatchObject({ zone: '', node: 'unreachable', view: UNZONED_VIEW, description: 'no zone (view _) kept: Node node-1 cannot be read from KUBE' });
    expect(h.reach()).toBe(`${A}:8080, ${B}:8080`);
    h.node.publish(nodeMessage(C, 'node-1', 'zone-a'));
    await h.clock.advanceAsync(500); // the follower's retry delay
    await h.flush();
    await h.clock.advanceAsync(1000);
    await h.flush();
    expect(h.agent.zone()).toMatchObject({ zone: 'zone-a', node: 'present', view: 'zone-a' });
    expect(h.reach()).toBe(`${A}:8080`);
    await h.agent.close();
  });

  it('a deleted Node keeps the last known zone and its rules', async () => {
    const h = harness();
    await h.agent.ready;
    h.node.publish(nodeMessage(C, 'node-1', 'zone-a', { deleted: true }));
    await h.flush();
    await h.clock.advanceAsync(30_000);
    await h.flush();
    expect(h.agent.zone()).toMatchObject({ zone: 'zone-a', node: 'deleted', view: 'zone-a', description: 'zone zone-a kept: Node node-1 was deleted' });
    expect(h.views.filters).toEqual(['c1.zone-a.>']);
    expect(h.reach()).toBe(`${A}:8080`);
    expect(h.agent.isReady()).toBe(true);
    await h.agent.close();
  });

  it('NODE_ZONE overrides: the Node is not read, its label and relabels are ignored, and that is logged once', async () => {
    const h = harness({ NODE_ZONE: 'zone-b' });
    await h.agent.ready;
    h.node.publish(nodeMessage(C, 'node-1', 'zone-c'));
    await h.flush();
    expect(h.node.follows).toBe(0);
    expect(h.views.filters).toEqual(['c1.zone-b.>']);
    expect(h.agent.zone()).toMatchObject({ zone: 'zone-b', source: 'override', view: 'zone-b' });
    expect(h.reach()).toBe(`${B}:8080`);
    expect(h.logs.filter((l) => l['msg'] === 'NODE_ZONE is set: the Node\'s zone label is not followed')).toHaveLength(1);
    await h.agent.close();
  });
});
