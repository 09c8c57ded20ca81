// One engine for the partitions a replica holds, replaced whenever the set changes. The shared
// shape of the slicer and the hints service as replicas: a lease keeper decides the set; the
// running engine is closed before any of its partitions is given up (the keeper awaits the
// change), and a new one starts for the new set. An engine whose start fails is started again.

import type { Clock } from './clock.ts';
import type { ReadyStatus } from './health-server.ts';
import type { HeldLease, LeaseKeeper, LeaseKeeperOptions } from './lease-keeper.ts';
import { startLeaseKeeper } from './lease-keeper.ts';
import type { Logger } from './logger.ts';

/** What the host needs of an engine. */
export interface LeasedEngine {
  readonly partitions: readonly number[];
  /** Resolves once it caught up; rejects when it failed to start or was closed first. */
  readonly ready: Promise<void>;
  readiness(): ReadyStatus;
  close(): Promise<void>;
}

export interface LeasedEnginesOptions<C extends HeldLease, E extends LeasedEngine> {
  /** The keeper's settings; its onChange is this host's. */
  readonly keeper: Omit<LeaseKeeperOptions<C>, 'onChange' | 'clock'>;
  readonly clock: Clock;
  readonly log: Logger;
  /** Starts an engine for `claims` (never called with none). */
  readonly start: (claims: readonly C[]) => E;
  /** Aborted when the service stops: no engine starts after that. */
  readonly stopped: AbortSignal;
  /** The error a start that ends because of close() rejects with (not retried, not logged). */
  readonly isClosedError: (err: unknown) => boolean;
  /** What caughtUp() rejects with when the service stops meanwhile. */
  readonly closedError: () => Error;
  /** After each change of the held set (metrics). */
  readonly onHeld?: (held: readonly C[]) => void;
  /** Pause before a failed engine is started again. Defaults to 2 s. */
  readonly retryMs?: number;
}

export interface LeasedEngines<E extends LeasedEngine> {
  /** The running engine; undefined while holding nothing or between two engines. */
  current(): E | undefined;
  /** Partitions held now, sorted. */
  held(): readonly number[];
  /** Resolves after the first lease round once the engine for the partitions held has caught up (it may be replaced meanwhile). */
  caughtUp(): Promise<void>;
  /** The running engine's readiness, prefixed with its partitions; ready when there is none. */
  engineReadiness(): ReadyStatus;
  /** Closes the running engine now, so a startup waiting for it ends. */
  interrupt(): Promise<void>;
  /** Stops the keeper (the engine closes before the leases go) and the engine. */
  close(): Promise<void>;
}

/** Starts the keeper; the first engine starts once the first round took leases. */
export function startLeasedEngines<C extends HeldLease, E extends LeasedEngine>(o: LeasedEnginesOptions<C, E>): LeasedEngines<E> {
  let engine: E | undefined;
  let swapping: Promise<void> = Promise.resolve();
  const pause = (ms: number): Promise<void> => new Promise((r) => o.clock.setTimer(() => r(), ms));

  function swap(claims: readonly C[]): Promise<void> {
    swapping = swapping.then(async () => {
      const old = engine;
      engine = undefined;
      if (old !== undefined) await old.close();
      o.onHeld?.(claims);
      if (claims.length === 0 || o.stopped.aborted) {
        o.log.info({ partitions: [] }, 'holding no partition');
        return;
      }
      o.log.info({ partitions: claims.map((c) => c.partition), tokens: claims.map((c) => c.token) }, 'starting the engine for the partitions held');
      const e = o.start(claims);
      engine = e;
      e.ready.catch((err: unknown) => {
        if (o.isClosedError(err) || engine !== e || o.stopped.aborted) return;
        o.log.error({ err, partitions: e.partitions }, 'the engine did not start; starting it again');
        o.clock.setTimer(() => {
          if (engine === e) void swap(claims);
        }, o.retryMs ?? 2000);
      });
    });
    return swapping;
  }

  const keeper: LeaseKeeper = startLeaseKeeper({ ...o.keeper, clock: o.clock, onChange: swap });

  return {
    current: () => engine,
    held: () => keeper.held(),
    caughtUp: async () => {
      await keeper.started;
      for (;;) {
        await swapping;
        const e = engine;
        if (e === undefined) return;
        try {
          await e.ready;
          if (o.stopped.aborted) throw o.closedError();
          if (engine === e) return;
        } catch (err) {
          if (o.stopped.aborted) throw err;
          await pause(200);
        }
      }
    },
    engineReadiness: () => {
      const e = engine;
      if (e === undefined) return { ready: true };
      const r = e.readiness();
      return r.ready ? r : { ready: false, reason: `partitions ${e.partitions.join(',')}: ${r.reason}` };
    },
    interrupt: async () => {
      await engine?.close();
    },
    close: async () => {
      await keeper.close();
      await swapping;
      await engine?.close();
    },
  };
}
