import { afterEach, describe, expect, it } from 'vitest';
import type { KubeChangeEvent, ObjectWatchEvent, WatchedKind, WatchedObject } from '@slicemesh/kube';
import { partitionOf, PublishError, WrongLastSequenceError } from '@slicemesh/nats';
import type { DeadLetter, PublishResult } from '@slicemesh/nats';
import { createLogger, createMetrics, realClock } from '@slicemesh/runtime';
import { MANAGED_BY_CONTROLLER, MANAGED_BY_MIRRORING } from '@slicemesh/model';
import { deepFreeze, makeNode, makePod, makeService, makeSlice } from '@slicemesh/testing';
import type { KubeLog, StoredKubeEvent } from './kube-log.ts';
import { subjectOf } from './kube-message.ts';
import type { KubeMessage } from './kube-message.ts';
import { runWatcher } from './watcher.ts';
import type { ChangeHandlers, RunningWatcher } from './watcher.ts';
import { watcherMetrics } from './watcher-metrics.ts';

type Obj = WatchedObject & { metadata: { resourceVersion: string } };
const v = <T extends WatchedObject>(obj: T, rv: string, uid?: string): T =>
  deepFreeze({ ...obj, metadata: { ...obj.metadata, resourceVersion: rv, ...(uid ? { uid } : {}) } });

const LAYOUT = { partitions: 4 };

/**
 * In-memory KUBE + DLQ as the stream behaves: msgID de-duplication first, then the expected last
 * sequence of the subject; scripted failures. `recorded` is what KUBE held before the watcher started.
 */
class MemoryKubeLog implements KubeLog {
  readonly messages: KubeMessage[] = [];
  /** subject → its last message. */
  readonly last = new Map<string, StoredKubeEvent>();
  /** Publishes refused for a wrong expected last sequence. */
  refusals = 0;
  private seq = 0;
  readonly letters: { cluster: string; letter: DeadLetter }[] = [];
  readonly ids = new Set<string>();
  /** Next publishes throw these, in order. */
  readonly failures: Error[] = [];
  inFlight = new Map<string, number>();
  mostInFlightPerSubject = 0;
  delayMs = 0;
  constructor(recorded: KubeChangeEvent[] = []) {
    for (const event of recorded) this.append(subjectOf('c1', event.object, LAYOUT), event);
  }

  /** Stores `event` as another writer would (no expectation): returns its sequence. */
  append(subject: string, event: KubeChangeEvent): number {
    this.seq++;
    this.last.set(subject, { subject, seq: this.seq, event });
    return this.seq;
  }

  async publish(msg: KubeMessage, expectLastSeq: number): Promise<PublishResult> {
    const failure = this.failures.shift();
    if (failure) throw failure;
    const n = (this.inFlight.get(msg.subject) ?? 0) + 1;
    this.inFlight.set(msg.subject, n);
    this.mostInFlightPerSubject = Math.max(this.mostInFlightPerSubject, n);
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
    this.inFlight.set(msg.subject, n - 1);
    if (this.ids.has(msg.msgID)) return { seq: 1, duplicate: true, stream: 'KUBE' };
    const actual = this.last.get(msg.subject)?.seq ?? 0;
    if (actual !== expectLastSeq) {
      this.refusals++;
      throw new WrongLastSequenceError(msg.subject, msg.msgID, expectLastSeq, `wrong last sequence: ${actual}`);
    }
    this.ids.add(msg.msgID);
    this.messages.push(msg);
    return { seq: this.append(msg.subject, msg.event), duplicate: false, stream: 'KUBE' };
  }
  async lastOf(subject: string): Promise<StoredKubeEvent | undefined> {
    return this.last.get(subject);
  }
  async deadLetter(cluster: string, letter: DeadLetter): Promise<PublishResult> {
    this.letters.push({ cluster, letter });
    return { seq: this.letters.length, duplicate: false, stream: 'DLQ' };
  }
  async lastStates(): Promise<readonly StoredKubeEvent[]> {
    return [...this.last.values()].sort((a, b) => a.seq - b.seq);
  }
}

