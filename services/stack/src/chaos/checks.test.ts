// Each check of the fault campaign fails on a planted problem, and passes without it.
import { describe, expect, it } from 'vitest';
import type { LeaseState } from '@slicemesh/db';
import type { ChaosReport, KubeLogEntry, OutboxEntry, SlicesEntry } from './checks.ts';
import { chaosVerdict, compareEffects, foldByVersion, heldBy, lostEvents, takenOver } from './checks.ts';
import type { NatsKillFigures, ServiceReconnect } from './nats-figures.ts';

const up = (seq: number, subject: string, uid: string, rv: string): KubeLogEntry => ({ seq, subject, deleted: false, uid, resourceVersion: rv });
const del = (seq: number, subject: string, uid: string, rv: string): KubeLogEntry => ({ seq, subject, deleted: true, uid, resourceVersion: rv });

const POD = 'kube.c.0.pod.shop.web-1';
const SVC = 'kube.c.0.service.shop.web';

describe('lost events: the log folded by resourceVersion against the API', () => {
  const log = [up(1, SVC, 's1', '10'), up(2, POD, 'p1', '11'), up(3, POD, 'p1', '12'), up(4, POD, 'p1', '14')];
  const api = new Map([[SVC, 's1@10'], [POD, 'p1@14']]);

  it('a log that reached the final state loses nothing', () => expect(lostEvents(log, api)).toEqual([]));

  it("a lagging replica's older copy after the newest does not count as the state", () => {
    expect(lostEvents([...log, up(5, POD, 'p1', '12')], api)).toEqual([]);
    expect(foldByVersion([...log, up(5, POD, 'p1', '12')]).get(POD)).toBe('p1@14');
  });

  it('planted: the last change never reached the log', () => {
    expect(lostEvents(log.slice(0, 3), api)).toEqual([`${POD}: the API holds p1@14, the log ends at p1@12`]);
  });

  it('planted: an object the API holds is missing from the log', () => {
    expect(lostEvents(log, new Map([...api, ['kube.c.1.pod.infra.logs-1', 'p9@20']]))).toEqual(['kube.c.1.pod.infra.logs-1: the API holds p9@20, the log has no live version']);
  });

  it('planted: a delete that never reached the log', () => {
    expect(lostEvents(log, new Map([[SVC, 's1@10']]))).toEqual([`${POD}: deleted in the API, the log still holds p1@14`]);
  });

  it('a delete, and a replacement under the same name, fold to the API', () => {
    const l = [...log, del(5, POD, 'p1', '15'), up(6, POD, 'p2', '16'), del(7, POD, 'p1', '14')];
    expect(lostEvents(l, new Map([[SVC, 's1@10'], [POD, 'p2@16']]))).toEqual([]);
    expect(lostEvents([...log, del(5, POD, 'p1', '15')], new Map([[SVC, 's1@10']]))).toEqual([]);
  });
});

describe('duplicated effects: outbox rows and SLICES messages one to one', () => {
  const outbox: OutboxEntry[] = [
    { msgId: 'o-1', subject: 'slices.c.shop.web' },
    { msgId: 'o-2', subject: 'slices.c.shop.api' },
  ];
  const slices: SlicesEntry[] = [
    { seq: 1, msgId: 'o-1', subject: 'slices.c.shop.web', reconcileID: 'r1' },
    { seq: 2, msgId: 'o-2', subject: 'slices.c.shop.api', reconcileID: 'r2' },
  ];

  it('one message per row: nothing duplicated, nothing lost', () => expect(compareEffects(outbox, slices)).toEqual({ duplicated: [], lost: [] }));

  it('planted: an extra SLICES message with the same msg id counts as duplicated', () => {
    expect(compareEffects(outbox, [...slices, { seq: 3, msgId: 'o-1', subject: 'slices.c.shop.web', reconcileID: 'r1' }]).duplicated).toEqual(['SLICES seq 3: msg id o-1 already stored at seq 1']);
  });

  it('planted: the same reconcile published under a second msg id counts as duplicated', () => {
    const r = compareEffects([...outbox, { msgId: 'o-3', subject: 'slices.c.shop.web' }], [...slices, { seq: 3, msgId: 'o-3', subject: 'slices.c.shop.web', reconcileID: 'r1' }]);
    expect(r.duplicated).toEqual(['SLICES seq 3: reconcile r1 already published at seq 1 (msg id o-1)']);
  });

  it('planted: a SLICES message no outbox row asked for counts as duplicated', () => {
    expect(compareEffects(outbox, [...slices, { seq: 3, msgId: 'x-9', subject: 'slices.c.shop.web', reconcileID: 'r9' }]).duplicated).toEqual(['SLICES seq 3: msg id x-9 has no outbox row']);
  });

  it('planted: an outbox row that never reached SLICES counts as lost', () => {
    expect(compareEffects(outbox, slices.slice(0, 1))).toEqual({ duplicated: [], lost: ['outbox row o-2 (slices.c.shop.api) never reached SLICES'] });
  });
});

