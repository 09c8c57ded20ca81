import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureStreams, publishAcked } from '@slicemesh/nats';
import { withJetStream } from '../../../../libs/nats/testing/jetstream.ts';
import type { JetStreamFixture } from '../../../../libs/nats/testing/jetstream.ts';
import { scenarioMessages } from '../../../../libs/history/testing/scenario.ts';
import { openLiveLog } from './live-log.ts';

let f: JetStreamFixture;
beforeEach(async () => {
  f = await withJetStream();
  await ensureStreams(f.jsm, f.names);
});
afterEach(async () => {
  await f.cleanup();
});

describe('openLiveLog', () => {
  it('reads only its cluster from a stream two clusters share, whichever wrote last', async () => {
    const a = scenarioMessages('a', f.names.prefix).slice(0, 4);
    const b = scenarioMessages('b', f.names.prefix).slice(0, 4);
    // a1 b1 a2 b2 … : the stream's last message is cluster b's.
    for (let i = 0; i < 4; i++) {
      await publishAcked(f.js, a[i]?.subject as string, a[i]?.body, { msgID: a[i]?.msgID as string });
      await publishAcked(f.js, b[i]?.subject as string, b[i]?.body, { msgID: b[i]?.msgID as string });
    }
    const log = await openLiveLog({ natsUrl: f.url, cluster: 'a', names: f.names });
    try {
      expect(await log.bounds()).toMatchObject({ first: { seq: 1 }, last: { seq: 7 } });
      expect((await log.eventAtOrAfter(2))?.seq).toBe(3);
      const seqs: number[] = [];
      for await (const e of log.events(1, 8)) seqs.push(e.seq);
      expect(seqs).toEqual([1, 3, 5, 7]);
      expect(await log.deadLetters()).toEqual([]);
      expect(await log.reconciles()).toEqual([]);
      expect((await log.settings()).prefix).toBe(f.names.prefix);
    } finally {
      await log.close();
    }
  });

  it('is empty for a cluster with no events', async () => {
    const log = await openLiveLog({ natsUrl: f.url, cluster: 'none', names: f.names });
    try {
      expect(await log.bounds()).toBeNull();
    } finally {
      await log.close();
    }
  });
});
