import type { KvChange } from '@slicemesh/nats';
import { svcClusterFilter, zoneViewsFilter } from '@slicemesh/nats';
import { UNZONED_VIEW } from '@slicemesh/proxy-state';
import { FakeClock, createLogger, settle } from '@slicemesh/runtime';
import { describe, expect, it } from 'vitest';
import { ProxyAgent } from './agent.ts';
import { FakeKvSource, endpoint, service, slice, svcPut, viewPut } from './test-support.ts';
import { ViewState } from './view-state.ts';

const C = 'c1';

function harness(view = 'zone-a') {
  const runner = { started: 0, runs: 0, start() { this.started++; }, run() { this.runs++; } };
  const logs: Record<string, unknown>[] = [];
  const log = createLogger({ service: 'proxy-agent', destination: { write: (l: string) => void logs.push(JSON.parse(l) as Record<string, unknown>) } });
  const state = new ViewState({ cluster: C, view, nodeName: 'node-a1', family: 'IPv4' });
  const services = new FakeKvSource();
  const views = new FakeKvSource();
  const clock = new FakeClock(0);
  const agent = new ProxyAgent({ cluster: C, view, state, runner, services, views, clock, log, restartDelay: () => 100 });
  const change = (c: Omit<KvChange, 'revision'>): KvChange => ({ ...c, revision: 1 });
  return { runner, logs, state, services, views, clock, agent, change };
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
});
