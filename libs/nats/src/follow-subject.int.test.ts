import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { kubeNodeSubject } from '@slicemesh/contracts';
import { withJetStream } from '../testing/jetstream.ts';
import type { JetStreamFixture } from '../testing/jetstream.ts';
import type { ConsumedMessage } from './consume.ts';
import { followSubject } from './follow-subject.ts';
import { publishAcked } from './publish.ts';
import { ensureStreams } from './streams.ts';

let f: JetStreamFixture;
beforeEach(async () => {
  f = await withJetStream();
  await ensureStreams(f.jsm, f.names);
});
afterEach(async () => {
  await f.cleanup();
});

const node = (name: string) => kubeNodeSubject({ cluster: 'c', name }, f.names);
let published = 0;
const publish = (subject: string, body: { v: number }) => publishAcked(f.js, subject, body, { msgID: `m${++published}` });

/** One follow of `subject`: what it yielded, in order, and where the initial part ended. */
function follow(subject: string, extra: { pollMs?: number } = {}) {
  const seen: ConsumedMessage[] = [];
  let initialAt: number | null = null;
  const ac = new AbortController();
  const done = (async () => {
    for await (const m of followSubject(f.nc, { stream: f.names.kube, subject, signal: ac.signal, onInitialDone: () => (initialAt = seen.length), ...extra })) seen.push(m);
  })();
  done.catch(() => {});
  return { seen, initialAt: () => initialAt, stop: async () => (ac.abort(), done), done };
}

async function until(cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const versions = (seen: readonly ConsumedMessage[]) => seen.map((m) => (m.data as { v: number }).v);

describe('followSubject', () => {
  it('yields only the last stored message of the subject, says the initial part is done, then yields every new one', async () => {
    for (const v of [1, 2, 3]) await publish(node('n1'), { v });
    await publish(node('n2'), { v: 99 });
    const r = follow(node('n1'));
    await until(() => r.initialAt() !== null);
    expect(versions(r.seen)).toEqual([3]);
    expect(r.initialAt()).toBe(1);
    await publish(node('n1'), { v: 4 });
    await publish(node('n2'), { v: 100 });
    await until(() => r.seen.length === 2);
    await r.stop();
    expect(versions(r.seen)).toEqual([3, 4]);
    expect(r.seen.map((m) => m.subject)).toEqual([node('n1'), node('n1')]);
  });

  it('a subject with nothing stored is done at once, and its first message arrives as new', async () => {
    const r = follow(node('n1'));
    await until(() => r.initialAt() !== null);
    expect(r.initialAt()).toBe(0);
    await publish(node('n1'), { v: 1 });
    await until(() => r.seen.length === 1);
    await r.stop();
    expect(versions(r.seen)).toEqual([1]);
  });

  it('an abort ends the iteration and removes its consumer from the server', async () => {
    await publish(node('n1'), { v: 1 });
    const r = follow(node('n1'));
    await until(() => r.seen.length === 1);
    expect((await f.jsm.consumers.list(f.names.kube).next()).length).toBe(1);
    await r.stop();
    expect((await f.jsm.consumers.list(f.names.kube).next()).length).toBe(0);
  });

  it('rejects when the stream does not exist', async () => {
    const it = followSubject(f.nc, { stream: `NOPE_${f.id}`, subject: node('n1') });
    await expect(it.next()).rejects.toThrow(/stream not found/);
  });

  it('rejects when the server loses the consumer, so the caller follows again from the last message', async () => {
    await publish(node('n1'), { v: 1 });
    const r = follow(node('n1'), { pollMs: 1000 });
    await until(() => r.seen.length === 1);
    const [consumer] = await f.jsm.consumers.list(f.names.kube).next();
    await f.jsm.consumers.delete(f.names.kube, consumer?.name ?? '');
    await expect(r.done).rejects.toThrow(/consumer/);
  });
});
