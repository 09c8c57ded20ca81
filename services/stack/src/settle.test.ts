import { describe, expect, it } from 'vitest';
import { deepFreeze } from '@slicemesh/testing';
import type { BackboneReading } from './probe.ts';
import type { SettleReading } from './settle.ts';
import { NotSettledError, motionKey, pendingWork, waitSettled } from './settle.ts';

const IDLE: BackboneReading = deepFreeze({
  kubeSeq: 10, slicesSeq: 4, viewsSeq: 7, deadLetters: 0, pending: 0, dirty: 0, outbox: 0, slices: 2, hintedServices: 1, decidedServices: 1,
});
const r = (edit: Partial<BackboneReading> = {}, clusterVersion?: number): SettleReading =>
  deepFreeze({ backbone: { ...IDLE, ...edit }, ...(clusterVersion !== undefined ? { clusterVersion } : {}) });

/** Plays `readings` one per poll (the last repeats) on a fake clock advancing `stepMs` per poll. */
async function play(readings: readonly SettleReading[], opts: { quietMs: number; timeoutMs: number }, stepMs = 100): Promise<{ polls: number; result: SettleReading | Error }> {
  let t = 0;
  let i = 0;
  try {
    const result = await waitSettled(async () => readings[Math.min(i++, readings.length - 1)] as SettleReading, { ...opts, intervalMs: stepMs }, () => t, async (ms) => void (t += ms));
    return { polls: i, result };
  } catch (err) {
    return { polls: i, result: err as Error };
  }
}

describe('pendingWork', () => {
  const cases = [
    { name: 'nothing pending: null', reading: r(), want: null },
    { name: 'a consumer that does not exist yet is pending work', reading: r({ pending: null }), want: 'a consumer does not exist yet' },
    { name: 'a pending count the server got wrong (unknown) leaves it to the quiet period', reading: r({ pending: null, unknown: ['pending'] }), want: null },
    { name: 'an unknown pending count still names dirty Services', reading: r({ pending: null, unknown: ['pending'], dirty: 2 }), want: '2 dirty Services' },
    { name: 'an uncounted consumer whose service is behind its filter is pending work', reading: r({ pending: 0, behind: 'slicer-p1 applied up to 40 of 42' }), want: 'not counted, behind: slicer-p1 applied up to 40 of 42' },
    { name: 'messages, dirty Services and outbox rows are each named', reading: r({ pending: 3, dirty: 1, outbox: 2 }), want: '3 messages pending, 1 dirty Services, 2 outbox rows unpublished' },
  ];
  for (const tc of cases) it(tc.name, () => expect(pendingWork(tc.reading)).toBe(tc.want));
});

describe('motionKey', () => {
  it('moves with the cluster version and every stream position, not with counts', () => {
    expect(motionKey(r({ slices: 9 }))).toBe(motionKey(r()));
    for (const edit of [{ kubeSeq: 11 }, { slicesSeq: 5 }, { viewsSeq: 8 }, { deadLetters: 1 }]) expect(motionKey(r(edit))).not.toBe(motionKey(r()));
    expect(motionKey(r({}, 5))).not.toBe(motionKey(r({}, 6)));
  });
});

describe('waitSettled', () => {
  it('an idle backbone settles once it stayed still for the quiet period', async () => {
    const { polls, result } = await play([r()], { quietMs: 1000, timeoutMs: 10_000 });
    expect(result).toEqual(r());
    expect(polls).toBe(11); // t = 0, 100, ..., 1000
  });

  it('motion restarts the quiet period', async () => {
    const moving = [r({ kubeSeq: 1 }), r({ kubeSeq: 2 }), r({ kubeSeq: 3 }), r({ kubeSeq: 4 })];
    const { polls } = await play(moving, { quietMs: 500, timeoutMs: 10_000 });
    expect(polls).toBe(4 + 5); // still from the 4th reading on, settled 500 ms later
  });

  it('pending work restarts the quiet period even when nothing moves (an ack with no new message)', async () => {
    const { polls } = await play([r({ pending: 1 }), r({ pending: 1 }), r()], { quietMs: 300, timeoutMs: 10_000 });
    expect(polls).toBe(2 + 4);
  });

  it('gives up after the timeout with what was still pending', async () => {
    const { result } = await play([r({ dirty: 2 })], { quietMs: 100, timeoutMs: 1000 });
    expect(result).toBeInstanceOf(NotSettledError);
    expect((result as Error).message).toBe('not settled after 1000 ms: 2 dirty Services');
  });
});