/** Watches whose initial list is scripted; live events are pushed with `emit`. */
class FakeCluster {
  private readonly initial: ObjectWatchEvent[];
  readonly handlers = new Map<WatchedKind, ChangeHandlers>();
  readonly seeds = new Map<WatchedKind, readonly WatchedObject[]>();
  constructor(initial: ObjectWatchEvent[] = []) {
    this.initial = initial;
  }
  open = (kind: WatchedKind, seed: readonly WatchedObject[], h: ChangeHandlers) => {
    this.handlers.set(kind, h);
    this.seeds.set(kind, seed);
    return {
      start: async () => {
        for (const e of this.initial.filter((x) => x.kind === kind)) h.onEvent(e);
      },
      stop: async () => {},
    };
  };
  emit(e: ObjectWatchEvent): void {
    this.handlers.get(e.kind)?.onEvent(e);
  }
}

const keyOf = (o: WatchedObject): string => (o.kind === 'Node' ? o.metadata.name : `${o.metadata.namespace ?? 'default'}/${o.metadata.name}`);
const up = (o: WatchedObject | Record<string, unknown>, kind: WatchedKind = (o as WatchedObject).kind): ObjectWatchEvent => ({ type: 'upsert', kind, key: keyOf(o as WatchedObject), object: o });
const del = (o: WatchedObject, rv: string, cause: 'watch' | 'vanished' | 'replaced' = 'watch'): ObjectWatchEvent => ({ type: 'delete', kind: o.kind, key: keyOf(o), object: o, resourceVersion: rv, cause });

let running: RunningWatcher | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

function start(log: MemoryKubeLog, cluster: FakeCluster, o: { window?: number; maxObjectBytes?: number } = {}): RunningWatcher {
  running = runWatcher(
    { cluster: 'c1', layout: LAYOUT, maxObjectBytes: o.maxObjectBytes ?? 512 * 1024, publishWindow: o.window ?? 16, retryDelayMs: () => 1 },
    { kubeLog: log, openWatch: cluster.open, clock: realClock, log: createLogger({ service: 'watcher', level: 'silent' }), metrics: watcherMetrics(createMetrics('watcher')) },
  );
  return running;
}

const until = async (cond: () => boolean): Promise<void> => {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 2));
  expect(cond()).toBe(true);
};

const pod = v(makePod('web-1', { uid: 'p1' }), '10') as Obj;
const svc = v(makeService('web', { uid: 's1' }), '11') as Obj;
const node = v(makeNode('n1', { zone: 'z1' }), '12') as Obj;

describe('runWatcher publishes what the cluster holds', () => {
  it('publishes every valid object of the initial lists with its subject and msgID before ready', async () => {
    const log = new MemoryKubeLog();
    const w = start(log, new FakeCluster([up(pod), up(svc), up(node)]));
    await w.ready;
    const got = log.messages.map((m) => [m.subject, m.msgID, m.event.type]).sort();
    const part = partitionOf('default', 4);
    expect(got).toEqual(
      [
        [`kube.c1.${part}.pod.default.web-1`, 'c1/p1/10', 'Upserted.v1'],
        [`kube.c1.${part}.service.default.web`, 'c1/s1/11', 'Upserted.v1'],
        ['kube.c1.node.n1', 'c1/uid-node-n1/12', 'Upserted.v1'],
      ].sort(),
    );
    expect(log.messages.find((m) => m.event.kind === 'Pod')?.event.object).toEqual(pod);
    expect(w.stats()).toMatchObject({ published: 3, duplicates: 0, deadLetters: 0 });
  });

  it('dead-letters an invalid object with its reason, field and raw body, and publishes nothing for it', async () => {
    const log = new MemoryKubeLog();
    const bad = { ...pod, metadata: { ...pod.metadata, name: 'web*1' } };
    const w = start(log, new FakeCluster([up(bad, 'Pod')]));
    await w.ready;
    expect(log.messages).toEqual([]);
    expect(log.letters).toHaveLength(1);
    expect(log.letters[0]?.cluster).toBe('c1');
    expect(log.letters[0]?.letter).toMatchObject({ field: 'metadata.name', reason: expect.stringMatching(/^Pod default\/web\*1: metadata\.name: .*DNS-1123/), object: bad });
    expect(w.stats().deadLetters).toBe(1);
  });

  it('dead-letters an object too large to publish (field <object>)', async () => {
    const log = new MemoryKubeLog();
    const big = v(makePod('big', { uid: 'b1', labels: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, 'v'.repeat(60)])) }), '3');
    const w = start(log, new FakeCluster([up(big)]), { maxObjectBytes: 4096 });
    await w.ready;
    expect(log.messages).toEqual([]);
    expect(log.letters[0]?.letter).toMatchObject({ field: '<object>', reason: expect.stringMatching(/4096-byte limit/) });
  });

  it('dead-letters an object the watch could not key', async () => {
    const log = new MemoryKubeLog();
    const w = start(log, new FakeCluster([{ type: 'malformed', kind: 'Service', object: { kind: 'Service' }, reason: 'metadata.name is missing' }]));
    await w.ready;
    expect(log.letters[0]?.letter).toMatchObject({ field: 'metadata', reason: 'Service object: metadata.name is missing', object: { kind: 'Service' } });
  });
});

