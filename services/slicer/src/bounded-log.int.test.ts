// A bounded KUBE log (issue 9.4) on real NATS and Postgres: churn through a slicer, a snapshot of
// each partition, more churn, then compaction. The log shrinks, every live object's last version
// stays the last message of its subject, a replay from snapshot + tail equals the full replay
// taken before the purge, a slicer restarted after it (fresh durables) keeps its slices, and a
// slicer on a fresh schema reading the compacted log from its start arrives at the same
// endpoints.

import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EndpointSlice, Pod } from '@slicemesh/model';
import { makeNode, makePod, makeService } from '@slicemesh/testing';
import { advanceOffset, listKubeSnapshots, loadClusterSlices, loadKubeLogCuts, reconciledServiceKeys } from '@slicemesh/db';
import { withTestDb } from '@slicemesh/db/testing';
import type { TestDb } from '@slicemesh/db/testing';
import { kubeNodesFilter, kubePartitionFilter, lastPerSubject, partitionOf, storedMessage } from '@slicemesh/nats';
import type { SlicerConfig } from './config.ts';
import { resolveSlicerSettings, slicerDurables } from './config.ts';
import { CARRIED_HEADER } from './compaction.ts';
import type { Compaction } from './compactor.ts';
import { compactNodes, compactPartition } from './compactor.ts';
import { comparableSlice, replayServiceLog } from './replay.ts';
import type { ReplayReport } from './replay.ts';
import type { Slicer } from './slicer.ts';
import { startSlicer } from './slicer.ts';
import type { Stack } from './testing/stack.ts';
import { withStack } from './testing/stack.ts';

const P = 2;
let stack: Stack | undefined;
const running: Slicer[] = [];
const dbs: TestDb[] = [];

afterEach(async () => {
  for (const s of running.splice(0)) await s.close();
  for (const d of dbs.splice(0)) await d.close();
  await stack?.close();
  stack = undefined;
});

function namespaceIn(p: number): string {
  for (let i = 0; ; i++) if (partitionOf(`bl${i}`, P) === p) return `bl${i}`;
}

async function start(config: SlicerConfig): Promise<Slicer> {
  const slicer = startSlicer(config);
  running.push(slicer);
  await slicer.ready;
  return slicer;
}

/** Per Service key: its endpoints as sets (address, ready, zone), names left out. */
function endpointSets(slices: ReadonlyMap<string, EndpointSlice>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const s of slices.values()) {
    const key = `${s.metadata.namespace}/${s.metadata.labels?.['kubernetes.io/service-name'] ?? ''}`;
    const list = out.get(key) ?? [];
    for (const e of s.endpoints) list.push(`${s.addressType} ${e.addresses.join(',')} ready=${String(e.conditions?.ready)} zone=${e.zone ?? '-'} ${JSON.stringify(s.ports ?? [])}`);
    out.set(key, list);
  }
  for (const l of out.values()) l.sort();
  return new Map([...out].sort((a, b) => a[0].localeCompare(b[0])));
}

/** `p` again, with its readiness set. */
const podAt = (p: Pod, ready?: boolean): Pod =>
  makePod(p.metadata.name, { namespace: p.metadata.namespace ?? '', uid: p.metadata.uid ?? '', labels: p.metadata.labels ?? {}, ips: [p.status?.podIP ?? ''], nodeName: p.spec.nodeName ?? '', ...(ready !== undefined ? { ready } : {}) });

const sliceMap = (slices: ReadonlyMap<string, EndpointSlice>): Record<string, string> => Object.fromEntries([...slices].map(([k, s]) => [k, comparableSlice(s)]).sort());

