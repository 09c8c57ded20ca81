import { describe, expect, it } from 'vitest';
import { FakeClock } from './clock.ts';
import type { HeldLease, LeasePort } from './lease-keeper.ts';
import type { LeasedEngine } from './leased-engines.ts';
import { startLeasedEngines } from './leased-engines.ts';
import { createLogger } from './logger.ts';

/** A store where one member gets every partition it asks for. */
function soloPort(partitions: number, events: string[]): LeasePort<HeldLease> {
  let token = 0;
  return {
    heartbeat: async () => ({ members: ['a'], leases: Array.from({ length: partitions }, (_, p) => ({ partition: p, holder: null, live: false })), nameClash: false }),
    acquire: async (p) => ({ partition: p, token: ++token }),
    renew: async (held) => new Set(held.map((h) => h.partition)),
    release: async (held) => void events.push(`release ${held.map((h) => h.partition).join(',')}`),
    leave: async () => {},
  };
}

class Closed extends Error {}

function engine(partitions: readonly number[], events: string[], fail: boolean): LeasedEngine {
  let reject: (e: Error) => void = () => {};
  const ready = fail ? Promise.reject(new Error('cannot load the snapshot')) : new Promise<void>((resolve, rej) => {
    reject = rej;
    setImmediate(resolve);
  });
  ready.catch(() => {});
  events.push(`start ${partitions.join(',')}${fail ? ' (fails)' : ''}`);
  return {
    partitions,
    ready,
    readiness: () => ({ ready: true }),
    close: async () => {
      events.push(`close ${partitions.join(',')}`);
      reject(new Closed());
    },
  };
}

const settle = async (clock: FakeClock, ms: number): Promise<void> => {
  for (let t = 0; t < ms; t += 100) {
    clock.advance(100);
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  }
};

describe('leased engines', () => {
  it('an engine that fails to start is started again, and caughtUp waits for the one that works', async () => {
    const clock = new FakeClock(0);
    const events: string[] = [];
    const stop = new AbortController();
    let attempts = 0;
    const host = startLeasedEngines({
      keeper: { port: soloPort(2, events), member: 'a', partitions: 2, ttlMs: 5000 },
      clock,
      log: createLogger({ service: 'test', level: 'silent' }),
      stopped: stop.signal,
      isClosedError: (e) => e instanceof Closed,
      closedError: () => new Closed(),
      retryMs: 1000,
      start: (claims) => engine(claims.map((c) => c.partition), events, ++attempts === 1),
    });
    const caught = host.caughtUp();
    await settle(clock, 2000);
    await caught;
    expect(events).toEqual(['start 0,1 (fails)', 'close 0,1', 'start 0,1']);
    expect(host.held()).toEqual([0, 1]);
    stop.abort();
    await host.close();
    // The engine is closed before the leases go.
    expect(events.slice(3)).toEqual(['close 0,1', 'release 0,1']);
  });

  it('caughtUp rejects when the service stops while the engine catches up', async () => {
    const clock = new FakeClock(0);
    const events: string[] = [];
    const stop = new AbortController();
    const host = startLeasedEngines({
      keeper: { port: soloPort(1, events), member: 'a', partitions: 1, ttlMs: 5000 },
      clock,
      log: createLogger({ service: 'test', level: 'silent' }),
      stopped: stop.signal,
      isClosedError: (e) => e instanceof Closed,
      closedError: () => new Closed(),
      start: (claims) => {
        // Never catches up by itself; closing it ends its startup, as a real engine's does.
        let reject: (e: Error) => void = () => {};
        const ready = new Promise<void>((_, rej) => (reject = rej));
        ready.catch(() => {});
        return { partitions: claims.map((c) => c.partition), ready, readiness: () => ({ ready: false, reason: 'catching up' }), close: async () => reject(new Closed()) };
      },
    });
    await settle(clock, 200);
    expect(host.engineReadiness()).toEqual({ ready: false, reason: 'partitions 0: catching up' });
    const caught = host.caughtUp();
    stop.abort();
    await host.interrupt();
    await host.close();
    await expect(caught).rejects.toBeInstanceOf(Closed);
  });
});