describe('runWatcher publishes deletes so that nothing is lost', () => {
  it('a delete is Deleted.v1 with the final object at the deletion version, msgID <cluster>/<uid>/<rv>/deleted', async () => {
    const log = new MemoryKubeLog();
    const cluster = new FakeCluster([up(pod)]);
    const w = start(log, cluster);
    await w.ready;
    cluster.emit(del(v(pod, '20'), '20'));
    await until(() => log.messages.length === 2);
    const last = log.messages[1];
    expect([last?.event.type, last?.msgID, last?.event.object.metadata.resourceVersion]).toEqual(['Deleted.v1', 'c1/p1/20/deleted', '20']);
  });

  it('a delete of an object that was never published (always invalid) publishes nothing', async () => {
    const log = new MemoryKubeLog();
    const bad = { ...pod, status: { podIP: 'nope' } };
    const cluster = new FakeCluster([up(bad, 'Pod')]);
    const w = start(log, cluster);
    await w.ready;
    cluster.emit(del(bad as WatchedObject, '21'));
    await until(() => w.stats().skipped === 1);
    expect(log.messages).toEqual([]);
  });

  it('a delete whose final state is invalid carries the last valid body KUBE has', async () => {
    const log = new MemoryKubeLog();
    const cluster = new FakeCluster([up(pod)]);
    const w = start(log, cluster);
    await w.ready;
    const broken = { ...v(pod, '22'), status: { podIP: '300.1.1.1' } } as WatchedObject;
    cluster.emit(up(broken));
    cluster.emit(del(v(broken, '23'), '23'));
    await until(() => log.messages.length === 2);
    expect(log.letters).toHaveLength(1);
    const gone = log.messages[1]?.event;
    expect(gone?.type).toBe('Deleted.v1');
    expect(gone?.object).toEqual(v(pod, '23'));
  });

  it('an object re-created under the same name (new uid) first deletes the old uid at its last version', async () => {
    const log = new MemoryKubeLog();
    const cluster = new FakeCluster([up(pod)]);
    const w = start(log, cluster);
    await w.ready;
    cluster.emit(up(v(pod, '30', 'p2')));
    await until(() => log.messages.length === 3);
    expect(log.messages.map((m) => m.msgID)).toEqual(['c1/p1/10', 'c1/p1/10/deleted', 'c1/p2/30']);
  });
});

