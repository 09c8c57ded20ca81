import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { nanos } from '@nats-io/transport-node';
import { withJetStream } from '../testing/jetstream.ts';
import type { JetStreamFixture } from '../testing/jetstream.ts';
import { consumeLoop, ensureDurable, pendingCount } from './consume.ts';
import type { ConsumedMessage, HandlerOutcome } from './consume.ts';
import { ConsumerConflictError } from './errors.ts';
import { publishAcked } from './publish.ts';
import { ensureStreams } from './streams.ts';
import { kubeNodeSubject, kubeObjectSubject, kubePartitionFilter, parseKubeSubject, partitionOf } from '@slicemesh/contracts';

let f: JetStreamFixture;
beforeEach(async () => {
  f = await withJetStream();
  await ensureStreams(f.jsm, f.names);
});
afterEach(async () => {
  await f.cleanup();
});

const pod = (name: string, namespace = 'n', partition = 0) => kubeObjectSubject({ cluster: 'c', partition, kind: 'Pod', namespace, name }, f.names);

/** Acks are fire-and-forget: the server may count the last one a moment after the loop ends. */
async function ackedEventually(durable: string): Promise<void> {
  await vi.waitFor(async () => expect(await pendingCount(f.jsm, f.names.kube, durable)).toBe(0), { timeout: 5_000, interval: 20 });
}

/** Runs consumeLoop until `until(seen)` holds (or 10 s pass), then aborts and returns what the handler saw. */
async function consumeUntil(
  durable: string,
  handler: (m: ConsumedMessage, seen: readonly ConsumedMessage[]) => HandlerOutcome | Promise<HandlerOutcome>,
  until: (seen: readonly ConsumedMessage[]) => boolean,
  onError?: (err: unknown) => void,
): Promise<ConsumedMessage[]> {
  const seen: ConsumedMessage[] = [];
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 10_000);
  const loop = consumeLoop(
    f.js,
    f.names.kube,
    durable,
    async (m) => {
      seen.push(m);
      const outcome = await handler(m, seen);
      if (until(seen)) queueMicrotask(() => ac.abort());
      return outcome;
    },
    { signal: ac.signal, batch: 10, ...(onError ? { onError: (e) => onError(e) } : {}) },
  );
  await loop;
  clearTimeout(timer);
  return seen;
}

describe('ensureDurable', () => {
  it('creates an explicit-ack durable with the one filter subject, idempotently', async () => {
    const opts = { durable: `d${f.id}`, filterSubject: kubePartitionFilter('c', 0, f.names), ackWaitMs: 5000, maxDeliver: 5 };
    const a = await ensureDurable(f.jsm, f.names.kube, opts);
    const b = await ensureDurable(f.jsm, f.names.kube, opts);
    expect(a.config).toMatchObject({ durable_name: opts.durable, filter_subject: opts.filterSubject, ack_policy: 'explicit', deliver_policy: 'all', ack_wait: nanos(5000), max_deliver: 5 });
    expect(b.created).toBe(a.created);
  });

  it('updates ack wait and max deliver in place', async () => {
    const base = { durable: `d${f.id}`, filterSubject: kubePartitionFilter('c', 0, f.names) };
    await ensureDurable(f.jsm, f.names.kube, base);
    const got = await ensureDurable(f.jsm, f.names.kube, { ...base, ackWaitMs: 7000, maxDeliver: 3 });
    expect(got.config).toMatchObject({ ack_wait: nanos(7000), max_deliver: 3 });
  });

  const conflicts = [
    { name: 'another filter subject', change: { filterSubject: 'other.>' }, field: 'filter_subject' },
    { name: 'another deliver policy', change: { deliverPolicy: 'new' as const }, field: 'deliver_policy' },
  ];
  for (const tc of conflicts) {
    it(`refuses ${tc.name} on an existing durable (ConsumerConflictError)`, async () => {
      const base = { durable: `d${f.id}`, filterSubject: kubePartitionFilter('c', 0, f.names) };
      await ensureDurable(f.jsm, f.names.kube, base);
      const err = await ensureDurable(f.jsm, f.names.kube, { ...base, ...tc.change }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConsumerConflictError);
      expect((err as ConsumerConflictError).field).toBe(tc.field);
    });
  }
});

