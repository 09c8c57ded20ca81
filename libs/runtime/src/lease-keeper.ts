// Keeps a replica's share of a group's partitions. Each round it renews its heartbeat and its
// leases, works out from the live members which partitions are its own, gives up the ones that
// are someone else's now and takes the free or expired ones that are its own. The lease store
// (Postgres in @slicemesh/db) judges expiry and hands out fencing tokens; this file only decides.
//
// Assignment: partition p belongs to the (p mod n)-th live member in name order. Every replica
// computes it from the same member list, so they agree without talking to each other; when a
// member joins or leaves the list changes for all of them within one round.

import type { Clock } from './clock.ts';
import type { Logger } from './logger.ts';

/** One held partition: its number and the fencing token its acquisition returned. */
export interface HeldLease {
  readonly partition: number;
  readonly token: number;
}

/** What one heartbeat reads from the store. */
export interface LeaseRoundView {
  /** Live members, sorted by name. */
  readonly members: readonly string[];
  readonly leases: readonly { readonly partition: number; readonly holder: string | null; readonly live: boolean }[];
  /** Another live process heartbeats under this member's name. */
  readonly nameClash: boolean;
}

/** The store, bound to one group and member. */
export interface LeasePort<C extends HeldLease> {
  heartbeat(): Promise<LeaseRoundView>;
  acquire(partition: number): Promise<C | null>;
  /** Returns the partitions whose lease was extended. */
  renew(held: readonly C[]): Promise<ReadonlySet<number>>;
  release(held: readonly C[]): Promise<void>;
  leave(): Promise<void>;
}

/** Partition p → members[p mod n] (members sorted); `pinned` replicas take exactly their list. */
export function ownPartitions(members: readonly string[], me: string, partitions: number, pinned?: readonly number[]): ReadonlySet<number> {
  if (pinned !== undefined) return new Set(pinned);
  const index = members.indexOf(me);
  const out = new Set<number>();
  if (index < 0) return out;
  for (let p = index; p < partitions; p += members.length) out.add(p);
  return out;
}

export interface LeaseKeeperOptions<C extends HeldLease> {
  readonly port: LeasePort<C>;
  readonly member: string;
  readonly partitions: number;
  /** Take exactly these partitions (no balancing). Default: balanced over the live members. */
  readonly pinned?: readonly number[];
  /** Lease time to live; rounds run every ttlMs / 5. */
  readonly ttlMs: number;
  readonly clock: Clock;
  /**
   * Called with the new set whenever it changes, and awaited: when partitions are given up it is
   * called BEFORE their release, so the caller stops writing them first.
   */
  readonly onChange: (held: readonly C[]) => Promise<void>;
  /** Whether this replica can do its work (e.g. connected to NATS); false: it holds nothing. Default: always. */
  readonly healthy?: () => boolean;
  readonly onError?: (err: unknown) => void;
  readonly onNameClash?: () => void;
  /**
   * Called when a heartbeat and renewal took more than half the TTL (with its milliseconds): the
   * store is slow enough that a little more would let the leases lapse under a live holder.
   */
  readonly onSlowRenewal?: (ms: number) => void;
}

/** An onSlowRenewal that warns on `log`, for a keeper whose TTL is `ttlMs`. */
export function warnSlowRenewal(log: Logger, ttlMs: number): (ms: number) => void {
  return (ms) => log.warn({ ms, ttlMs }, 'lease renewal took over half of LEASE_TTL: Postgres is slow to answer, and a little more would lose the partitions');
}

export interface LeaseKeeper {
  /** Resolves after the first round (leases taken or not). */
  readonly started: Promise<void>;
  /** Partitions held now, sorted. */
  held(): readonly number[];
  /** Stops the rounds, gives every lease up and leaves the group. */
  close(): Promise<void>;
}

/**
 * Starts the rounds; the first runs at once. Each round renews the heartbeat and the leases, then
 * decides. The renewals never wait for a decision: a decision awaits `onChange`, which may take
 * long (an engine that stops while NATS elects a leader), and a heartbeat that waited for it
 * would let this replica's leases expire and hand its partitions around for nothing. A round
 * that finds a decision still being applied only renews; the next one decides.
 */
