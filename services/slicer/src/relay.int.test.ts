import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendOutbox } from '@slicemesh/db';
import { withTestDb } from '@slicemesh/db/testing';
import type { TestDb } from '@slicemesh/db/testing';
import { ensureStreams, partitionOf, readStreamRange, slicesSubject } from '@slicemesh/nats';
import type { StoredMessage } from '@slicemesh/nats';
import { withJetStream } from '@slicemesh/nats/testing';
import type { JetStreamFixture } from '@slicemesh/nats/testing';
import { runSlicesRelay } from './relay.ts';

const PARTITIONS = 4;
let f: JetStreamFixture;
let t: TestDb;

beforeEach(async () => {
  f = await withJetStream();
  t = await withTestDb();
  await ensureStreams(f.jsm, f.names);
});

afterEach(async () => {
  await f.cleanup();
  await t.close();
});

async function slicesMessages(count: number): Promise<StoredMessage[]> {
  const until = Date.now() + 10_000;
  for (;;) {
    const got: StoredMessage[] = [];
    for await (const m of readStreamRange(f.js, f.names.slices)) got.push(m);
    if (got.length >= count || Date.now() > until) return got;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the slices relay', () => {
  it('publishes an outbox row written before SLICES subjects carried the partition token under the current form', async () => {
    const subject = (partition: number | null, namespace: string) => slicesSubject({ cluster: 'c1', partition, namespace, service: 'web' }, f.names);
    await t.db.transaction().execute((trx) =>
      appendOutbox(trx, [
        { subject: subject(null, 'shop'), msgId: 'older-1', payload: { n: 1 } },
        { subject: subject(partitionOf('bank', PARTITIONS), 'bank'), msgId: 'current-1', payload: { n: 2 } },
      ]),
    );
    const stop = new AbortController();
    const relay = runSlicesRelay({ db: t.db, js: f.js, name: 'relay-test', signal: stop.signal, pollMs: 20, partitions: PARTITIONS, prefix: f.names.prefix });
    try {
      const got = await slicesMessages(2);
      expect(got.map((m) => [m.subject, m.data])).toEqual([
        [subject(partitionOf('shop', PARTITIONS), 'shop'), { n: 1 }],
        [subject(partitionOf('bank', PARTITIONS), 'bank'), { n: 2 }],
      ]);
    } finally {
      stop.abort();
      await relay;
    }
  });
});
