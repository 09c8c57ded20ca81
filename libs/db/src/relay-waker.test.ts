import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { RelayWaker } from './outbox-relay.ts';

const elapsed = async (f: () => Promise<void>): Promise<number> => {
  const t = performance.now();
  await f();
  return performance.now() - t;
};

describe('RelayWaker', () => {
  it('a wake before the wait makes the wait return at once, once', async () => {
    const w = new RelayWaker();
    const signal = new AbortController().signal;
    w.wake();
    expect(await elapsed(() => w.wait(5000, signal))).toBeLessThan(50);
    expect(await elapsed(() => w.wait(60, signal))).toBeGreaterThanOrEqual(50);
  });

  it('a wake during the wait ends it early', async () => {
    const w = new RelayWaker();
    const signal = new AbortController().signal;
    setTimeout(() => w.wake(), 20);
    expect(await elapsed(() => w.wait(5000, signal))).toBeLessThan(1000);
  });

  it('an abort ends the wait', async () => {
    const w = new RelayWaker();
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 20);
    expect(await elapsed(() => w.wait(5000, stop.signal))).toBeLessThan(1000);
  });

  it('many woken waits leave no listener behind on the shared signal', async () => {
    const w = new RelayWaker();
    const signal = new AbortController().signal;
    for (let i = 0; i < 50; i++) {
      setTimeout(() => w.wake(), 0);
      await w.wait(5000, signal);
    }
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });
});
