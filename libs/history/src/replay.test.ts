import { describe, expect, it } from 'vitest';
import { changeEvent, kubeSubjectOf } from '@slicemesh/contracts';
import { scenarioEvents } from '../testing/scenario.ts';
import { diffStates } from './diff.ts';
import { historyOf } from './history-of.ts';
import { memoryLog } from './memory-log.ts';
import { nodeProgram } from './node-program.ts';
import { resolvePoint, timeline } from './points.ts';
import { Replayer } from './replayer.ts';
import { EMPTY_SNAPSHOT, logSettings } from './source.ts';
import type { LogEvent } from './source.ts';
import type { StateAt } from './state-at.ts';
import { stateAt } from './state-at.ts';
import { whyNode } from './why.ts';

const source = (events: readonly LogEvent[] = scenarioEvents('c')) => memoryLog({ settings: logSettings({ cluster: 'c' }), events });
const at = async (spec: string): Promise<StateAt> => {
  const src = source();
  return stateAt(src, await resolvePoint(src, spec));
};
const web = { namespace: 'shop', name: 'web' };
const addresses = (s: StateAt, name = 'web'): string[] =>
  (s.services.find((x) => x.name === name)?.slices ?? []).flatMap((sl) => sl.endpoints.filter((e) => e.conditions.ready !== false).flatMap((e) => e.addresses)).sort();

