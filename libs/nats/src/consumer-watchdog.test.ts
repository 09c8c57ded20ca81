import { describe, expect, it } from 'vitest';
import type { ConsumerNotification } from '@nats-io/jetstream';
import type { ConsumerStalledError } from './consumer-watchdog.ts';
import { STALL_HEARTBEATS, stallOf, watchConsumer } from './consumer-watchdog.ts';

describe('stallOf', () => {
  it.each<[string, ConsumerNotification, boolean]>([
    ['a heartbeat or two missed is the client re-pulling, not a stall', { type: 'heartbeats_missed', count: 2 }, false],
    ['heartbeats missed STALL_HEARTBEATS times in a row are', { type: 'heartbeats_missed', count: STALL_HEARTBEATS }, true],
    ['a consumer not found once may be an election', { type: 'consumer_not_found', name: 'd', stream: 'S', count: 1 }, false],
    ['not found three times is a stall', { type: 'consumer_not_found', name: 'd', stream: 'S', count: 3 }, true],
    ['a 409 "consumer deleted" alone is not (a replicated consumer changing leader says it too)', { type: 'consumer_deleted', code: 409, description: 'consumer deleted' }, false],
    ['a missing stream too', { type: 'stream_not_found', name: 'S' }, true],
    ['a plain heartbeat is not', { type: 'heartbeat', lastConsumerSequence: 1, lastStreamSequence: 1 } as ConsumerNotification, false],
  ])('%s', (_name, n, stalled) => {
    expect(stallOf(n) !== undefined).toBe(stalled);
  });
});

describe('watchConsumer', () => {
  const never: AsyncIterable<ConsumerNotification> = { [Symbol.asyncIterator]: () => ({ next: () => new Promise(() => {}) }) };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('reports the first stall of the notifications once, naming the consumer', async () => {
    const seen: ConsumerStalledError[] = [];
    async function* status(): AsyncGenerator<ConsumerNotification> {
      for (const count of [2, 3, 6, 7]) yield { type: 'heartbeats_missed', count };
    }
    const w = watchConsumer('KUBE', 'slicer-p1', status(), (e) => seen.push(e), { silenceMs: 60_000 });
    await sleep(20);
    w.stop();
    expect(seen.map((e) => e.message)).toEqual(['consumer KUBE/slicer-p1: 6 heartbeats missed in a row (no leader, or the server lost it)']);
  });

  it('reports a silence: no pull and no message for silenceMs (the client waiting for ever, without a notification)', async () => {
    const seen: ConsumerStalledError[] = [];
    const w = watchConsumer('KUBE', 'hints-p3', never, (e) => seen.push(e), { silenceMs: 100 });
    await sleep(400);
    w.stop();
    expect(seen).toHaveLength(1);
    expect(seen[0]?.message).toMatch(/^consumer KUBE\/hints-p3: no pull and no message for /);
  });

  it('pulls, messages and a running handler keep it quiet', async () => {
    const seen: unknown[] = [];
    async function* pulls(): AsyncGenerator<ConsumerNotification> {
      for (let i = 0; i < 8; i++) {
        await sleep(40);
        yield { type: 'next', options: {} } as ConsumerNotification;
      }
      await new Promise(() => {});
    }
    const w = watchConsumer('S', 'd', pulls(), (e) => seen.push(e), { silenceMs: 120 });
    await sleep(350); // pulls every 40 ms
    for (let i = 0; i < 5; i++) {
      await sleep(60);
      w.alive(); // messages every 60 ms
    }
    await w.handling(sleep(400)); // a handler longer than the silence
    w.stop();
    expect(seen).toEqual([]);
  });

  it('a consumer the server keeps failing to answer for is a stall even while the client pulls', async () => {
    async function* pulls(): AsyncGenerator<ConsumerNotification> {
      for (;;) {
        await sleep(20);
        yield { type: 'next', options: {} } as ConsumerNotification;
      }
    }
    const seen: ConsumerStalledError[] = [];
    const w = watchConsumer('KUBE', 'slicer-p5', pulls(), (e) => seen.push(e), {
      silenceMs: 150,
      probeEveryMs: 20,
      probe: () => Promise.reject(new Error('JetStream system temporarily unavailable')),
    });
    await sleep(500);
    w.stop();
    expect(seen.map((e) => e.message)).toEqual([expect.stringMatching(/^consumer KUBE\/slicer-p5: the server has not answered for it for \d+ s \(JetStream system temporarily unavailable\)$/)]);
  });

  it('a probe that fails a moment and then answers is no stall', async () => {
    let calls = 0;
    const seen: unknown[] = [];
    const w = watchConsumer('S', 'd', never, (e) => seen.push(e), {
      silenceMs: 10_000,
      probeEveryMs: 20,
      probe: () => (++calls < 3 ? Promise.reject(new Error('503')) : Promise.resolve()),
    });
    await sleep(200);
    w.stop();
    expect(seen).toEqual([]);
    expect(calls).toBeGreaterThan(3);
  });

  it('ends quietly when the status stream fails, and stop() ends the watch', async () => {
    const seen: unknown[] = [];
    const failing: AsyncIterable<ConsumerNotification> = {
      [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error('closed')) }),
    };
    const w = watchConsumer('S', 'd', failing, (e) => seen.push(e), { silenceMs: 50 });
    w.stop();
    await sleep(200);
    expect(seen).toEqual([]);
  });
});