export function startLeaseKeeper<C extends HeldLease>(o: LeaseKeeperOptions<C>): LeaseKeeper {
  const period = Math.max(50, Math.floor(o.ttlMs / 5));
  const held = new Map<number, C>();
  let lastRenewed = o.clock.now();
  let closed = false;
  let timer: ReturnType<Clock['setTimer']> | undefined;
  let running: Promise<void> = Promise.resolve();
  let changing: Promise<void> | undefined;
  let markStarted: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });

  const sorted = (): C[] => [...held.values()].sort((a, b) => a.partition - b.partition);

  async function drop(partitions: readonly number[], release: boolean): Promise<void> {
    if (partitions.length === 0) return;
    const gone = partitions.map((p) => held.get(p)).filter((c): c is C => c !== undefined);
    for (const p of partitions) held.delete(p);
    await o.onChange(sorted());
    if (release) await o.port.release(gone).catch((err: unknown) => o.onError?.(err));
  }

  /** What one renewal found: the view, and which of the claims it renewed were extended. */
  interface Renewal {
    readonly view: LeaseRoundView;
    readonly asked: readonly C[];
    readonly renewed: ReadonlySet<number>;
  }

  // Applies what a renewal found: drop what was lost, give up what is another's, take what is ours.
  async function decide(r: Renewal | 'unhealthy' | 'unreachable'): Promise<void> {
    if (r === 'unhealthy') return drop([...held.keys()], true);
    // The store is out of reach: once our leases may have expired there, stop writing them.
    if (r === 'unreachable') return drop([...held.keys()], false);
    // Lost without our doing (expired while we stalled, or taken over): stop writing them. Only
    // claims the renewal was asked about count; one taken since is not in `asked`.
    const lost = r.asked.filter((c) => !r.renewed.has(c.partition) && held.get(c.partition)?.token === c.token).map((c) => c.partition);
    await drop(lost, false);
    const mine = ownPartitions(r.view.members, o.member, o.partitions, o.pinned);
    await drop([...held.keys()].filter((p) => !mine.has(p)), true);
    let gained = false;
    for (const lease of r.view.leases) {
      if (!mine.has(lease.partition) || held.has(lease.partition)) continue;
      if (lease.live && lease.holder !== o.member) continue; // its holder gives it up in its own round
      const claim = await o.port.acquire(lease.partition);
      if (claim !== null) {
        held.set(claim.partition, claim);
        gained = true;
      }
    }
    if (gained) await o.onChange(sorted());
  }

  async function round(first: boolean): Promise<void> {
    let found: Renewal | 'unhealthy' | 'unreachable' | undefined;
    try {
      if (o.healthy !== undefined && !o.healthy()) {
        found = 'unhealthy';
      } else {
        const began = o.clock.now();
        const view = await o.port.heartbeat();
        if (view.nameClash) o.onNameClash?.();
        const asked = sorted();
        const renewed = await o.port.renew(asked);
        lastRenewed = o.clock.now();
        if (lastRenewed - began > o.ttlMs / 2) o.onSlowRenewal?.(lastRenewed - began);
        found = { view, asked, renewed };
      }
    } catch (err) {
      o.onError?.(err);
      if (o.clock.now() - lastRenewed >= o.ttlMs - period) found = 'unreachable';
    }
    if (found !== undefined && changing === undefined && !closed) {
      const decision = decide(found).catch((err: unknown) => o.onError?.(err));
      changing = decision.finally(() => {
        changing = undefined;
      });
      if (first) await changing;
    }
    if (first) markStarted();
  }

  const schedule = (): void => {
    if (closed) return;
    timer = o.clock.setTimer(() => {
      running = round(false).then(schedule);
    }, period);
  };
  running = round(true).then(schedule);

  return {
    started,
    held: () => [...held.keys()].sort((a, b) => a - b),
    close: async () => {
      if (closed) return;
      closed = true;
      if (timer !== undefined) o.clock.clearTimer(timer);
      await running;
      await changing;
      await drop([...held.keys()], true).catch((err: unknown) => o.onError?.(err));
      await o.port.leave().catch((err: unknown) => o.onError?.(err));
      markStarted();
    },
  };
}