describe('bounded KUBE log', () => {
  it('snapshot, compaction, and replay / restart / fresh start from snapshot + tail', async () => {
    const s = (stack = await withStack());
    const jsm = s.js.jsm;
    const kube = s.js.names.kube;
    // Snapshots only when asked, compaction run by hand, so the full replay can be taken before the purge.
    const config = s.config({ partitions: P, snapshotEvery: 0, compactLog: false });
    const slicer = await start(config);
    const namespaces = [namespaceIn(0), namespaceIn(1)];
    let rv = 1;
    const pub = (o: Parameters<Stack['publish']>[0], opts: Parameters<Stack['publish']>[2] = {}): Promise<number> => s.publish(o, rv++, { partitions: P, ...opts });

    // Phase 1: nodes relabelled, Services, pods flipping readiness, some deleted and recreated.
    for (let round = 0; round < 4; round++) for (const n of [1, 2, 3]) await pub(makeNode(`node-${n}`, { zone: `zone-${(n + round) % 3}` }));
    const pods = new Map<string, Pod>();
    for (const ns of namespaces) {
      for (const svc of ['web', 'api', 'db']) await pub(makeService(svc, { namespace: ns, selector: { app: svc } }));
      for (let i = 0; i < 12; i++) {
        const app = ['web', 'api', 'db'][i % 3] as string;
        const p = makePod(`${app}-${i}`, { namespace: ns, uid: `${ns}-${app}-${i}`, labels: { app }, ips: [`10.${namespaces.indexOf(ns)}.0.${i + 1}`], nodeName: `node-${(i % 3) + 1}` });
        pods.set(`${ns}/${p.metadata.name}`, p);
      }
    }
    for (let round = 0; round < 6; round++) {
      for (const [, p] of pods) await pub(podAt(p, round % 2 === 0));
    }
    // A stale copy published after a newer version (a lagging watcher past the dedup window): the subject's last message is older than the object.
    const [firstKey, firstPod] = [...pods][10] as [string, Pod]; // not touched after the snapshot
    await s.publish(podAt(firstPod), 3, { partitions: P, msgID: `stale/${firstKey}` });
    // Deleted pods (young tombstones: carried as deletes) and another controller's EndpointSlice.
    const deleted = [...pods.values()].slice(-2);
    for (const p of deleted) await pub({ ...p, metadata: { ...p.metadata } }, { type: 'Deleted.v1' });
    const foreign: EndpointSlice = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'imported-1', namespace: namespaces[0] as string, uid: 'imported-1-uid', labels: { 'kubernetes.io/service-name': 'imported', 'endpointslice.kubernetes.io/managed-by': 'mcs-controller' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['10.9.9.9'] }],
      ports: [],
    } as unknown as EndpointSlice;
    await pub(foreign);
    await s.settled(config, slicer);

    // Snapshots of both partitions, then more churn: the tail.
    const t0 = performance.now();
    const snaps = [await slicer.snapshot(0), await slicer.snapshot(1)];
    const snapshotMs = performance.now() - t0;
    for (const o of snaps) expect(o.compactions).toEqual([]);
    for (let round = 0; round < 2; round++) {
      for (const [, p] of [...pods].slice(0, 10)) await pub(podAt(p, round === 1));
    }
    await pub(makeNode('node-2', { zone: 'zone-x' }));
    await pub(makeService('late', { namespace: namespaces[1] as string, selector: { app: 'web' } }));
    await s.settled(config, slicer);

    // The full replay, before anything is purged.
    const deps = { db: s.db.db, js: s.js.js, names: s.js.names, cluster: 'c1', partitions: P, managedBy: config.managedBy, maxEndpointsPerSlice: config.maxEndpointsPerSlice };
    const keys = await reconciledServiceKeys(s.db.db, 'c1');
    const full = new Map<string, ReplayReport>();
    for (const k of keys) full.set(`${k.namespace}/${k.name}`, await replayServiceLog(deps, k));
    for (const [k, r] of full) expect({ k, problems: r.problems, from: r.from }).toEqual({ k, problems: [], from: undefined });
    // Before the purge, a replay from the snapshot already equals it.
    for (const k of keys) {
      const r = await replayServiceLog({ ...deps, from: 'snapshot' }, k);
      expect(r.problems).toEqual([]);
      expect(r.from).toBeDefined();
      expect(r.slices.map(comparableSlice)).toEqual(full.get(`${k.namespace}/${k.name}`)?.slices.map(comparableSlice));
    }
    const slicesBefore = await loadClusterSlices(s.db.db, 'c1');

    // Compaction.
    const before = (await jsm.streams.info(kube)).state.messages;
    const cdeps = { db: s.db.db, js: s.js.js, jsm, names: s.js.names, cluster: 'c1', partitions: P, fence: [], tombstoneRetentionMs: 3_600_000, nowMs: () => Date.now() };
    const compactions: Compaction[] = [await compactPartition(cdeps, 0), await compactPartition(cdeps, 1), await compactNodes(cdeps)];
    const after = (await jsm.streams.info(kube)).state.messages;
    console.info(`bounded log: ${before} KUBE messages before compaction, ${after} after; snapshots of 2 partitions in ${snapshotMs.toFixed(0)} ms`, JSON.stringify(compactions));
    for (const c of compactions) expect(c.skipped).toBeUndefined();
    expect(compactions.map((c) => c.purged > 0)).toEqual([true, true, true]);
    expect(after).toBeLessThan(before);
    const cuts = await loadKubeLogCuts(s.db.db, 'c1');
    expect(cuts.get('p0')).toBe(compactions[0]?.keepFrom);
    expect(cuts.get('nodes')).toBe(compactions[2]?.keepFrom);

    // (a) Every live object's (and young tombstone's) last version is the last message of its subject.
    for (const filter of [kubePartitionFilter('c1', 0, s.js.names), kubePartitionFilter('c1', 1, s.js.names), kubeNodesFilter('c1', s.js.names)]) {
      const tails = await lastPerSubject(jsm, s.js.js, kube, filter);
      const stored = (await s.read(kube, filter)).map((m) => m.subject);
      expect(new Set(stored)).toEqual(new Set(tails.keys()));
      for (const [subject, tail] of tails) {
        const m = await storedMessage(jsm, kube, tail.seq);
        const body = JSON.parse(new TextDecoder().decode(m.data)) as { type: string; kind: string; object: { metadata: { namespace?: string; name: string; resourceVersion: string } } };
        const o = body.object.metadata;
        if (body.kind === 'EndpointSlice') {
          expect(o.name).toBe('imported-1');
          continue;
        }
        const row = await s.db.db.selectFrom('kube_objects').selectAll().where('cluster', '=', 'c1').where('kind', '=', body.kind as 'Pod').where('namespace', '=', body.kind === 'Node' ? '' : (o.namespace ?? '')).where('name', '=', o.name).executeTakeFirstOrThrow();
        expect({ subject, rv: o.resourceVersion, deleted: body.type === 'Deleted.v1' }).toEqual({ subject, rv: row.resource_version, deleted: row.deleted });
      }
    }
    // The stale copy was overtaken by the carried current version.
    const carriedTail = [...(await s.read(kube, kubePartitionFilter('c1', partitionOf(firstPod.metadata.namespace ?? '', P), s.js.names)))].filter((m) => m.subject.endsWith(`.${firstPod.metadata.name}`)).pop();
    expect((carriedTail?.data as { object: { metadata: { resourceVersion: string } } }).object.metadata.resourceVersion).not.toBe('3');
    const carriedMsg = await jsm.streams.getMessage(kube, { seq: carriedTail?.seq ?? 0 });
    expect(carriedMsg?.header.get(CARRIED_HEADER)).toBe(String(snaps.find((x) => x.snapshot.partition === partitionOf(firstPod.metadata.namespace ?? '', P))?.snapshot.seq));

    // (b) Snapshot + tail replay equals the full replay taken before the purge.
    for (const k of keys) {
      const r = await replayServiceLog(deps, k);
      expect(r.problems).toEqual([]);
      expect(r.from).toBeDefined();
      expect(r.slices.map(comparableSlice)).toEqual(full.get(`${k.namespace}/${k.name}`)?.slices.map(comparableSlice));
    }

    // (c) A slicer restarted after compaction, on fresh durables, is ready and keeps its slices.
    await slicer.close();
    running.splice(running.indexOf(slicer), 1);
    const settings = resolveSlicerSettings(config);
    for (const d of slicerDurables(settings.durablePrefix, settings.partitions)) await jsm.consumers.delete(kube, d);
    const restarted = await start(config);
    await s.settled(config, restarted);
    expect(sliceMap(await loadClusterSlices(s.db.db, 'c1'))).toEqual(sliceMap(slicesBefore));
    // Its own snapshot after the compaction, through the engine, compacts nothing new.
    const again = await restarted.snapshot(0);
    expect(again.snapshot.seq).toBeGreaterThanOrEqual(snaps[0]?.snapshot.seq ?? 0);
    expect((await listKubeSnapshots(s.db.db, 'c1')).filter((h) => h.partition === 0)).toHaveLength(2);

    // (d) A slicer on a fresh schema reading the compacted log from its start arrives at the same endpoints.
    const fresh = await withTestDb();
    dbs.push(fresh);
    const freshConfig = s.config({ partitions: P, dbSchema: fresh.schema, durablePrefix: `fresh-${s.js.id}`, snapshotEvery: 0 });
    const freshSlicer = await start(freshConfig);
    await s.settled(freshConfig, freshSlicer);
    expect(endpointSets(await loadClusterSlices(fresh.db, 'c1'))).toEqual(endpointSets(slicesBefore));
  }, 120_000);

  it("a hints reader holds a partition's cut only at the first message of its own filter it has not read", async () => {
    const s = (stack = await withStack());
    const config = s.config({ partitions: 1, snapshotEvery: 0, compactLog: false });
    const slicer = await start(config);
    let rv = 1;
    const nodeSeq = await s.publish(makeNode('node-1', { zone: 'a' }), rv++);
    const svcSeq = await s.publish(makeService('web', { selector: { app: 'web' } }), rv++);
    const pods = Array.from({ length: 4 }, (_, i) => makePod(`web-${i}`, { labels: { app: 'web' }, ips: [`10.0.0.${i + 1}`], nodeName: 'node-1' }));
    for (let round = 0; round < 8; round++) for (const p of pods) await s.publish(podAt(p, round % 2 === 0), rv++);
    await s.settled(config, slicer);
    await slicer.snapshot(0);
    const kube = s.js.names.kube;
    // The hints service's offsets, as it names them (hints/src/consumers.ts): its node and Service
    // consumers read their last messages long ago and nothing of their filters came since.
    const offset = (role: string) => `hints:c1:${kube}:p0:${role}`;
    await s.db.db.transaction().execute(async (trx) => {
      await advanceOffset(trx, offset('nodes'), nodeSeq);
      await advanceOffset(trx, offset('services'), svcSeq);
    });
    const cdeps = { db: s.db.db, js: s.js.js, jsm: s.js.jsm, names: s.js.names, cluster: 'c1', partitions: 1, fence: [], tombstoneRetentionMs: 3_600_000, nowMs: () => Date.now() };
    const quiet = await compactPartition(cdeps, 0);
    expect({ heldBy: quiet.heldBy, keepFrom: quiet.keepFrom, purged: quiet.purged > 0 }).toEqual({ heldBy: 'snapshot', keepFrom: quiet.snapshotSeq + 1, purged: true });

    // A Service change the hints reader has not read yet holds the next cut there (once it read
    // the copy of the Service the compaction carried forward).
    const carried = [...(await lastPerSubject(s.js.jsm, s.js.js, kube, `${kubePartitionFilter('c1', 0, s.js.names).slice(0, -1)}service.>`)).values()];
    expect(carried.map((t) => t.seq > quiet.snapshotSeq)).toEqual([true]);
    await s.db.db.transaction().execute((trx) => advanceOffset(trx, offset('services'), carried[0]?.seq ?? 0));
    const svc2 = await s.publish(makeService('web', { selector: { app: 'web' }, labels: { v: '2' } }), rv++);
    for (let round = 0; round < 8; round++) for (const p of pods) await s.publish(podAt(p, round % 2 === 1), rv++);
    await s.settled(config, slicer);
    await slicer.snapshot(0);
    const held = await compactPartition(cdeps, 0);
    expect({ heldBy: held.heldBy, keepFrom: held.keepFrom }).toEqual({ heldBy: `offset ${offset('services')}`, keepFrom: svc2 });
  }, 60_000);

  it('a log of one message per object is judged not worth compacting from counts alone, and left as it is', async () => {
    const s = (stack = await withStack());
    const config = s.config({ partitions: 1, snapshotEvery: 0, compactLog: false });
    const slicer = await start(config);
    let rv = 1;
    await s.publish(makeNode('node-1', { zone: 'a' }), rv++);
    await s.publish(makeService('web', { selector: { app: 'web' } }), rv++);
    for (let i = 0; i < 20; i++) await s.publish(podAt(makePod(`web-${i}`, { labels: { app: 'web' }, ips: [`10.0.1.${i + 1}`], nodeName: 'node-1' }), true), rv++);
    await s.settled(config, slicer);
    await slicer.snapshot(0);
    const before = (await s.js.jsm.streams.info(s.js.names.kube)).state;
    const cdeps = { db: s.db.db, js: s.js.js, jsm: s.js.jsm, names: s.js.names, cluster: 'c1', partitions: 1, fence: [], tombstoneRetentionMs: 3_600_000, nowMs: () => Date.now() };
    const c = await compactPartition(cdeps, 0);
    // 22 messages, all below the cut; the Service and the 20 pods are live and would all be carried.
    expect(c.skipped).toBe("not worth it: at most 22 messages below the cut, at least 21 to carry (bounds from the stream's sequences and the snapshot's 21 live objects)");
    expect([c.purged, c.carried]).toEqual([0, 0]);
    const after = (await s.js.jsm.streams.info(s.js.names.kube)).state;
    expect([after.messages, after.first_seq, after.last_seq]).toEqual([before.messages, before.first_seq, before.last_seq]);
  }, 60_000);

  it('the engine snapshots every SNAPSHOT_EVERY applied messages and compacts by itself', async () => {
    const s = (stack = await withStack());
    const config = s.config({ partitions: 1, snapshotEvery: 40 });
    const slicer = await start(config);
    let rv = 1;
    await s.publish(makeNode('node-1', { zone: 'a' }), rv++);
    await s.publish(makeService('web', { selector: { app: 'web' } }), rv++);
    const pods = Array.from({ length: 5 }, (_, i) => makePod(`web-${i}`, { labels: { app: 'web' }, ips: [`10.0.0.${i + 1}`], nodeName: 'node-1' }));
    for (let round = 0; round < 30; round++) for (const p of pods) await s.publish(podAt(p, round % 3 !== 0), rv++);
    await s.settled(config, slicer);
    await vi.waitFor(async () => {
      const cuts = await loadKubeLogCuts(s.db.db, 'c1');
      if ((cuts.get('p0') ?? 1) <= 1) throw new Error('not compacted yet');
    }, { timeout: 20_000, interval: 200 });
    const info = await s.js.jsm.streams.info(s.js.names.kube);
    expect(info.state.messages).toBeLessThan(152);
    expect((await listKubeSnapshots(s.db.db, 'c1')).length).toBeLessThanOrEqual(2);
    const metrics = await slicer.metrics.registry.metrics();
    expect(metrics).toMatch(/slicemesh_slicer_snapshots_total\{result="written",component="slicer"\} [1-9]/);
    expect(metrics).toMatch(/slicemesh_slicer_log_purged_total\{scope="partition",component="slicer"\} [1-9]/);
    // The replay now starts from the snapshot and still matches.
    const deps = { db: s.db.db, js: s.js.js, names: s.js.names, cluster: 'c1', partitions: 1, managedBy: config.managedBy, maxEndpointsPerSlice: config.maxEndpointsPerSlice };
    const r = await replayServiceLog(deps, { namespace: 'default', name: 'web' });
    expect(r.problems).toEqual([]);
    expect(r.from).toBeDefined();
  }, 60_000);
});