describe('runWatcher never duplicates what KUBE holds', () => {
  it('seeds each watch with the objects KUBE last recorded as present, and skips versions already there', async () => {
    const gonePod = v(makePod('gone', { uid: 'g1' }), '5');
    const recorded: KubeChangeEvent[] = [
      { type: 'Upserted.v1', cluster: 'c1', kind: 'Pod', object: pod, observedAt: 't' },
      { type: 'Upserted.v1', cluster: 'c1', kind: 'Pod', object: gonePod, observedAt: 't' },
      { type: 'Deleted.v1', cluster: 'c1', kind: 'Pod', object: gonePod, observedAt: 't' },
      { type: 'Upserted.v1', cluster: 'c1', kind: 'Node', object: node, observedAt: 't' },
    ];
    const log = new MemoryKubeLog(recorded);
    const cluster = new FakeCluster([up(pod), up(node)]);
    const w = start(log, cluster);
    await w.ready;
    expect(cluster.seeds.get('Pod')).toEqual([pod]);
    expect(cluster.seeds.get('Node')).toEqual([node]);
    expect(cluster.seeds.get('Service')).toEqual([]);
    expect(log.messages).toEqual([]);
    expect(w.stats()).toMatchObject({ published: 0, skipped: 2 });
  });

  it('counts a msgID the stream already stored (e.g. from a second watcher) as a duplicate', async () => {
    const log = new MemoryKubeLog();
    log.ids.add('c1/p1/10');
    const w = start(log, new FakeCluster([up(pod)]));
    await w.ready;
    expect(w.stats()).toMatchObject({ published: 0, duplicates: 1 });
  });
});

describe('runWatcher keeps the newest version last in KUBE when another writer appends first', () => {
  const SUBJECT = subjectOf('c1', pod, LAYOUT);
  const stored = (type: 'Upserted.v1' | 'Deleted.v1', o: WatchedObject): KubeChangeEvent => ({ type, cluster: 'c1', kind: 'Pod', object: o, observedAt: 't' });
  // KUBE holds pod@10 from this watcher; then another replica appends `theirs`; then this watcher sees `ours`.
  const cases: { name: string; theirs?: KubeChangeEvent; unreadable?: true; ours: ObjectWatchEvent; appended: boolean; lastRv: string }[] = [
    { name: 'a newer version stored by another replica makes ours stale: not appended', theirs: stored('Upserted.v1', v(pod, '20')), ours: up(v(pod, '15')), appended: false, lastRv: '20' },
    { name: 'the same version under another msgID (a carried-forward copy) makes ours stale', theirs: stored('Upserted.v1', v(pod, '15')), ours: up(v(pod, '15')), appended: false, lastRv: '15' },
    { name: 'an older version stored by another replica: ours goes after it', theirs: stored('Upserted.v1', v(pod, '12')), ours: up(v(pod, '15')), appended: true, lastRv: '15' },
    { name: 'a delete at the stored live version supersedes it', theirs: stored('Upserted.v1', v(pod, '20')), ours: del(v(pod, '20'), '20'), appended: true, lastRv: '20' },
    { name: 'a delete stored by another replica makes our older update stale', theirs: stored('Deleted.v1', v(pod, '20')), ours: up(v(pod, '18')), appended: false, lastRv: '20' },
    { name: "the old uid's delete after the new uid's newer upsert is stale", theirs: stored('Upserted.v1', v(pod, '30', 'p2')), ours: del(v(pod, '10'), '10'), appended: false, lastRv: '30' },
    { name: 'an unreadable last message cannot be ordered: ours goes after it', unreadable: true, ours: up(v(pod, '15')), appended: true, lastRv: '15' },
  ];
  it.each(cases)('$name', async ({ theirs, unreadable, ours, appended, lastRv }) => {
    const log = new MemoryKubeLog();
    const cluster = new FakeCluster([up(pod)]);
    const w = start(log, cluster);
    await w.ready;
    if (theirs !== undefined) log.append(SUBJECT, theirs);
    if (unreadable) log.last.set(SUBJECT, { subject: SUBJECT, seq: 99 });
    const before = w.stats();
    cluster.emit(ours);
    await until(() => w.stats().published + w.stats().skipped > before.published + before.skipped);
    expect(log.messages.length).toBe(appended ? 2 : 1);
    expect(w.stats().skipped - before.skipped).toBe(appended ? 0 : 1);
    expect(log.last.get(SUBJECT)?.event?.object.metadata.resourceVersion).toBe(lastRv);
  });

  it('after a stale change it follows what KUBE holds: the next version goes without another conflict', async () => {
    const log = new MemoryKubeLog();
    const cluster = new FakeCluster([up(pod)]);
    const w = start(log, cluster);
    await w.ready;
    log.append(SUBJECT, stored('Upserted.v1', v(pod, '20')));
    cluster.emit(up(v(pod, '15')));
    cluster.emit(up(v(pod, '25')));
    await until(() => log.messages.length === 2);
    expect(log.messages.map((m) => m.event.object.metadata.resourceVersion)).toEqual(['10', '25']);
    expect(w.stats()).toMatchObject({ published: 2, skipped: 1 });
  });

  it('without another writer nothing is refused; a name re-created after its delete costs one refusal and is appended', async () => {
    const log = new MemoryKubeLog();
    const cluster = new FakeCluster([up(pod)]);
    const w = start(log, cluster);
    await w.ready;
    for (const rv of ['11', '12']) cluster.emit(up(v(pod, rv)));
    await until(() => log.messages.length === 3);
    expect(log.refusals).toBe(0);
    // Deleted: the watcher forgets the subject (churn must not grow what it keeps), so the re-creation expects an empty subject.
    cluster.emit(del(v(pod, '13'), '13'));
    cluster.emit(up(v(pod, '14', 'p2')));
    await until(() => log.messages.length === 5);
    expect(log.refusals).toBe(1);
    expect(log.messages.map((m) => m.msgID).slice(3)).toEqual(['c1/p1/13/deleted', 'c1/p2/14']);
  });

  it('a second watcher reading back a subject whose last message is newer publishes nothing older for it', async () => {
    const log = new MemoryKubeLog([stored('Upserted.v1', v(pod, '20'))]);
    // Its list still shows the older version (a lagging API server cache).
    const w = start(log, new FakeCluster([up(v(pod, '15'))]));
    await w.ready;
    expect(log.messages).toEqual([]);
    expect(log.last.get(SUBJECT)?.event?.object.metadata.resourceVersion).toBe('20');
  });
});

