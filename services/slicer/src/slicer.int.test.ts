import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EndpointSlice } from '@slicemesh/model';
import { LABEL_MANAGED_BY, MANAGED_BY_MIRRORING } from '@slicemesh/model';
import { makeEndpoints, makeNode, makePod, makeService, makeSubset } from '@slicemesh/testing';
import { getOffset, loadReconciles, loadSlices } from '@slicemesh/db';
import { withTestDb } from '@slicemesh/db/testing';
import { MIRRORING_EVENT_COMPONENT, eventsSubject, kubeObjectSubject, parseEventRequest, partitionOf } from '@slicemesh/nats';
import type { DeadLetterBody } from '@slicemesh/nats';
import { nodesDurable, offsetName, partitionDurable } from './config.ts';
import { ClusterState } from '@slicemesh/core';
import { ingestBatch } from './ingest.ts';
import { restoreProjection, slicerStore } from './store.ts';
import type { SliceChangedMessage } from './reconcile.ts';
import { comparableSlice, replayServiceLog } from './replay.ts';
import type { Slicer } from './slicer.ts';
import { startSlicer } from './slicer.ts';
import { envelopeOf, kubeMessage } from './testing/kube-events.ts';
import type { Stack } from './testing/stack.ts';
import { withStack } from './testing/stack.ts';

const web = makeService('web', { selector: { app: 'web' } });
const pod = (name: string, ip: string, o: { nodeName?: string; ready?: boolean } = {}) => makePod(name, { labels: { app: 'web' }, ips: [ip], ...o });
const ips = (slices: readonly EndpointSlice[]): string[] => slices.flatMap((s) => s.endpoints.flatMap((e) => e.addresses)).sort();

let stack: Stack | undefined;
const running: Slicer[] = [];

async function start(s: Stack, overrides: Parameters<Stack['config']>[0] = {}): Promise<Slicer> {
  const slicer = startSlicer(s.config(overrides));
  running.push(slicer);
  await slicer.ready;
  return slicer;
}

afterEach(async () => {
  for (const s of running.splice(0)) await s.close();
  await stack?.close();
  stack = undefined;
});

async function slicesMessages(s: Stack): Promise<SliceChangedMessage[]> {
  return (await s.read(s.js.names.slices, `${s.js.names.prefix}slices.>`)).map((m) => m.data as SliceChangedMessage);
}

