import type { KvChange } from '@slicemesh/nats';
import { svcClusterFilter, zoneViewsFilter } from '@slicemesh/nats';
import { UNZONED_VIEW } from '@slicemesh/proxy-state';
import { FakeClock, createLogger, settle } from '@slicemesh/runtime';
import { describe, expect, it } from 'vitest';
import { ProxyAgent } from './agent.ts';
import { FakeKvSource, endpoint, service, slice, svcPut, viewPut } from './test-support.ts';
import { ViewState } from './view-state.ts';

const C = 'c1';

function harness(view: string | null = 'zone-a') {
  const runner = { started: 0, runs: 0, start() { this.started++; }, run() { this.runs++; } };
  const logs: Record<string, unknown>[] = [];
  const log = createLogger({ service: 'proxy-agent', destination: { write: (l: string) => void logs.push(JSON.parse(l) as Record<string, unknown>) } });
  const state = new ViewState({ cluster: C, view: view ?? UNZONED_VIEW, nodeName: 'node-a1', family: 'IPv4' });
  const services = new FakeKvSource();
  const views = new FakeKvSource();
  const clock = new FakeClock(0);
  /** Every onViewLoaded call, with the runs asked for before it. */
  const loads: { view: string; previous: string | null; entries: number; runsBefore: number }[] = [];
  const onViewLoaded = (v: string, previous: string | null, entries: number) => void loads.push({ view: v, previous, entries, runsBefore: runner.runs });
  const agent = new ProxyAgent({ cluster: C, view, state, runner, services, views, clock, log, restartDelay: () => 100, onViewLoaded });
  const change = (c: Omit<KvChange, 'revision'>): KvChange => ({ ...c, revision: 1 });
  const flush = async () => {
    for (let i = 0; i < 10; i++) await settle();
  };
  /** The endpoint addresses the state holds for default/web. */
  const webIPs = () => state.slicesOf('default/web').flatMap((sl) => sl.endpoints.map((e) => e.addresses[0]));
  return { runner, logs, state, services, views, clock, agent, change, loads, flush, webIPs };
}