describe('takeover: the victim\'s partitions live again under a new acquisition', () => {
  const lease = (partition: number, holder: string | null, token: number, live = true): LeaseState => ({ partition, holder, token, live });
  const before = heldBy([lease(0, 'slicer-1', 3), lease(1, 'slicer-0', 2), lease(2, 'slicer-1', 5), lease(3, 'slicer-2', 1, false)], 'slicer-1');

  it('heldBy picks the live leases of the victim', () => expect(before.map((l) => l.partition)).toEqual([0, 2]));
  it('not yet: the dead holder still has them (unexpired)', () => expect(takenOver(before, 'slicer-1', [lease(0, 'slicer-1', 3), lease(2, 'slicer-1', 5)])).toBe(false));
  it('not yet: expired, nobody took them', () => expect(takenOver(before, 'slicer-1', [lease(0, 'slicer-1', 3, false), lease(2, null, 5, false)])).toBe(false));
  it('not yet: one of two taken', () => expect(takenOver(before, 'slicer-1', [lease(0, 'slicer-0', 4), lease(2, 'slicer-1', 5, false)])).toBe(false));
  it('another replica holds both', () => expect(takenOver(before, 'slicer-1', [lease(0, 'slicer-0', 4), lease(2, 'slicer-2', 6)])).toBe(true));
  it('the restarted victim took them back (higher token)', () => expect(takenOver(before, 'slicer-1', [lease(0, 'slicer-1', 4), lease(2, 'slicer-1', 6)])).toBe(true));
});

