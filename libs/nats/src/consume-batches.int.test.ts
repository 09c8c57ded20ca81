import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DurableOptions } from './index.ts';
import { ensureStreams, pendingCount, publishAcked, restartDurableAt } from './index.ts';
import { withJetStream } from '../testing/jetstream.ts';
import type { JetStreamFixture } from '../testing/jetstream.ts';
import { DeliveryGapError, consumeBatchesInOrder } from './consume-batches.ts';
import { ConsumerStalledError } from './consumer-watchdog.ts';

let f: JetStreamFixture;
let spec: DurableOptions;

beforeEach(async () => {
  f = await withJetStream();
  await ensureStreams(f.jsm, f.names);
  // As the slicer declares them: positioned at a sequence, one batch unacknowledged at a time.
  spec = { durable: 'd1', filterSubject: `${f.names.prefix}kube.>`, maxAckPending: 3, ackWaitMs: 30_000 };
  await restartDurableAt(f.jsm, f.names.kube, spec, 1);
});
afterEach(async () => {
  await f.cleanup();
});

const publish = (n: number) => publishAcked(f.js, `${f.names.prefix}kube.c1.0.pod.ns.p${n}`, { n }, { msgID: `m${n}` });
const within = <T>(ms: number, p: Promise<T>): Promise<T> =>
  Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`not done within ${ms} ms`)), ms))]);
const numbers = (msgs: readonly { data: unknown }[]) => msgs.map((m) => (m.data as { n: number }).n);