describe('ProxyAgent', () => {
  const filterCases = [
    { name: 'a zoned agent: all service specs of its cluster and ONE wildcard, its zone\'s views', view: 'zone-a', want: { svc: svcClusterFilter(C), views: zoneViewsFilter(C, 'zone-a') } },
    { name: 'an unzoned agent: the unfiltered view', view: UNZONED_VIEW, want: { svc: 'c1.>', views: 'c1._.>' } },
  ];
  for (const tc of filterCases) it(tc.name, () => expect(harness(tc.view).agent.filters).toEqual(tc.want));

  const orders: { name: string; steps: ('svc' | 'views')[]; startedAfter: number }[] = [
    { name: 'habit 5: services first, then views — the runner starts at the second', steps: ['svc', 'views'], startedAfter: 2 },
    { name: 'habit 5: views first, then services — the runner starts at the second', steps: ['views', 'svc'], startedAfter: 2 },
    { name: 'habit 5: one bucket twice (a re-watch) is not both', steps: ['svc', 'svc'], startedAfter: 0 },
  ];
  for (const tc of orders) {
    it(tc.name, () => {
      const h = harness();
      h.agent.handle('svc', h.change(svcPut(C, service('web', '10.96.0.10'))));
      h.agent.handle('views', h.change(viewPut(C, 'zone-a', slice('web-1', 'web', [endpoint('10.244.1.2')]))));
      expect(h.runner.runs).toBe(0); // changes before the initial state never wake the runner
      const started: number[] = [];
      tc.steps.forEach((b, i) => {
        h.agent.initialDone(b, new Set(b === 'svc' ? ['c1.default.web'] : [viewPut(C, 'zone-a', slice('web-1', 'web', [])).key]));
        if (h.runner.started > 0 && started.length === 0) started.push(i + 1);
      });
      expect(started[0] ?? 0).toBe(tc.startedAfter);
      expect(h.runner.runs).toBe(tc.startedAfter > 0 ? 1 : 0);
      expect(h.agent.initialized).toBe(tc.startedAfter > 0);
    });
  }

  it('after start: real changes wake the runner, no-ops do not, invalid entries are logged and ignored', () => {
    const h = harness();
    h.agent.initialDone('svc', new Set());
    h.agent.initialDone('views', new Set());
    const runsAtStart = h.runner.runs;
    const s = viewPut(C, 'zone-a', slice('web-1', 'web', [endpoint('10.244.1.2')]));
    h.agent.handle('views', h.change(s));
    h.agent.handle('views', h.change(s));
    h.agent.handle('views', h.change(viewPut(C, 'zone-b', slice('web-1', 'web', [endpoint('10.244.2.2')]))));
    expect(h.runner.runs - runsAtStart).toBe(1);
    expect(h.logs.find((l) => l['level'] === 'warn')).toMatchObject({ msg: 'ignored an invalid views entry', reason: expect.stringContaining('not in view') });
  });

  it('run() watches both buckets once each and stops when aborted', async () => {
    const h = harness();
    h.services.put(svcPut(C, service('web', '10.96.0.10')));
    const abort = new AbortController();
    const running = h.agent.run(abort.signal);
    for (let i = 0; i < 10; i++) await settle();
    expect([h.services.filters, h.views.filters]).toEqual([['c1.>'], ['c1.zone-a.>']]);
    expect(h.runner.started).toBe(1);
    expect(h.state.serviceKeys()).toEqual(['default/web']);
    abort.abort();
    await running;
  });

  it('a watch that fails is started again after the restart delay', async () => {
    const h = harness();
    const abort = new AbortController();
    const running = h.agent.run(abort.signal);
    for (let i = 0; i < 10; i++) await settle();
    h.views.endWatches(new Error('boom'));
    for (let i = 0; i < 10; i++) await settle();
    expect(h.views.filters).toHaveLength(1);
    await h.clock.advanceAsync(100);
    for (let i = 0; i < 10; i++) await settle();
    expect(h.views.filters).toHaveLength(2);
    expect(h.logs.some((l) => l['msg'] === 'views watch failed; watching again')).toBe(true);
    abort.abort();
    await running;
  });

  it('a move keeps the old view until the new one\'s initial set is complete, then replaces it in one step and asks for one sync', async () => {
    const h = harness();
    h.services.put(svcPut(C, service('web', '10.96.0.10')));
    h.views.put(viewPut(C, 'zone-a', slice('web-1', 'web', [endpoint('10.244.1.2')])));
    h.views.put(viewPut(C, 'zone-b', slice('web-1', 'web', [endpoint('10.244.2.2')])));
    h.views.put(viewPut(C, 'zone-b', slice('web-2', 'web', [endpoint('10.244.2.3')])));
    const abort = new AbortController();
    const running = h.agent.run(abort.signal);
    await h.flush();
    expect(h.runner.runs).toBe(1);
    h.views.holdInitial();
    h.agent.moveTo('zone-b');
    await h.flush();
    // The new view is being read: nothing of it is in the state yet, the old view still is.
    expect(h.views.filters).toEqual(['c1.zone-a.>', 'c1.zone-b.>']);
    expect(h.agent.filters.views).toBe('c1.zone-b.>');
    expect([h.state.view, h.agent.loadedView, h.webIPs(), h.runner.runs]).toEqual(['zone-a', 'zone-a', ['10.244.1.2'], 1]);
    h.views.releaseInitial();
    await h.flush();
    expect([h.state.view, h.agent.loadedView, h.webIPs(), h.runner.runs]).toEqual(['zone-b', 'zone-b', ['10.244.2.2', '10.244.2.3'], 2]);
    expect(h.loads).toEqual([{ view: 'zone-b', previous: 'zone-a', entries: 2, runsBefore: 1 }]);
    // From then on the new view's changes are followed, the old view's are not watched.
    h.views.put(viewPut(C, 'zone-a', slice('web-1', 'web', [endpoint('10.244.1.9')])));
    h.views.put(viewPut(C, 'zone-b', slice('web-2', 'web', [endpoint('10.244.2.4')])));
    await h.flush();
    expect(h.webIPs()).toEqual(['10.244.2.2', '10.244.2.4']);
    expect(h.runner.runs).toBe(3);
    abort.abort();
    await running;
  });

  it('a second move before the first is loaded: only the last view is loaded, once', async () => {
    const h = harness();
    h.views.put(viewPut(C, 'zone-c', slice('web-1', 'web', [endpoint('10.244.3.2')])));
    const abort = new AbortController();
    const running = h.agent.run(abort.signal);
    await h.flush();
    h.views.holdInitial();
    h.agent.moveTo('zone-b');
    await h.flush();
    h.agent.moveTo('zone-c');
    await h.flush();
    h.views.releaseInitial();
    await h.flush();
    expect(h.views.filters).toEqual(['c1.zone-a.>', 'c1.zone-b.>', 'c1.zone-c.>']);
    expect(h.loads.map((l) => [l.view, l.previous])).toEqual([['zone-c', 'zone-a']]);
    expect(h.webIPs()).toEqual(['10.244.3.2']);
    abort.abort();
    await running;
  });

  it('moving to the view already watched does nothing', async () => {
    const h = harness();
    const abort = new AbortController();
    const running = h.agent.run(abort.signal);
    await h.flush();
    h.agent.moveTo('zone-a');
    await h.flush();
    expect(h.views.filters).toEqual(['c1.zone-a.>']);
    expect(h.loads).toEqual([]);
    abort.abort();
    await running;
  });

  it('habit 5: with the zone not known yet the views are not watched and nothing starts; the first view is then loaded whole', async () => {
    const h = harness(null);
    h.services.put(svcPut(C, service('web', '10.96.0.10')));
    h.views.put(viewPut(C, UNZONED_VIEW, slice('web-1', 'web', [endpoint('10.244.1.2'), endpoint('10.244.2.2')])));
    const abort = new AbortController();
    const running = h.agent.run(abort.signal);
    await h.flush();
    await h.clock.advanceAsync(60_000);
    expect([h.views.filters, h.runner.started, h.agent.loadedView]).toEqual([[], 0, null]);
    h.agent.moveTo(UNZONED_VIEW);
    await h.flush();
    expect(h.views.filters).toEqual(['c1._.>']);
    expect(h.loads).toEqual([{ view: UNZONED_VIEW, previous: null, entries: 1, runsBefore: 0 }]);
    expect([h.runner.started, h.runner.runs, h.webIPs()]).toEqual([1, 1, ['10.244.1.2', '10.244.2.2']]);
    abort.abort();
    await running;
  });

  it('a move during the back-off after a failed watch is watched at once', async () => {
    const h = harness();
    const abort = new AbortController();
    const running = h.agent.run(abort.signal);
    await h.flush();
    h.views.endWatches(new Error('boom'));
    await h.flush();
    h.agent.moveTo('zone-b');
    await h.flush();
    expect(h.views.filters).toEqual(['c1.zone-a.>', 'c1.zone-b.>']);
    expect(h.agent.loadedView).toBe('zone-b');
    abort.abort();
    await running;
  });
});
