import { describe, expect, it } from 'vitest';
import type { Consumer, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import { fetchToEnd } from './fetch-to-end.ts';

// A stream as a list of matching sequences, a consumer that delivers them in batches with the
// pending count a (possibly wrong) server reports, and the stream's own next-message lookup.
function fakes(seqs: readonly number[], pendingOf: (index: number) => number) {
  let next = 0;
  const lookups: number[] = [];
  let fetches = 0;
  const consumer = {
    fetch: async ({ max_messages }: { max_messages: number }) => {
      fetches++;
      const batch = seqs.slice(next, next + max_messages).map((seq, i) => ({ seq, info: { pending: pendingOf(next + i) } }) as unknown as JsMsg);
      next += batch.length;
      return (async function* () {
        yield* batch;
      })();
    },
  } as unknown as Consumer;
  const jsm = {
    streams: {
      getMessage: async (_stream: string, q: { seq: number }) => {
        lookups.push(q.seq);
        const found = seqs.find((s) => s >= q.seq);
        return found === undefined ? null : { seq: found };
      },
    },
  } as unknown as JetStreamManager;
  return { consumer, jsm, lookups, fetches: () => fetches };
}

const read = async (seqs: number[], pendingOf: (i: number) => number, toSeq?: number, fromSeq?: number) => {
  const f = fakes(seqs, pendingOf);
  const out: number[] = [];
  for await (const m of fetchToEnd(f.consumer, { jsm: f.jsm, stream: 'S', filter: 'a.>', batch: 3, expiresMs: 1000, ...(toSeq !== undefined ? { toSeq } : {}), ...(fromSeq !== undefined ? { fromSeq } : {}) })) out.push(m.seq);
  return { out, lookups: f.lookups, fetches: f.fetches() };
};

describe('fetchToEnd', () => {
  const seqs = [2, 5, 6, 9, 12, 13, 20];
  it.each([
    ['a true pending count', (i: number) => seqs.length - 1 - i, undefined, seqs],
    ['a pending count that says 0 three messages early (nats-server 2.9 after purges)', (i: number) => Math.max(0, seqs.length - 4 - i), undefined, seqs],
    ['a pending count that is 0 from the first message', () => 0, undefined, seqs],
    ['a pending count that never reaches 0', () => 7, undefined, seqs],
    ['an upper bound between two messages', (i: number) => seqs.length - 1 - i, 10, [2, 5, 6, 9]],
    ['an upper bound on a message, with pending 0 early', () => 0, 12, [2, 5, 6, 9, 12]],
  ])('reads every message up to the end with %s', async (_name, pendingOf, toSeq, want) => {
    expect((await read(seqs, pendingOf, toSeq)).out).toEqual(want);
  });

  it('asks the stream where the filter starts, then only when the pending count says 0, and not again before the message it found', async () => {
    const { lookups } = await read(seqs, () => 0);
    // First where the filter starts (2); after 2 it learns of 5; after 5 of 6; … then nothing after 20.
    expect(lookups).toEqual([1, 3, 6, 7, 10, 13, 14, 21]);
    const honest = await read(seqs, (i) => seqs.length - 1 - i);
    expect(honest.lookups).toEqual([1, 21]);
  });

  it.each([
    ['nothing after fromSeq', undefined, 21],
    ['nothing up to toSeq', 4, 3],
  ])('does not fetch at all when the range holds nothing: %s', async (_name, toSeq, fromSeq) => {
    const r = await read(seqs, () => 0, toSeq, fromSeq);
    expect({ out: r.out, fetches: r.fetches }).toEqual({ out: [], fetches: 0 });
  });
});