describe('consumeBatchesInOrder', () => {
  it('hands a backlog over in stream order, in batches of at most `batch`', async () => {
    for (let n = 1; n <= 7; n++) await publish(n);
    const ac = new AbortController();
    const batches: number[][] = [];
    await within(
      10_000,
      consumeBatchesInOrder(
        f.js,
        f.names.kube,
        spec.durable,
        async (msgs) => {
          batches.push(numbers(msgs));
          if (batches.flat().length === 7) ac.abort();
          return 'ack';
        },
        { signal: ac.signal, batch: 3 },
      ),
    );
    expect(batches.flat()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(batches.every((b) => b.length <= 3)).toBe(true);
    // How the backlog splits into batches depends on how it arrives (batches are formed from what
    // has arrived); order and the size bound do not.
    // Acks are fire-and-forget: the server may count the last ones a moment after the loop ends.
    await vi.waitFor(async () => expect(await pendingCount(f.jsm, f.names.kube, spec.durable)).toBe(0), { timeout: 5_000, interval: 20 });
  });

  it("starts from the info creating the durable returned, without asking the server for it again, and delivers the same", async () => {
    for (let n = 1; n <= 4; n++) await publish(n);
    const info = await restartDurableAt(f.jsm, f.names.kube, spec, 2);
    const asked = vi.spyOn(f.js.consumers, 'get');
    const ac = new AbortController();
    const got: number[] = [];
    await within(
      10_000,
      consumeBatchesInOrder(f.js, f.names.kube, spec.durable, async (msgs) => {
        got.push(...numbers(msgs));
        if (got.length === 3) ac.abort();
        return 'ack';
      }, { signal: ac.signal, batch: 3, info }),
    );
    expect(got).toEqual([2, 3, 4]);
    expect(asked).not.toHaveBeenCalled();
    // Another durable's info is not taken for this one: it is looked up as before.
    const other = await restartDurableAt(f.jsm, f.names.kube, { ...spec, durable: 'd2' }, 1);
    await publish(5);
    const ac2 = new AbortController();
    const next: number[] = [];
    await within(5_000, consumeBatchesInOrder(f.js, f.names.kube, spec.durable, async (msgs) => {
      next.push(...numbers(msgs));
      ac2.abort();
      return 'ack';
    }, { signal: ac2.signal, batch: 3, info: other }));
    expect(next).toEqual([5]);
    expect(asked).toHaveBeenCalledWith(f.names.kube, spec.durable);
  });

  it('an abort during setup still stops the loop (no message needed to notice it)', async () => {
    const ac = new AbortController();
    const running = consumeBatchesInOrder(f.js, f.names.kube, spec.durable, async () => 'ack', { signal: ac.signal, batch: 3 });
    ac.abort(); // the loop is awaiting its subscription now
    await within(5_000, running);
  });

  it('a failing handler ends the loop with its error; restarting at the stored position delivers the same messages first', async () => {
    for (let n = 1; n <= 3; n++) await publish(n);
    const failing = consumeBatchesInOrder(
      f.js,
      f.names.kube,
      spec.durable,
      async () => {
        throw new Error('store down');
      },
      { signal: new AbortController().signal, batch: 3 },
    );
    await expect(within(10_000, failing)).rejects.toThrow(/store down/);
    await publish(4);
    await restartDurableAt(f.jsm, f.names.kube, spec, 1); // nothing was applied
    const ac = new AbortController();
    const seen: number[] = [];
    await within(
      10_000,
      consumeBatchesInOrder(
        f.js,
        f.names.kube,
        spec.durable,
        async (msgs) => {
          seen.push(...numbers(msgs));
          if (seen.length === 4) ac.abort();
          return 'ack';
        },
        { signal: ac.signal, batch: 3 },
      ),
    );
    expect(seen).toEqual([1, 2, 3, 4]);
  });

  it('restarting the durable at a position drops what the server held as pending, without waiting for the ack wait', async () => {
    for (let n = 1; n <= 5; n++) await publish(n);
    const ac = new AbortController();
    await consumeBatchesInOrder(
      f.js,
      f.names.kube,
      spec.durable,
      async (msgs) => {
        // A batch is what has arrived (on a busy machine maybe only 1 or 1..2): in order, ≤ 3.
        expect(numbers(msgs)).toEqual([1, 2, 3].slice(0, msgs.length));
        ac.abort(); // as if the process stopped after committing messages 1..2 only
        return { nakDelayMs: 60_000 };
      },
      { signal: ac.signal, batch: 3 },
    );
    await restartDurableAt(f.jsm, f.names.kube, spec, 3);
    const ac2 = new AbortController();
    const seen: number[] = [];
    const t0 = Date.now();
    await within(
      10_000,
      consumeBatchesInOrder(
        f.js,
        f.names.kube,
        spec.durable,
        async (msgs) => {
          seen.push(...numbers(msgs));
          if (seen.length === 3) ac2.abort();
          return 'ack';
        },
        { signal: ac2.signal, batch: 3 },
      ),
    );
    expect(seen).toEqual([3, 4, 5]);
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  it('a durable deleted under the loop ends it with ConsumerStalledError instead of waiting for ever; restarting it delivers again', async () => {
    await publish(1);
    const ac = new AbortController();
    const got: number[] = [];
    const running = consumeBatchesInOrder(f.js, f.names.kube, spec.durable, async (msgs) => (got.push(...numbers(msgs)), 'ack'), { signal: ac.signal, batch: 3, pollMs: 1000 });
    const outcome = running.then(() => undefined, (e: unknown) => e);
    await vi.waitFor(() => expect(got).toEqual([1]), { timeout: 5_000, interval: 20 });
    await f.jsm.consumers.delete(f.names.kube, spec.durable);
    const err = await within(30_000, outcome);
    expect(err).toBeInstanceOf(ConsumerStalledError);
    expect(String(err)).toMatch(new RegExp(`consumer ${f.names.kube}/d1: `));
    // What the slicer does with it: restart the durable at its own position and consume again.
    await restartDurableAt(f.jsm, f.names.kube, spec, 2);
    await publish(2);
    const again: number[] = [];
    await within(
      10_000,
      consumeBatchesInOrder(f.js, f.names.kube, spec.durable, async (msgs) => (again.push(...numbers(msgs)), ac.abort(), 'ack'), { signal: ac.signal, batch: 3 }),
    );
    expect(again).toEqual([2]);
  });

  // A delivery lost in flight (a connection that dropped with messages on the wire) is sent
  // again only after the ack wait; a processor keeping one offset per consumer would have applied
  // the later messages by then and take the late one for a duplicate. Here the server delivers
  // message 1 to an inbox that drops it (the server delivers only to an inbox with interest), as
  // it would to a connection that just died.
  const pullIntoTheVoid = async (): Promise<void> => {
    const inbox = `void.${f.id}`;
    const sub = f.nc.subscribe(inbox, { max: 1 });
    f.nc.publish(`$JS.API.CONSUMER.MSG.NEXT.${f.names.kube}.${spec.durable}`, JSON.stringify({ batch: 1 }), { reply: inbox });
    for await (const m of sub) expect(m.subject).toBe(`${f.names.prefix}kube.c1.0.pod.ns.p1`);
    expect((await f.jsm.consumers.info(f.names.kube, spec.durable)).delivered.stream_seq).toBe(1);
  };
  const consumeAll = async (opts: { readonly info?: Awaited<ReturnType<typeof restartDurableAt>> }): Promise<{ seen: number[]; err: unknown }> => {
    const ac = new AbortController();
    const seen: number[] = [];
    const err = await within(10_000, consumeBatchesInOrder(f.js, f.names.kube, spec.durable, async (msgs) => {
      seen.push(...numbers(msgs));
      if (seen.length >= 3) ac.abort();
      return 'ack';
    }, { signal: ac.signal, batch: 3, ...opts }).then(() => undefined, (e: unknown) => e));
    return { seen, err };
  };

  for (const tc of [
    { name: 'with the info creating the durable returned (the slicer)', withInfo: true },
    { name: 'looking the durable up (hints, publisher)', withInfo: false },
  ]) {
    it(`a delivery lost in flight ends the loop with DeliveryGapError before any later message is handed over, ${tc.name}`, async () => {
      for (let n = 1; n <= 3; n++) await publish(n);
      const info = await restartDurableAt(f.jsm, f.names.kube, spec, 1);
      await pullIntoTheVoid();
      const { seen, err } = await consumeAll(tc.withInfo ? { info } : {});
      expect(err).toBeInstanceOf(DeliveryGapError);
      expect(String(err)).toMatch(/delivery 2 arrived, 1–1 never did/);
      expect(seen).toEqual([]);
      // What the services do with it: restart at the stored position; message 1 comes first.
      const again = await consumeAll({ info: await restartDurableAt(f.jsm, f.names.kube, spec, 1) });
      expect(again).toEqual({ seen: [1, 2, 3], err: undefined });
    });
  }

  it('returns at once for an aborted signal', async () => {
    await within(1_000, consumeBatchesInOrder(f.js, f.names.kube, spec.durable, async () => 'ack', { signal: AbortSignal.abort(), batch: 3 }));
  });
});
