import { describe, expect, it } from 'vitest';
import { KeyedWindow } from './keyed-window.ts';

interface Gate {
  readonly promise: Promise<void>;
  open(): void;
}
function gate(): Gate {
  let open: () => void = () => {};
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('KeyedWindow', () => {
  it('runs the tasks of one key one at a time, in push order', async () => {
    const w = new KeyedWindow({ window: 8, onError: () => {} });
    const order: string[] = [];
    let running = 0;
    let most = 0;
    for (const n of [1, 2, 3, 4]) {
      w.push('a', async () => {
        most = Math.max(most, ++running);
        await tick();
        order.push(`a${n}`);
        running--;
      });
    }
    await w.idle();
    expect(order).toEqual(['a1', 'a2', 'a3', 'a4']);
    expect(most).toBe(1);
  });

  it('never runs more than `window` tasks at once across keys', async () => {
    const w = new KeyedWindow({ window: 2, onError: () => {} });
    const gates = ['a', 'b', 'c'].map(() => gate());
    const started: string[] = [];
    ['a', 'b', 'c'].forEach((k, i) => w.push(k, async () => {
      started.push(k);
      await gates[i]?.promise;
    }));
    await tick();
    expect(started).toEqual(['a', 'b']);
    expect([w.running, w.queued]).toEqual([2, 1]);
    gates[0]?.open();
    await tick();
    expect(started).toEqual(['a', 'b', 'c']);
    gates[1]?.open();
    gates[2]?.open();
    await w.idle();
    expect([w.running, w.queued]).toEqual([0, 0]);
  });

  it('lets keys take turns: a busy key does not starve one that arrived later', async () => {
    const w = new KeyedWindow({ window: 1, onError: () => {} });
    const order: string[] = [];
    for (const t of ['a1', 'a2', 'a3']) w.push('a', async () => void order.push(t));
    w.push('b', async () => void order.push('b1'));
    await w.idle();
    expect(order).toEqual(['a1', 'b1', 'a2', 'a3']);
  });

  it('reports a failing task and goes on with the key', async () => {
    const errors: [unknown, string][] = [];
    const w = new KeyedWindow({ window: 1, onError: (err, key) => errors.push([err, key]) });
    const done: string[] = [];
    w.push('a', async () => {
      throw new Error('boom');
    });
    w.push('a', async () => void done.push('after'));
    await w.idle();
    expect(errors.map(([e, k]) => [(e as Error).message, k])).toEqual([['boom', 'a']]);
    expect(done).toEqual(['after']);
  });

  it('idle() resolves at once when nothing was pushed', async () => {
    await expect(new KeyedWindow({ window: 1, onError: () => {} }).idle()).resolves.toBeUndefined();
  });

  it('close() drops queued tasks, refuses new ones and waits for the running one', async () => {
    const w = new KeyedWindow({ window: 1, onError: () => {} });
    const g = gate();
    const ran: string[] = [];
    w.push('a', async () => {
      ran.push('first');
      await g.promise;
    });
    w.push('a', async () => void ran.push('dropped'));
    await tick();
    const closed = w.close();
    w.push('b', async () => void ran.push('refused'));
    g.open();
    await closed;
    await tick();
    expect(ran).toEqual(['first']);
  });

  it('rejects a window below 1', () => {
    expect(() => new KeyedWindow({ window: 0, onError: () => {} })).toThrow(RangeError);
  });
});
