// readBackbone against real NATS and Postgres when the server cannot count for the consumers (a
// leaderless replicated consumer answers "JetStream system temporarily unavailable"): the
// services' own offsets against the last message of each consumer's filter decide instead.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advanceOffset } from '@slicemesh/db';
import { withTestDb } from '@slicemesh/db/testing';
import type { TestDb } from '@slicemesh/db/testing';
import type { JetStreamManager } from '@slicemesh/nats';
import { ensureStreams, kubePartitionFilter, publishAcked } from '@slicemesh/nats';
import { withJetStream } from '@slicemesh/nats/testing';
import type { JetStreamFixture } from '@slicemesh/nats/testing';
import { consumersOf, readBackbone } from './probe.ts';
import type { StackLayout } from './service-env.ts';

let f: JetStreamFixture;
let t: TestDb;
let layout: StackLayout;
beforeAll(async () => {
  f = await withJetStream();
  await ensureStreams(f.jsm, f.names);
  t = await withTestDb();
  layout = {
    natsUrl: f.url, databaseUrl: t.url, schema: t.schema, cluster: 'c1', partitions: 2, names: f.names,
    kubeServer: 'http://127.0.0.1:9', batchPeriodMs: 1000, ackWaitMs: 30_000, logLevel: 'silent',
  };
});
afterAll(async () => {
  await f?.cleanup();
  await t?.close();
});

const unavailable = async (): Promise<never> => {
  throw new Error('JetStream system temporarily unavailable');
};

/** `jsm` whose consumer info (and, with `streamsToo`, message reads) fail as a leaderless server's do. */
function unanswering(jsm: JetStreamManager, streamsToo: boolean): JetStreamManager {
  const consumers = new Proxy(jsm.consumers, { get: (c, p) => (p === 'info' ? unavailable : Reflect.get(c, p)) });
  const streams = new Proxy(jsm.streams, { get: (s, p) => (streamsToo && p === 'getMessage' ? unavailable : Reflect.get(s, p)) });
  return new Proxy(jsm, { get: (j, p) => (p === 'consumers' ? consumers : p === 'streams' ? streams : Reflect.get(j, p)) });
}

describe('readBackbone with consumers the server cannot count for', () => {
  it('judges each by its offset against its filter: behind, then caught up; unknown when neither can be read', async () => {
    const consumers = consumersOf(layout);
    const p0 = consumers.find((c) => c.service === 'slicer' && c.filter === kubePartitionFilter('c1', 0, f.names));
    expect(p0).toBeDefined();
    const subject = kubePartitionFilter('c1', 0, f.names).replace(/>$/, 'pod.ns.web-1');
    const first = await publishAcked(f.js, subject, { v: 1 }, { msgID: `${f.id}-1` });
    const last = await publishAcked(f.js, subject, { v: 2 }, { msgID: `${f.id}-2` });
    const read = (streamsToo: boolean) => readBackbone({ nc: f.nc, jsm: unanswering(f.jsm, streamsToo), db: t.db, layout, slicerUrls: () => [] }, consumers);

    await t.db.transaction().execute((trx) => advanceOffset(trx, p0?.offset ?? '', first.seq));
    const behind = await read(false);
    expect(behind.behind).toBe(`${p0?.durable} applied up to ${first.seq} of ${last.seq}`);
    expect(behind.unknown).toBeUndefined();

    await t.db.transaction().execute((trx) => advanceOffset(trx, p0?.offset ?? '', last.seq));
    const caughtUp = await read(false);
    expect(caughtUp.behind).toBeUndefined();
    expect(caughtUp.pending).toBe(0);
    expect(caughtUp.unknown).toBeUndefined();

    const blind = await read(true);
    expect(blind.unknown).toEqual(['pending']);
    expect(blind.missingConsumer).toContain('temporarily unavailable');
  });
});
