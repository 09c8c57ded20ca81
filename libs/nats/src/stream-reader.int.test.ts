import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withJetStream } from '../testing/jetstream.ts';
import type { JetStreamFixture } from '../testing/jetstream.ts';
import { publishAcked } from './publish.ts';
import { redriveDeadLetter } from './redrive.ts';
import { firstMessageFrom, readStreamRange, streamSeqBounds } from './stream-reader.ts';
import { ensureStreams } from './streams.ts';
import { nextSeqMatching } from './fetch-to-end.ts';
import { countFrom, lastPerSubject, purgeBelow } from './log-retention.ts';

let f: JetStreamFixture;
beforeEach(async () => {
  f = await withJetStream();
  await ensureStreams(f.jsm, f.names);
});
afterEach(async () => {
  await f.cleanup();
});

const subject = (cluster: string, n: number) => `${f.names.prefix}kube.${cluster}.node.n${n}`;
async function publishMixed(): Promise<void> {
  // Two clusters share the stream: a, b, a, b, a …
  for (let i = 1; i <= 6; i++) await publishAcked(f.js, subject(i % 2 === 1 ? 'a' : 'b', i), { i }, { msgID: `m${i}` });
  await f.js.publish(subject('a', 7), new TextEncoder().encode('not json'), { msgID: 'm7' });
}
const seqs = async (it: AsyncIterable<{ seq: number }>): Promise<number[]> => {
  const out: number[] = [];
  for await (const m of it) out.push(m.seq);
  return out;
};

describe('stream reader', () => {
  it.each([
    ['every message of a filter, in order', { filter: `${'PREFIX'}kube.a.>` }, [1, 3, 5, 7]],
    ['a range of sequences', { filter: `${'PREFIX'}kube.a.>`, fromSeq: 2, toSeq: 5 }, [3, 5]],
    ['the whole stream without a filter', { fromSeq: 5 }, [5, 6, 7]],
    ['nothing when the range holds none of the filter', { filter: `${'PREFIX'}kube.b.>`, fromSeq: 7 }, []],
  ])('reads %s', async (_name, o, want) => {
    await publishMixed();
    const opts = { ...o, ...('filter' in o ? { filter: o.filter.replace('PREFIX', f.names.prefix) } : {}) };
    expect(await seqs(readStreamRange(f.js, f.names.kube, opts))).toEqual(want);
  });

  it('keeps the subject, the time and the parsed body; a body that is not JSON keeps its text', async () => {
    await publishMixed();
    const all = [];
    for await (const m of readStreamRange(f.js, f.names.kube, { fromSeq: 6 })) all.push(m);
    expect(all[0]).toMatchObject({ seq: 6, subject: subject('b', 6), data: { i: 6 } });
    expect(Date.parse(all[0]?.time ?? '')).toBeGreaterThan(0);
    expect(all[1]).toMatchObject({ seq: 7, data: undefined, raw: 'not json' });
    expect(all[1]?.parseError).toBeDefined();
  });

  it('finds the first message of a filter at or after a sequence, and the stream bounds', async () => {
    await publishMixed();
    expect((await firstMessageFrom(f.js, f.names.kube, `${f.names.prefix}kube.b.>`, 3))?.seq).toBe(4);
    expect(await firstMessageFrom(f.js, f.names.kube, `${f.names.prefix}kube.b.>`, 7)).toBeNull();
    expect(await streamSeqBounds(f.jsm, f.names.kube)).toEqual({ first: 1, last: 7, messages: 7 });
    expect(await streamSeqBounds(f.jsm, `${f.names.kube}_missing`)).toBeNull();
  });

  it('asks the stream for the next message of one filter or several (next_by_subj), null past the end', async () => {
    await publishMixed();
    const a = `${f.names.prefix}kube.a.>`;
    const b = `${f.names.prefix}kube.b.>`;
    expect(await nextSeqMatching(f.jsm, f.names.kube, a, 2)).toBe(3);
    expect(await nextSeqMatching(f.jsm, f.names.kube, b, 7)).toBeNull();
    expect(await nextSeqMatching(f.jsm, f.names.kube, [b, a], 5)).toBe(5);
    expect(await nextSeqMatching(f.jsm, f.names.kube, undefined, 7)).toBe(7);
  });

  it('reads, counts and finds the last message per subject across the gaps a filtered purge leaves', async () => {
    // Compaction's pattern: many versions per object, the old ones of one scope purged, then a tail.
    const subj = (scope: string, n: number) => `${f.names.prefix}kube.${scope}.pod.ns.p${n}`;
    for (let i = 0; i < 300; i++) await publishAcked(f.js, subj(i % 3 === 0 ? 'x' : 'y', i % 17), { i }, { msgID: `v${i}` });
    const x = `${f.names.prefix}kube.x.>`;
    const purged = await purgeBelow(f.jsm, f.names.kube, x, 200);
    expect(purged).toBeGreaterThan(0);
    for (let i = 300; i < 330; i++) await publishAcked(f.js, subj(i % 2 === 0 ? 'x' : 'y', i % 17), { i }, { msgID: `v${i}` });
    const want = []; // message i has sequence i + 1; scope x below 200 is gone
    for (let i = 0; i < 330; i++) if ((i < 300 ? i % 3 === 0 : i % 2 === 0) && i + 1 >= 200) want.push(i + 1);
    expect(await seqs(readStreamRange(f.js, f.names.kube, { filter: x, fromSeq: 150 }))).toEqual(want);
    expect(await countFrom(f.jsm, f.js, f.names.kube, x, 1)).toBe(want.length);
    const tails = await lastPerSubject(f.jsm, f.js, f.names.kube, x);
    const wantTails = new Map<string, number>();
    for (const seq of want) wantTails.set(subj('x', (seq - 1) % 17), seq);
    expect(new Map([...tails].map(([k, t]) => [k, t.seq]))).toEqual(wantTails);
  });

  it('redrives a dead letter once: a second redrive within the duplicate window is a duplicate', async () => {
    const r = { subject: subject('a', 9), body: { i: 9 }, dlqStream: f.names.dlq, dlqSeq: 42 };
    const first = await redriveDeadLetter(f.js, r);
    const again = await redriveDeadLetter(f.js, r);
    expect([first.duplicate, again.duplicate, again.seq]).toEqual([false, true, first.seq]);
  });
});