describe('resolvePoint', () => {
  it.each([
    ['a sequence names the state after it', '7', 7],
    ['a sequence past the end is the last event', '999', 18],
    ['first and latest', 'first', 1],
    ['latest', 'latest', 18],
    ['a time names the last event stored at or before it', '2026-11-26T10:04:30Z', 5],
    ['a time exactly on an event includes it', '2026-11-26T10:04:00.000Z', 5],
    ['a time after the end is the last event', '2027-01-01T00:00:00Z', 18],
  ])('%s', async (_name, spec, seq) => {
    expect((await resolvePoint(source(), spec)).seq).toBe(seq);
  });

  it.each([
    ['a time before the log starts', '2026-11-26T09:00:00Z', /before the log's first event/],
    ['a sequence before the log starts', '0', /before the log's first event/],
    ['words that are no point', 'yesterday', /a point is a sequence number, an RFC 3339 time/],
  ])('rejects %s with a HistoryInputError', async (_name, spec, message) => {
    await expect(resolvePoint(source(), spec)).rejects.toMatchObject({ name: 'HistoryInputError', message: expect.stringMatching(message) });
  });

  it('finds the last event at or before a sequence when sequences have gaps (other clusters share the stream)', async () => {
    const gappy = scenarioEvents('c').map((e) => ({ ...e, seq: e.seq * 10 }));
    expect((await resolvePoint(source(gappy), '75')).seq).toBe(70);
  });
});

describe('stateAt', () => {
  it.each([
    ['before any pod, the Service has a slice without endpoints', '4', []],
    ['each Ready pod is an endpoint', '7', ['10.1.0.1', '10.1.0.2', '10.1.0.3']],
    ['a pod that is not Ready is not a ready endpoint', '11', ['10.1.0.1', '10.1.0.2', '10.1.0.3', '10.1.0.4', '10.1.0.5', '10.1.0.6']],
    ['once Ready it is', '12', ['10.1.0.1', '10.1.0.2', '10.1.0.3', '10.1.0.4', '10.1.0.5', '10.1.0.6', '10.1.0.7']],
    ['a terminating pod is no longer ready', '14', ['10.1.0.2', '10.1.0.3', '10.1.0.4', '10.1.0.5', '10.1.0.6', '10.1.0.7']],
  ])('%s (seq %s)', async (_name, spec, want) => {
    expect(addresses(await at(spec))).toEqual(want);
  });

  it('gives the hints decision and per-zone views: enabled with three zones of two endpoints each', async () => {
    const s = await at('10');
    const svc = s.services.find((x) => x.name === 'web');
    expect(svc?.decisions.map((d) => d.enabled)).toEqual([true]);
    expect(Object.keys(svc?.zoneViews ?? {}).sort()).toEqual(['_', 'zone-a', 'zone-b', 'zone-c']);
    expect(svc?.zoneViews['zone-a']?.flatMap((sl) => sl.endpoints.flatMap((e) => e.addresses)).sort()).toEqual(['10.1.0.1', '10.1.0.4']);
  });

  it('withholds hints while too few endpoints cover the zones (the safeguard), and says why', async () => {
    const svc = (await at('6')).services.find((x) => x.name === 'web');
    expect(svc?.decisions[0]?.enabled).toBe(false);
    expect(svc?.decisions[0]?.reason).toMatch(/2 ready endpoints cannot cover 3 zones/);
  });

  it('lists nodes with their zone at that point', async () => {
    expect((await at('12')).nodes.find((n) => n.name === 'worker-a-1')?.zone).toBe('zone-a');
    expect((await at('13')).nodes.find((n) => n.name === 'worker-a-1')?.zone).toBe('zone-c');
  });

  it('reaches the same state from a checkpoint as from the start', async () => {
    const src = source();
    const later = await stateAt(src, await resolvePoint(src, 'latest'));
    const again = await stateAt(source(), await resolvePoint(src, 'latest'));
    expect(JSON.stringify(later.services)).toBe(JSON.stringify(again.services));
  });

  it('skips a message the slicer would dead-letter (bad subject) and goes on', async () => {
    const events = scenarioEvents('c');
    const broken = [...events.slice(0, 5), { seq: 6, time: '2026-11-26T10:04:30.000Z', subject: 'kube.c.node.x', data: { nonsense: true } }, ...events.slice(5).map((e) => ({ ...e, seq: e.seq + 1 }))];
    const src = source(broken);
    const s = await stateAt(src, await resolvePoint(src, 'latest'));
    expect(addresses(s)).toEqual(addresses(await at('latest')));
  });
});

describe('ServiceExports in the log (the mcs service reads them, the slicer skips them)', () => {
  const exp = { apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceExport', metadata: { name: 'web', namespace: 'shop', uid: 'u-se', resourceVersion: '900', creationTimestamp: '2026-11-26T10:04:00Z' } } as const;
  const withExport = (type: 'Upserted.v1' | 'Deleted.v1'): LogEvent[] => {
    const events = scenarioEvents('c');
    const inserted: LogEvent = { seq: 6, time: '2026-11-26T10:04:30.000Z', subject: kubeSubjectOf('c', exp, { partitions: 2 }), data: changeEvent(type, 'c', exp, '2026-11-26T10:04:30.000Z') };
    return [...events.slice(0, 5), inserted, ...events.slice(5).map((e) => ({ ...e, seq: e.seq + 1 }))];
  };

  it('is read, not rejected as the slicer would dead-letter it, and applies nothing', () => {
    const folded = new Replayer(logSettings({ cluster: 'c' }), EMPTY_SNAPSHOT).fold(withExport('Upserted.v1')[5] as LogEvent);
    expect([folded.rejection, folded.change?.kind, folded.applied, folded.services]).toEqual([undefined, 'ServiceExport', false, []]);
  });

  it.each([['an upsert', 'Upserted.v1'], ['a delete', 'Deleted.v1']] as const)('%s changes no state and no history', async (_name, type) => {
    const src = source(withExport(type));
    expect(addresses(await stateAt(src, await resolvePoint(src, 'latest')))).toEqual(addresses(await at('latest')));
    expect((await historyOf(src, web)).length).toBe((await historyOf(source(), web)).length);
  });
});

describe('historyOf', () => {
  it('lists every change of shop/web with the cluster events behind it, oldest first', async () => {
    const h = await historyOf(source(), web);
    const table = h.map((e) => [e.to.seq, e.causes.join('; ')]);
    expect(table).toEqual([
      [4, 'service shop/web was created'],
      [5, 'pod shop/web-1 was created on worker-a-1 and is Ready'],
      [6, 'pod shop/web-2 was created on worker-b-1 and is Ready'],
      [7, 'pod shop/web-3 was created on worker-c-1 and is Ready'],
      [8, 'pod shop/web-4 was created on worker-a-1 and is Ready'],
      [9, 'pod shop/web-5 was created on worker-b-1 and is Ready'],
      [10, 'pod shop/web-6 was created on worker-c-1 and is Ready'],
      [11, 'pod shop/web-7 was created on worker-b-1'],
      [12, 'pod shop/web-7 became Ready on worker-b-1'],
      [13, 'node worker-a-1 moved to zone-c from zone-a'],
      [14, 'pod shop/web-1 became NotReady on worker-a-1; pod shop/web-1 started terminating on worker-a-1'],
      [15, 'pod shop/web-1 was deleted on worker-a-1'],
    ]);
  });

  it('says which slices, endpoints, decisions and zone views each change touched', async () => {
    const h = await historyOf(source(), web);
    const created = h[0];
    expect(created?.slices.created).toHaveLength(1);
    const moved = h.find((e) => e.to.seq === 13);
    expect(moved?.decisionsChanged).toBe(true);
    expect(moved?.decisions[0]?.reason).toMatch(/across 2 zones/);
    expect(moved?.zoneViewsChanged).toContain('zone-c');
    expect(h.find((e) => e.to.seq === 15)?.endpoints).toEqual({ added: [], removed: ['10.1.0.1'] });
  });

  it('groups events closer together than the batch window into one change with a sequence range', async () => {
    // All events one millisecond apart: the replay reconciles them as one batch, as a slicer would.
    const fast = scenarioEvents('c').map((e, i) => ({ ...e, time: new Date(Date.parse('2026-11-26T10:00:00Z') + i).toISOString() }));
    const h = await historyOf(source(fast), web);
    expect(h).toHaveLength(1);
    expect([h[0]?.from.seq, h[0]?.to.seq]).toEqual([1, 18]);
    expect(h[0]?.causes).toContain('pod shop/web-7 became Ready on worker-b-1');
  });

  it('with the slicer’s recorded reconciles, reconciles when live did even when events were close together', async () => {
    const fast = scenarioEvents('c').map((e, i) => ({ ...e, time: new Date(Date.parse('2026-11-26T10:00:00Z') + i).toISOString() }));
    const reconciles = fast.filter((e) => e.seq >= 4 && e.seq <= 15).map((e) => ({ seq: e.seq, service: 'shop/web' }));
    const h = await historyOf(memoryLog({ settings: logSettings({ cluster: 'c' }), events: fast, reconciles }), web);
    expect(h.map((e) => e.to.seq)).toEqual([4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
  });

  it('is empty for a Service the log never mentions', async () => {
    expect(await historyOf(source(), { namespace: 'shop', name: 'nothing' })).toEqual([]);
  });
});

describe('whyNode and nodeProgram', () => {
  const sends = (s: StateAt, node: string, name: string) =>
    whyNode(s, node, { namespace: 'shop', name }).endpoints.filter((e) => e.sends).map((e) => e.address);

  it.each([
    ['zone hints keep worker-b-1 in zone-b', 'latest', 'worker-b-1', 'web', ['10.1.0.5:8080', '10.1.0.7:8080']],
    ['without hints every ready endpoint is used', '6', 'worker-b-1', 'web', ['10.1.0.1:8080', '10.1.0.2:8080']],
    ['internalTrafficPolicy: Local sends only to the node’s own endpoints', 'latest', 'worker-a-1', 'api', ['10.1.0.21:8080']],
  ])('%s', async (_name, point, node, service, want) => {
    expect(sends(await at(point), node, service)).toEqual(want);
  });

  it('explains a skipped endpoint in upstream’s terms', async () => {
    const r = whyNode(await at('latest'), 'worker-b-1', web);
    const skipped = r.endpoints.find((e) => e.address === '10.1.0.3:8080');
    expect(skipped).toMatchObject({ sends: false, pod: 'shop/web-3', zone: 'zone-c' });
    expect(skipped?.reasons.join(' ')).toMatch(/hinted for zone-c, not zone-b/);
    expect(r.ports[0]?.selection).toMatch(/only to endpoints hinted for zone-b/);
    expect(r.notes.join(' ')).toMatch(/hints \(IPv4\): given/);
  });

  it('explains the safeguard that withheld hints, and the fallback to all', async () => {
    const r = whyNode(await at('6'), 'worker-b-1', web);
    expect(r.notes.join(' ')).toMatch(/not given — .*cannot cover 3 zones .*\(Event TopologyAwareHintsDisabled: Insufficient number of endpoints \(2 endpoints, 3 zones\)/);
    expect(r.ports[0]?.selection).toMatch(/no ready endpoint has zone hints/);
  });

  it('explains the terminating fallback when nothing is ready', async () => {
    const events = scenarioEvents('c').slice(0, 4);
    const pod = JSON.parse(JSON.stringify(scenarioEvents('c')[13])) as LogEvent & { data: { object: { metadata: { resourceVersion: string } } } };
    const src = source([...events, { ...pod, seq: 5 }]);
    const r = whyNode(await stateAt(src, await resolvePoint(src, 'latest')), 'worker-b-1', web);
    expect(r.endpoints).toHaveLength(1);
    expect(r.endpoints[0]?.reasons.join(' ')).toMatch(/terminating/);
  });

  it('rejects a Service that is not in the log', async () => {
    expect(() => whyNode({ at: { seq: 1, time: '' }, settings: logSettings({ cluster: 'c' }), services: [], nodes: [], nodeObjects: [] }, 'n', web)).toThrow(/not in the log/);
  });

  it('nodeProgram gives what the node programs per service port', async () => {
    const p = nodeProgram(await at('latest'), 'worker-b-1');
    expect(p.zone).toBe('zone-b');
    expect(p.ports.map((x) => [x.servicePort, x.clusterEndpoints, x.localEndpoints])).toEqual([
      ['shop/api:http/TCP', [], ['10.1.0.22:8080']],
      ['shop/web:http/TCP', ['10.1.0.5:8080', '10.1.0.7:8080'], null],
    ]);
  });
});

describe('diffStates', () => {
  it('says per Service what changed between two points', async () => {
    const d = diffStates(await at('12'), await at('latest'));
    expect(d.map((x) => [x.name, x.change])).toEqual([
      ['api', 'added'],
      ['web', 'changed'],
    ]);
    expect(d[1]?.endpoints.removed).toEqual(['10.1.0.1']);
    expect(d[1]?.zoneViewsChanged).toContain('zone-a');
  });

  it('is empty between a point and itself', async () => {
    expect(diffStates(await at('9'), await at('9'))).toEqual([]);
  });
});

describe('timeline', () => {
  it('cuts the log into equal spans of time with their event counts', async () => {
    const t = await timeline(source(), 3);
    expect(t.map((b) => b.events)).toEqual([6, 6, 6]);
    expect(t[0]?.from.seq).toBe(1);
    expect(t[2]?.to.seq).toBe(18);
  });
});