describe('the verdict', () => {
  const clean: ChaosReport = {
    events: 12_000, eventsUnderFaults: 9_000, faultPhaseMs: 150_000,
    faults: [{ atMs: 4000, kind: 'kill', target: 'slicer-1' }, { atMs: 8000, kind: 'kill', target: 'hints' }, { atMs: 30_000, kind: 'nats-restart', target: 'nats-server' }],
    crashes: [], takeoversS: [1.2, 5.4], hintsTakeoversS: [0.8], takeoversMissing: 0, lost: [], duplicated: [],
    verify: { replay: true, truth: true, agents: true, problems: [] }, minEvents: 10_000, errors: [],
  };

  it('a clean run passes, with the JSON the brief asks for', () => {
    const v = chaosVerdict(clean);
    expect(v.ok).toBe(true);
    expect(v.json).toEqual({
      events: 12_000, kills: 2, lost: 0, duplicated: 0, verify_replay: true, verify_truth: true, verify_agents: true,
      max_takeover_s: 5.4, max_hints_takeover_s: 0.8, events_per_s: 60, faults: { kill: 2, 'nats-restart': 1 }, crashes: {}, ok: true,
    });
    expect(v.line).toBe('chaos: PASS — 12000 KUBE events (60/s under faults), 2 kills, 1 nats-restart; lost 0, duplicated 0; verify replay ok, truth ok, agents ok; max takeover 5.4 s (hints 0.8 s)');
  });

  const planted: { name: string; edit: Partial<ChaosReport>; why: RegExp }[] = [
    { name: 'a lost event', edit: { lost: ['kube.c.0.pod.shop.web-1: the API holds p1@14, the log ends at p1@12'] }, why: /^1 lost: kube/ },
    { name: 'a duplicated SLICES message', edit: { duplicated: ['SLICES seq 3: msg id o-1 already stored at seq 1'] }, why: /^1 duplicated/ },
    { name: 'a replay difference', edit: { verify: { replay: false, truth: true, agents: true, problems: ['replay: shop/web: slice x differs'] } }, why: /verify replay failed: replay: shop\/web/ },
    { name: 'a truth difference', edit: { verify: { replay: true, truth: false, agents: true, problems: ['truth: slicer shop/web IPv4: endpoint missing'] } }, why: /verify truth failed/ },
    { name: 'an agent not resynced', edit: { verify: { replay: true, truth: true, agents: false, problems: ['agents: agent a-1: nat SLICEMESH-SVC-X: rule missing'] } }, why: /verify agents failed/ },
    { name: 'a takeover never seen', edit: { takeoversMissing: 1 }, why: /1 slicer or hints kills without a takeover/ },
    { name: 'too few events', edit: { events: 900 }, why: /only 900 KUBE events \(at least 10000 wanted\)/ },
    { name: 'a campaign error', edit: { errors: ['did not settle: not settled after 180000 ms: 3 messages pending'] }, why: /campaign: did not settle/ },
    { name: 'a log that was never compacted though the slicers were told to', edit: { boundedLog: { snapshotEvery: 300, replicas: 1, partitions: 6, firstKept: [], kubeMessages: 4000, kubeSequences: 4000 } }, why: /KUBE was never compacted \(the slicers snapshot every 300/ },
    { name: 'a replicated log that was purged', edit: { boundedLog: { snapshotEvery: 300, replicas: 3, partitions: 6, firstKept: [120], kubeMessages: 4000, kubeSequences: 4100 } }, why: /KUBE has 3 replicas but was purged/ },
  ];
  for (const tc of planted) {
    it(`fails on ${tc.name}`, () => {
      const v = chaosVerdict({ ...clean, ...tc.edit });
      expect(v.ok).toBe(false);
      expect(v.json.ok).toBe(false);
      expect(v.line).toMatch(/^chaos: FAIL/);
      expect(v.failures.join('\n')).toMatch(tc.why);
    });
  }

  it('reports how far the log was compacted, in the line and the JSON', () => {
    const v = chaosVerdict({ ...clean, boundedLog: { snapshotEvery: 300, replicas: 1, partitions: 6, firstKept: [3810, 2135], kubeMessages: 1767, kubeSequences: 4954 } });
    expect(v.ok).toBe(true);
    expect(v.json).toMatchObject({ compacted_partitions: 2, kube_messages: 1767 });
    expect(v.line).toMatch(/; log compacted in 2\/6 partitions, 1767 of 4954 messages kept$/);
    // Without SNAPSHOT_EVERY set nothing had to be compacted, nor on a replicated log.
    expect(chaosVerdict({ ...clean, boundedLog: { replicas: 1, partitions: 6, firstKept: [], kubeMessages: 9, kubeSequences: 9 } }).ok).toBe(true);
    expect(chaosVerdict({ ...clean, boundedLog: { snapshotEvery: 300, replicas: 3, partitions: 6, firstKept: [], kubeMessages: 9, kubeSequences: 9 } }).ok).toBe(true);
  });

  it('crashes are reported, not failed on (a supervisor restarts them)', () => {
    const v = chaosVerdict({ ...clean, crashes: [{ atMs: 1, kind: 'crash', target: 'slicer-0' }, { atMs: 2, kind: 'crash', target: 'slicer-0' }] });
    expect(v.ok).toBe(true);
    expect(v.json.crashes).toEqual({ 'slicer-0': 2 });
    expect(v.line).toMatch(/; 2 crashes \(slicer-0 ×2\)$/);
  });
});

describe('the verdict in nats_cluster mode', () => {
  const service = (component: string, reconnectS?: number, lines = reconnectS === undefined ? 0 : 1): ServiceReconnect => ({
    component, ...(reconnectS !== undefined ? { reconnectS } : {}), disconnectLines: lines, reconnectLines: lines, warnLines: 0,
  });
  const kill = (server: string, wasKubeLeader: boolean, stall: number, services: ServiceReconnect[]): NatsKillFigures => ({
    server, wasKubeLeader, atMs: 10_000, leaderElectedS: wasKubeLeader ? 2.5 : undefined, absorbedS: 1.5, stallS: { KUBE: stall, SLICES: stall / 2 }, services,
  } as NatsKillFigures);
  const base: ChaosReport = {
    events: 3000, eventsUnderFaults: 1500, faultPhaseMs: 50_000,
    faults: [{ atMs: 10_000, kind: 'nats-kill', target: 'nats-2', detail: 'KUBE leader' }, { atMs: 35_000, kind: 'nats-kill', target: 'nats-1' }],
    crashes: [], takeoversS: [], hintsTakeoversS: [], takeoversMissing: 0, lost: [], duplicated: [],
    verify: { replay: true, truth: true, agents: true, problems: [] }, minEvents: 1500, errors: [],
  };
  const clean: ChaosReport = {
    ...base,
    natsCluster: {
      servers: 3, stallBarS: 5,
      kills: [kill('nats-2', true, 3.2, [service('watcher-0', 1.1), service('slicer-0', 0.4), service('hints-0')]), kill('nats-1', false, 0.8, [service('publisher', 0.2, 2), service('slicer-0')])],
    },
  };

  it('a clean run passes and reports the stall, the reconnects, the new leader and the restart absorbed', () => {
    const v = chaosVerdict(clean);
    expect(v.failures).toEqual([]);
    expect(v.json).toMatchObject({
      nats_servers: 3, max_stall_s: 3.2, reconnect_s: 1.1, reconnect_median_s: 0.4, reconnects: 3, reconnect_lines_max: 2, warn_lines_max: 0, leader_elected_s: 2.5, absorbed_s: 1.5,
      faults: { 'nats-kill': 2 }, ok: true,
    });
    expect(v.line).toContain('2 nats-kill');
    expect(v.line).toContain('NATS cluster of 3: max stall 3.2 s (bar 5 s), reconnects 3 (max 1.1 s, median 0.4 s, ≤ 2 lines per service per kill; warnings ≤ 0), new KUBE leader 2.5 s, restart absorbed 1.5 s');
  });

  const kills = clean.natsCluster?.kills ?? [];
  const planted: { name: string; kills: NatsKillFigures[]; why: RegExp }[] = [
    { name: 'a stall longer than one summary interval', kills: [kill('nats-2', true, 7.25, []), kills[1] as NatsKillFigures], why: /nats-kill of nats-2 \(KUBE leader\): KUBE stored nothing for 7\.25 s \(at most 5 s/ },
    { name: 'no kill of the KUBE leader', kills: [kills[1] as NatsKillFigures], why: /no nats-kill took down the leader of KUBE/ },
    { name: 'a restart never absorbed', kills: [{ ...(kills[0] as NatsKillFigures), absorbedS: undefined } as NatsKillFigures], why: /nats-server|never absorbed/ },
    { name: 'reconnects logged per message', kills: [kill('nats-2', true, 1, [service('watcher-0', 1, 40)])], why: /watcher-0 logged 40 disconnects and 40 reconnects/ },
  ];
  for (const tc of planted) {
    it(`fails on ${tc.name}`, () => {
      const v = chaosVerdict({ ...base, natsCluster: { servers: 3, stallBarS: 5, kills: tc.kills } });
      expect(v.ok).toBe(false);
      expect(v.failures.join('\n')).toMatch(tc.why);
    });
  }

  it.each([
    ['a stall within the election plus the margin passes', 12.4, 14.9, true],
    ['a stall beyond the election plus the margin fails', 12.4, 15.6, false],
    ['an election shorter than the bar leaves the bar', 4.0, 12.5, false],
  ])('with beyondElectionS (the CI version): %s', (_name, electedS, stallS, ok) => {
    const leader = { ...kill('nats-2', true, stallS, []), leaderElectedS: electedS } as NatsKillFigures;
    const v = chaosVerdict({ ...base, natsCluster: { servers: 3, stallBarS: 12, beyondElectionS: 3, kills: [leader, kills[1] as NatsKillFigures] } });
    expect(v.failures).toEqual(ok ? [] : [expect.stringMatching(/nats-kill of nats-2 \(KUBE leader\): KUBE stored nothing for/)]);
  });

  it('the single-server campaign has none of these keys', () => {
    expect(Object.keys(chaosVerdict(base).json)).not.toContain('max_stall_s');
  });
});

describe('chaosVerdict: a locked-down NATS', () => {
  const base: ChaosReport = {
    events: 3000, eventsUnderFaults: 1500, faultPhaseMs: 50_000, faults: [], crashes: [], takeoversS: [], hintsTakeoversS: [], takeoversMissing: 0, lost: [], duplicated: [],
    verify: { replay: true, truth: true, agents: true, problems: [] }, minEvents: 1500, errors: [],
  };
  it.each([
    ['nothing refused passes and says so', [], true, 0],
    ['a refusal fails the run, naming the service and what it did', ['slicer-0: Permissions Violation for Publish to \\"$JS.API.STREAM.PURGE.KUBE\\"'], false, 1],
  ])('%s', (_name, refused, ok, count) => {
    const v = chaosVerdict({ ...base, permissionViolations: refused });
    expect(v.ok).toBe(ok);
    expect(v.json.permission_violations).toBe(count);
    expect(v.line).toContain(`NATS locked down, ${count} refusals`);
    if (!ok) expect(v.failures.join('\n')).toMatch(/NATS refused 1 thing\(s\) a service does: slicer-0: Permissions Violation for Publish to .*STREAM\.PURGE\.KUBE/);
  });
});
