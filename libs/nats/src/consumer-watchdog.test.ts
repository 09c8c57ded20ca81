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
    ['a deleted consumer is one at once', { type: 'consumer_deleted', code: 409, description: 'consumer deleted' }, true],
    ['a missing stream too', { type: 'stream_not_found', name: 'S' }, true],
    ['a plain heartbeat is not', { type: 'heartbeat', lastConsumerSequence: 1, lastStreamSequence: 1 } as ConsumerNotification, false],
  ])('%s', (_name, n, stalled) => {
    expect(stallOf(n) !== undefined).toBe(stalled);
  });
});

describe('watchConsumer', () => {
  it('reports the first stall once, naming the consumer, and stops reading', async () => {
    const seen: ConsumerStalledError[] = [];
    let read = 0;
    async function* status(): AsyncGenerator<ConsumerNotification> {
      for (const count of [1, 2, 6, 7]) {
        read++;
        yield { type: 'heartbeats_missed', count };
      }
    }
    await watchConsumer('KUBE', 'slicer-p1', status(), (e) => seen.push(e));
    expect(seen.map((e) => e.message)).toEqual(['consumer KUBE/slicer-p1: 6 heartbeats missed in a row (no leader, or the server lost it)']);
    expect(read).toBe(3);
  });
  it('ends quietly with the status stream, or when it fails', async () => {
    const seen: unknown[] = [];
    await watchConsumer('S', 'd', (async function* () {})(), (e) => seen.push(e));
    const failing: AsyncIterable<ConsumerNotification> = {
      [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error('closed')) }),
    };
    await watchConsumer('S', 'd', failing, (e) => seen.push(e));
    expect(seen).toEqual([]);
  });
});