describe('runWatcher publishing discipline', () => {
  it('sends versions of one object one at a time and in order, other objects concurrently', async () => {
    const log = new MemoryKubeLog();
    log.delayMs = 2;
    const cluster = new FakeCluster();
    const w = start(log, cluster, { window: 4 });
    await w.ready;
    for (let rv = 100; rv < 110; rv++) {
      cluster.emit(up(v(pod, String(rv))));
      cluster.emit(up(v(svc, String(rv))));
    }
    await until(() => log.messages.length === 20);
    expect(log.mostInFlightPerSubject).toBe(1);
    const podVersions = log.messages.filter((m) => m.event.kind === 'Pod').map((m) => m.event.object.metadata.resourceVersion);
    expect(podVersions).toEqual(Array.from({ length: 10 }, (_, i) => String(100 + i)));
  });

  it('retries a transient failure (retries exhausted) until the publish succeeds', async () => {
    const log = new MemoryKubeLog();
    log.failures.push(new PublishError('s', 'id', 'no ack in time', true), new Error('connection closed'));
    const w = start(log, new FakeCluster([up(pod)]));
    await w.ready;
    expect(log.messages.map((m) => m.msgID)).toEqual(['c1/p1/10']);
  });

  it('dead-letters an object the stream refuses for good (not retried)', async () => {
    const log = new MemoryKubeLog();
    log.failures.push(new PublishError('s', 'id', 'maximum payload exceeded', false));
    const w = start(log, new FakeCluster([up(pod)]));
    await w.ready;
    expect(log.messages).toEqual([]);
    expect(log.letters[0]?.letter.reason).toBe('publish refused: maximum payload exceeded');
  });

  it('close() during endless retries resolves, and ready rejects when closed first', async () => {
    const log = new MemoryKubeLog();
    for (let i = 0; i < 10_000; i++) log.failures.push(new PublishError('s', 'id', 'no responders', true));
    const w = start(log, new FakeCluster([up(pod)]));
    await new Promise((r) => setTimeout(r, 20));
    await w.close();
    await expect(w.ready).rejects.toThrow(/closed before it was ready/);
    expect(log.messages).toEqual([]);
  });
});