describe('consumeLoop', () => {
  it('delivers parsed messages in order with subject, seq and headers; acked messages are done (pendingCount 0)', async () => {
    const durable = `d${f.id}`;
    await ensureDurable(f.jsm, f.names.kube, { durable, filterSubject: kubePartitionFilter('c', 0, f.names) });
    const seqs: number[] = [];
    for (const i of [1, 2, 3]) seqs.push((await publishAcked(f.js, pod(`p${i}`), { i }, { msgID: `c/u${i}/1` })).seq);
    expect(await pendingCount(f.jsm, f.names.kube, durable)).toBe(3);
    const seen = await consumeUntil(durable, () => 'ack', (s) => s.length === 3);
    expect(seen.map((m) => [m.subject, m.seq, m.data, m.redelivered, m.deliveryCount, m.headers['Nats-Msg-Id']])).toEqual([
      [pod('p1'), seqs[0], { i: 1 }, false, 1, 'c/u1/1'],
      [pod('p2'), seqs[1], { i: 2 }, false, 1, 'c/u2/1'],
      [pod('p3'), seqs[2], { i: 3 }, false, 1, 'c/u3/1'],
    ]);
    await ackedEventually(durable);
  });

  it('a nak with delay redelivers the message, marked redelivered', async () => {
    const durable = `d${f.id}`;
    await ensureDurable(f.jsm, f.names.kube, { durable, filterSubject: kubePartitionFilter('c', 0, f.names) });
    await publishAcked(f.js, pod('p1'), { i: 1 }, { msgID: 'c/u1/1' });
    const seen = await consumeUntil(durable, (m) => (m.deliveryCount === 1 ? { nakDelayMs: 50 } : 'ack'), (s) => s.length === 2);
    expect(seen.map((m) => [m.seq, m.redelivered, m.deliveryCount])).toEqual([
      [1, false, 1],
      [1, true, 2],
    ]);
    await ackedEventually(durable);
  });

  it('habit 3: a throwing handler is reported to onError and the message is redelivered after a backoff', async () => {
    const durable = `d${f.id}`;
    await ensureDurable(f.jsm, f.names.kube, { durable, filterSubject: kubePartitionFilter('c', 0, f.names) });
    await publishAcked(f.js, pod('p1'), { i: 1 }, { msgID: 'c/u1/1' });
    const errors: unknown[] = [];
    const started = Date.now();
    const seen = await consumeUntil(
      durable,
      (m) => {
        if (m.deliveryCount === 1) throw new Error('database down');
        return 'ack';
      },
      (s) => s.length === 2,
      (e) => errors.push(e),
    );
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe('database down');
    expect(seen[1]?.redelivered).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(450); // first error backoff is 500 ms
  });

  it("'term' drops the message for good", async () => {
    const durable = `d${f.id}`;
    await ensureDurable(f.jsm, f.names.kube, { durable, filterSubject: kubePartitionFilter('c', 0, f.names), ackWaitMs: 1000 });
    await publishAcked(f.js, pod('bad'), { i: 0 }, { msgID: 'c/bad/1' });
    await publishAcked(f.js, pod('good'), { i: 1 }, { msgID: 'c/good/1' });
    const seen = await consumeUntil(durable, (m) => (m.subject === pod('bad') ? 'term' : 'ack'), (s) => s.length >= 2);
    expect(seen.map((m) => m.subject)).toEqual([pod('bad'), pod('good')]);
    await ackedEventually(durable);
  });

  it('a body that is not JSON reaches the handler with data undefined and a parseError (to dead-letter it)', async () => {
    const durable = `d${f.id}`;
    await ensureDurable(f.jsm, f.names.kube, { durable, filterSubject: kubePartitionFilter('c', 0, f.names) });
    await f.js.publish(pod('raw'), '{"kind": "Pod", oops');
    await f.js.publish(pod('empty'));
    const seen = await consumeUntil(durable, () => 'term', (s) => s.length === 2);
    for (const m of seen) {
      expect(m.data).toBeUndefined();
      expect(m.parseError).toMatch(/JSON/);
    }
    expect(new TextDecoder().decode(seen[0]?.raw)).toBe('{"kind": "Pod", oops');
  });

  it('one consumer per partition sees exactly the objects of its namespaces (no nodes)', async () => {
    const P = 4;
    const namespaces = ['default', 'kube-system', 'team-a', 'team-b', 'team-c', 'a.b', 'x'];
    for (const ns of namespaces) {
      await publishAcked(f.js, pod('p', ns, partitionOf(ns, P)), { ns }, { msgID: `c/${ns}/1` });
    }
    await publishAcked(f.js, kubeNodeSubject({ cluster: 'c', name: 'n1' }, f.names), {}, { msgID: 'c/node/1' });
    const received = new Map<number, string[]>();
    for (let part = 0; part < P; part++) {
      const durable = `d${f.id}p${part}`;
      await ensureDurable(f.jsm, f.names.kube, { durable, filterSubject: kubePartitionFilter('c', part, f.names) });
      const want = namespaces.filter((ns) => partitionOf(ns, P) === part).length;
      const got = await pendingCount(f.jsm, f.names.kube, durable);
      expect(got).toBe(want);
      if (want === 0) continue;
      const seen = await consumeUntil(durable, () => 'ack', (s) => s.length === want);
      received.set(part, seen.map((m) => (m.data as { ns: string }).ns));
      for (const m of seen) expect(parseKubeSubject(m.subject, f.names)).toMatchObject({ type: 'object', partition: part });
    }
    expect([...received.values()].flat().sort()).toEqual([...namespaces].sort());
    expect(received.size).toBeGreaterThan(1); // the namespaces really spread out
  });

  it('stops on abort and resolves; an already aborted signal returns at once', async () => {
    const durable = `d${f.id}`;
    await ensureDurable(f.jsm, f.names.kube, { durable, filterSubject: kubePartitionFilter('c', 0, f.names) });
    const ac = new AbortController();
    const loop = consumeLoop(f.js, f.names.kube, durable, () => Promise.resolve('ack'), { signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    await expect(loop).resolves.toBeUndefined();
    let called = false;
    await consumeLoop(f.js, f.names.kube, durable, () => {
      called = true;
      return Promise.resolve('ack');
    }, { signal: AbortSignal.abort() });
    expect(called).toBe(false);
  });

  it('an abort that arrives while the subscription is being set up still stops the loop', async () => {
    const durable = `e${f.id}`;
    await ensureDurable(f.jsm, f.names.kube, { durable, filterSubject: kubePartitionFilter('c', 0, f.names) });
    const ac = new AbortController();
    const loop = consumeLoop(f.js, f.names.kube, durable, () => Promise.resolve('ack'), { signal: ac.signal });
    ac.abort(); // the loop is awaiting its consumer now, before it listens for the abort
    const outcome = await Promise.race([loop.then(() => 'stopped'), new Promise((r) => setTimeout(() => r('still running'), 5_000))]);
    expect(outcome).toBe('stopped');
  });
});