describe('slicer against NATS and Postgres', () => {
  it('turns Service, Pod and Node events into slices in Postgres and one SLICES message per change', async () => {
    const s = (stack = await withStack());
    const slicer = await start(s);
    await s.publish(makeNode('node-1', { zone: 'a' }), 1);
    await s.publish(web, 2);
    await s.publish(pod('p1', '10.0.0.1'), 3);
    await s.publish(pod('p2', '10.0.0.2'), 4);
    const config = s.config();
    await s.settled(config, ...running);

    const stored = await s.slices('web');
    expect(ips(stored)).toEqual(['10.0.0.1', '10.0.0.2']);
    expect(stored[0]?.endpoints[0]?.zone).toBe('a');
    const messages = await slicesMessages(s);
    expect(messages.length).toBeGreaterThan(0);
    const last = messages[messages.length - 1] as SliceChangedMessage;
    expect(last).toMatchObject({ type: 'SliceChanged.v1', cluster: 'c1', namespace: 'default', service: 'web' });
    expect(last.upserts.map(comparableSlice)).toEqual(stored.map(comparableSlice));
    const records = await loadReconciles(s.db.db, 'c1', 'default', 'web');
    expect(records.length).toBeGreaterThan(0);
    expect(records[records.length - 1]?.kubeSeqTo).toBe(await getOffset(s.db.db, offsetName(config.kubeStream, partitionDurable(config.durablePrefix as string, 0))));

    // Readiness and metrics (the service host serves them over HTTP; see service-host tests).
    expect(slicer.readiness()).toEqual({ ready: true });
    const metrics = await slicer.metrics.registry.metrics();
    expect(metrics).toMatch(/slicemesh_slicer_events_ingested_total\{kind="Pod",result="applied",component="slicer"\} 2/);
    expect(metrics).toMatch(/slicemesh_slicer_reconciles_total\{result="changed",component="slicer"\} \d+/);
    expect(metrics).toMatch(/slicemesh_slicer_outbox_lag_rows\{component="slicer"\} 0/);
  });

  it('redelivery and duplicate publishes change nothing', async () => {
    const s = (stack = await withStack());
    await start(s);
    const seqWeb = await s.publish(web, 2);
    await s.publish(pod('p1', '10.0.0.1'), 3);
    await s.publish(makeNode('node-1'), 4);
    const config = s.config();
    await s.settled(config, ...running);
    const snapshot = async () => ({
      objects: await s.db.db.selectFrom('kube_objects').selectAll().orderBy('name').execute(),
      slices: await s.slices('web'),
      reconciles: (await loadReconciles(s.db.db, 'c1', 'default', 'web')).length,
      outbox: (await s.db.db.selectFrom('outbox').select('id').execute()).length,
    });
    const before = await snapshot();

    // 1. A true redelivery: the same stream sequence again is skipped by the stored offset.
    const offset = offsetName(config.kubeStream, partitionDurable(config.durablePrefix as string, 0));
    const again = kubeMessage(seqWeb, { ...web, metadata: { ...web.metadata, resourceVersion: '2' } }, { cluster: 'c1', prefix: s.js.names.prefix });
    const store = slicerStore(s.db.db, 'c1');
    const snap = await store.loadSnapshot([offset]);
    const state = new ClusterState();
    await restoreProjection(state, snap);
    const [out] = await ingestBatch(offset, [again], {
      state,
      offsets: new Map(snap.offsets),
      store,
      deadLetters: { publish: () => Promise.reject(new Error('unexpected dead letter')) },
      cluster: 'c1',
      partitions: 1,
      prefix: s.js.names.prefix,
      batchPeriodMs: 0,
    });
    expect(out?.result).toBe('duplicate');
    // 2. The same msgID again: the stream drops it. 3. The same version under a new msgID (a second watcher): stale.
    await s.publish(pod('p1', '10.0.0.1'), 3);
    await s.publish(pod('p1', '10.0.0.1'), 3, { msgID: 'watcher-2/p1/3' });
    await s.settled(config, ...running);
    expect(await snapshot()).toEqual(before);
  });

  it('dead-letters malformed messages with their reason and keeps working', async () => {
    const s = (stack = await withStack());
    const slicer = await start(s);
    const { prefix } = s.js.names;
    const part = partitionOf('default', 1);
    await s.js.js.publish(kubeObjectSubject({ cluster: 'c1', partition: part, kind: 'Service', namespace: 'default', name: 'web' }, { prefix }), '{"type": "Upserted.v1", oops', { msgID: 'bad-json' });
    await s.publish({ ...web, spec: { ...web.spec, ports: [{ name: 'http', port: 70000, protocol: 'TCP' }] } }, 5);
    const hostile = 'a.b*c >';
    await s.js.js.publish(
      kubeObjectSubject({ cluster: 'c1', partition: part, kind: 'Service', namespace: 'default', name: hostile }, { prefix }),
      JSON.stringify(envelopeOf({ ...web, metadata: { ...web.metadata, name: hostile, resourceVersion: '6' } })),
      { msgID: 'hostile' },
    );
    await s.publish(web, 7);
    await s.settled(s.config(), ...running);

    const letters = (await s.read(s.js.names.dlq, `${prefix}dlq.>`)).map((m) => m.data as DeadLetterBody);
    expect(letters.map((l) => l.field ?? null)).toEqual([null, 'object.spec.ports[0].port', 'object.metadata.name']);
    expect(letters[0]?.reason).toMatch(/^body is not JSON/);
    expect(letters[1]?.reason).toMatch(/^Service default\/web: spec\.ports\[0\]\.port: /);
    expect(letters[2]?.reason).toContain(`Service default/${hostile}`);
    expect(letters[0]?.object).toBe('{"type": "Upserted.v1", oops');
    expect(letters.every((l) => l.subject?.startsWith(`${prefix}kube.c1.`))).toBe(true);
    // Still working: the valid Service after the bad ones got its (placeholder) slice.
    expect(await s.slices('web')).toHaveLength(1);
    expect(await slicer.metrics.deadLetters.get()).toMatchObject({ values: [{ value: 3 }] });
  });

  it('a restart mid-stream ends with the slices the log determines, and no SLICES message twice', async () => {
    const s = (stack = await withStack());
    await s.publish(makeNode('node-1'), 1);
    await s.publish(web, 2);
    let last = 0;
    // More than one ingest batch (500), so the backlog is still being consumed when it stops.
    const ip = (i: number): string => `10.${i >> 8}.${i & 255}.1`;
    for (let i = 1; i <= 1200; i++) last = await s.publish(pod(`p${i}`, ip(i)), 10 + i);
    // Stop while the backlog is being consumed: a batch may be in flight, the rest unread.
    const first = startSlicer(s.config());
    running.push(first);
    const offset = offsetName(s.js.names.kube, partitionDurable(`slicer-${s.js.id}`, 0));
    await vi.waitFor(async () => expect(await getOffset(s.db.db, offset)).toBeGreaterThan(5), { timeout: 10_000, interval: 5 });
    await first.close();
    await expect(first.ready).rejects.toThrow(/closed during startup/);
    expect(await getOffset(s.db.db, offset)).toBeLessThan(last);

    for (let i = 1201; i <= 1205; i++) await s.publish(pod(`p${i}`, ip(i)), 10 + i);
    await s.publish(pod('p2', ip(2)), 2000, { type: 'Deleted.v1' });
    await start(s);
    await s.settled(s.config(), ...running);
    const restarted = await s.slices('web');
    const want = Array.from({ length: 1205 }, (_, i) => ip(i + 1)).filter((a) => a !== ip(2)).sort();
    expect(ips(restarted)).toEqual(want);
    const replay = await replayServiceLog(
      { db: s.db.db, js: s.js.js, names: s.js.names, cluster: 'c1', partitions: 1, managedBy: s.config().managedBy, maxEndpointsPerSlice: 100 },
      { namespace: 'default', name: 'web' },
    );
    expect(replay.problems).toEqual([]);

    // Every outbox row went out exactly once (the relay publishes with the row's msgID).
    const messages = await slicesMessages(s);
    const outboxRows = await s.db.db.selectFrom('outbox').select('msg_id').execute();
    expect(messages).toHaveLength(outboxRows.length);
    expect(new Set(messages.map((m) => m.reconcileID)).size).toBe(messages.length);

    // An uninterrupted slicer over the same log, in a schema of its own, ends with the same
    // endpoints (with their conditions) in as many slices. Which slice holds which endpoint,
    // names and generations record history, as upstream's do (how batches fell, whether a
    // placeholder existed to be recycled); the replay check above is the exact one.
    const other = await withTestDb();
    try {
      const fresh = startSlicer(s.config({ dbSchema: other.schema, durablePrefix: `fresh-${s.js.id}` }));
      running.push(fresh);
      await fresh.ready;
      const otherSlices = () => loadSlices(other.db, 'c1', 'default', 'web');
      await vi.waitFor(async () => expect(ips(await otherSlices())).toEqual(want), { timeout: 20_000, interval: 100 });
      const endpoints = (x: readonly EndpointSlice[]) =>
        x
          .flatMap((sl) => sl.endpoints.map((e) => JSON.stringify({ ...e, addresses: [...e.addresses] })))
          .sort();
      const got = await otherSlices();
      expect(endpoints(got)).toEqual(endpoints(restarted));
      expect(got).toHaveLength(restarted.length);
    } finally {
      await closeLatest(running);
      await other.close();
    }
  });

  it('A.12.6 with a batch period of 1s, three pod adds in quick succession are one reconcile', async () => {
    const s = (stack = await withStack());
    const config = s.config({ batchPeriod: 1000 });
    const slicer = await start(s, { batchPeriod: 1000 });
    const syncs = async () => (await slicer.metrics.reconciles.get()).values.reduce((n, v) => n + v.value, 0);
    await s.publish(makeNode('node-1'), 1);
    await s.publish(web, 2);
    await s.settled(config, ...running);
    const before = await syncs();
    for (let i = 1; i <= 3; i++) await s.publish(pod(`p${i}`, `10.0.0.${i}`), 10 + i);
    await s.settled(config, ...running);
    // Every reconcile attempt counts, "clean" ones included: one window, one sync.
    expect((await syncs()) - before).toBe(1);
    expect(ips(await s.slices('web'))).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.3']);
  });

  it('mirrors a selectorless Service with Endpoints', async () => {
    const s = (stack = await withStack());
    await start(s);
    await s.publish(makeService('legacy', { selector: null }), 1);
    await s.publish(makeEndpoints('legacy', { subsets: [makeSubset([{ name: 'http', port: 80, protocol: 'TCP' }], ['10.1.0.1', '10.1.0.2'], ['10.1.0.3'])] }), 2);
    await s.settled(s.config(), ...running);
    const stored = await s.slices('legacy');
    expect(stored.map((x) => x.metadata.labels?.[LABEL_MANAGED_BY])).toEqual([MANAGED_BY_MIRRORING]);
    expect(stored[0]?.endpoints.map((e) => [e.addresses[0], e.conditions.ready])).toEqual([
      ['10.1.0.1', true],
      ['10.1.0.2', true],
      ['10.1.0.3', false],
    ]);
  });

  it('A.13.5 a mirroring warning becomes an Event request on the Endpoints object, after the commit', async () => {
    const s = (stack = await withStack());
    await start(s);
    await s.publish(makeService('legacy', { selector: null }), 1);
    await s.publish(makeEndpoints('legacy', { subsets: [makeSubset([{ name: 'http', port: 80, protocol: 'TCP' }], ['10.1.0.1', 'db.example.com'], [])] }), 2);
    await s.settled(s.config(), ...running);
    const subject = eventsSubject({ cluster: 'c1', component: MIRRORING_EVENT_COMPONENT }, s.js.names);
    const requests = await vi.waitFor(async () => {
      const got = (await s.read(s.js.names.events as string, subject)).map((m) => parseEventRequest(m.data, m.subject, { cluster: 'c1', prefix: s.js.names.prefix }));
      if (got.length === 0) throw new Error('no event request yet');
      return got;
    }, { timeout: 10_000, interval: 100 });
    expect(requests).toEqual([{ ok: true, value: expect.objectContaining({
      component: MIRRORING_EVENT_COMPONENT,
      involvedObject: expect.objectContaining({ kind: 'Endpoints', apiVersion: 'v1', namespace: 'default', name: 'legacy' }),
      event: { type: 'Warning', reason: 'InvalidIPAddress', message: 'Skipped 1 invalid IP addresses when mirroring to EndpointSlices' },
    }) }]);
    expect(ips(await s.slices('legacy'))).toEqual(['10.1.0.1']);
  });

  it('the replay check re-derives the recorded slices from the KUBE log, and notices tampering', async () => {
    const s = (stack = await withStack());
    await start(s, { maxEndpointsPerSlice: 2 });
    await s.publish(makeNode('node-1', { zone: 'a' }), 1);
    await s.publish(web, 2);
    for (let i = 1; i <= 4; i++) await s.publish(pod(`p${i}`, `10.0.0.${i}`), 10 + i);
    await s.settled(s.config(), ...running);
    await s.publish(makeNode('node-1', { zone: 'b' }), 20);
    await s.publish(pod('p1', '10.0.0.1'), 21, { type: 'Deleted.v1' });
    await s.publish(pod('p5', '10.0.0.5', { ready: false }), 22);
    await s.settled(s.config(), ...running);

    const deps = { db: s.db.db, js: s.js.js, names: s.js.names, cluster: 'c1', partitions: 1, managedBy: s.config().managedBy, maxEndpointsPerSlice: 2 };
    const report = await replayServiceLog(deps, { namespace: 'default', name: 'web' });
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.steps.length).toBeGreaterThan(1);

    const [victim] = await s.slices('web');
    await s.db.db
      .updateTable('endpoint_slices')
      .set({ body: JSON.stringify({ ...victim, endpoints: [] }) })
      .where('name', '=', victim?.metadata.name ?? '')
      .execute();
    const tampered = await replayServiceLog(deps, { namespace: 'default', name: 'web' });
    expect(tampered.ok).toBe(false);
    expect(tampered.problems).toEqual([expect.stringMatching(new RegExp(`^final state: slice ${victim?.metadata.name} differs`))]);
  });

  it('close() before the consumers exist ends startup cleanly', async () => {
    const s = (stack = await withStack());
    const slicer = startSlicer(s.config());
    await slicer.close();
    await expect(slicer.ready).rejects.toThrow(/closed during startup/);
    expect(slicer.isReady()).toBe(false);
    // The node durable may or may not exist; a new slicer starts fine either way.
    await start(s);
    expect(nodesDurable(`slicer-${s.js.id}`, 0)).toBe(`slicer-${s.js.id}-p0-nodes`);
  });
});

/** Closes the most recent slicer (it uses a schema that is about to be dropped). */
async function closeLatest(list: Slicer[]): Promise<void> {
  await list.pop()?.close();
}