describe("runWatcher: EndpointSlices, other controllers' only", () => {
  const foreign = (rv: string, managedBy = 'mcs-importer.example.com') => v(makeSlice('imported-1', [], { service: 'db', managedBy }), rv);
  const part = partitionOf('default', 4);

  it('publishes a slice of another controller under its own subject, and none of ours (controller or mirroring)', async () => {
    const log = new MemoryKubeLog();
    const ours = v(makeSlice('web-abc', []), '20');
    const mirrored = v(makeSlice('legacy-1', [], { service: 'legacy', managedBy: MANAGED_BY_MIRRORING }), '21');
    const unlabelled = deepFreeze({ ...foreign('22'), metadata: { ...foreign('22').metadata, name: 'hand-made', uid: 'u-hand', labels: { 'kubernetes.io/service-name': 'db' } } });
    const w = start(log, new FakeCluster([up(ours), up(mirrored), up(foreign('23')), up(unlabelled)]));
    await w.ready;
    expect(log.messages.map((m) => [m.subject, m.msgID]).sort()).toEqual(
      [
        [`kube.c1.${part}.endpointslice.default.hand-made`, 'c1/u-hand/22'],
        [`kube.c1.${part}.endpointslice.default.imported-1`, 'c1/uid-slice-imported-1/23'],
      ].sort(),
    );
    expect(w.stats()).toMatchObject({ published: 2, skipped: 2, deadLetters: 0 });
  });

  it('a foreign slice that becomes ours leaves KUBE as a delete; one that stops being ours appears', async () => {
    const log = new MemoryKubeLog();
    const cluster = new FakeCluster([up(foreign('30'))]);
    const w = start(log, cluster);
    await w.ready;
    cluster.emit(up(foreign('31', MANAGED_BY_CONTROLLER)));
    await until(() => log.messages.length === 2);
    expect(log.messages[1]?.event.type).toBe('Deleted.v1');
    expect(log.messages[1]?.msgID).toBe('c1/uid-slice-imported-1/31/deleted');
    cluster.emit(up(foreign('32')));
    await until(() => log.messages.length === 3);
    expect([log.messages[2]?.event.type, log.messages[2]?.msgID]).toEqual(['Upserted.v1', 'c1/uid-slice-imported-1/32']);
    // A delete of a slice of ours was never published: nothing to delete.
    cluster.emit(del(v(makeSlice('web-abc', []), '33'), '33'));
    await new Promise((r) => setTimeout(r, 10));
    expect(log.messages).toHaveLength(3);
  });

  it('a delete whose final state is ours (it left a selector-filtered watch) keeps the last foreign state in KUBE', async () => {
    const log = new MemoryKubeLog();
    const cluster = new FakeCluster([up(foreign('50'))]);
    const w = start(log, cluster);
    await w.ready;
    cluster.emit(del(foreign('51', MANAGED_BY_CONTROLLER), '51'));
    await until(() => log.messages.length === 2);
    const gone = log.messages[1]?.event;
    expect([gone?.type, gone?.object.metadata.resourceVersion, gone?.object.metadata.labels?.['endpointslice.kubernetes.io/managed-by']]).toEqual(['Deleted.v1', '51', 'mcs-importer.example.com']);
  });

  it('ownManagers is a setting: with only a custom value, the upstream controller slices are foreign', async () => {
    const log = new MemoryKubeLog();
    running = runWatcher(
      { cluster: 'c1', layout: { partitions: 4 }, maxObjectBytes: 512 * 1024, publishWindow: 16, retryDelayMs: () => 1, ownManagers: new Set(['my-slicer']) },
      { kubeLog: log, openWatch: new FakeCluster([up(v(makeSlice('web-abc', []), '40')), up(v(makeSlice('mine', [], { managedBy: 'my-slicer' }), '41'))]).open, clock: realClock,
        log: createLogger({ service: 'watcher', level: 'silent' }), metrics: watcherMetrics(createMetrics('watcher')) },
    );
    await running.ready;
    expect(log.messages.map((m) => m.event.object.metadata.name)).toEqual(['web-abc']);
  });
});
