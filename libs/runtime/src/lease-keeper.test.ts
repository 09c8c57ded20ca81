import { describe, expect, it } from 'vitest';
import { FakeClock } from './clock.ts';
import type { HeldLease, LeaseKeeper, LeasePort } from './lease-keeper.ts';
import { ownPartitions, startLeaseKeeper } from './lease-keeper.ts';

describe('ownPartitions', () => {
  const cases = [
    { name: 'a lone member owns every partition', members: ['a'], me: 'a', partitions: 4, want: [0, 1, 2, 3] },
    { name: 'two members take turns by name order', members: ['a', 'b'], me: 'b', partitions: 4, want: [1, 3] },
    { name: 'three members over four partitions: the first gets the extra one', members: ['a', 'b', 'c'], me: 'a', partitions: 4, want: [0, 3] },
    { name: 'more members than partitions: the last ones stand by', members: ['a', 'b', 'c'], me: 'c', partitions: 2, want: [] },
    { name: 'a member not (yet) in the list owns nothing', members: ['a'], me: 'z', partitions: 2, want: [] },
    { name: 'a pinned member takes exactly its list', members: ['a', 'b'], me: 'a', partitions: 4, pinned: [3], want: [3] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect([...ownPartitions(c.members, c.me, c.partitions, c.pinned)].sort()).toEqual(c.want);
    });
  }
});

/** The lease table in memory, expiring by the fake clock: what Postgres does in @slicemesh/db. */
class FakeLeases {
  readonly leases = new Map<number, { holder: string | null; token: number; expires: number }>();
  readonly members = new Map<string, number>();
  down = false;
  readonly clock: FakeClock;
  readonly partitions: number;
  readonly ttl: number;
  constructor(clock: FakeClock, partitions: number, ttl: number) {
    this.clock = clock;
    this.partitions = partitions;
    this.ttl = ttl;
    for (let p = 0; p < partitions; p++) this.leases.set(p, { holder: null, token: 0, expires: 0 });
  }
  #check(): void {
    if (this.down) throw new Error('database unreachable');
  }
  port(member: string): LeasePort<HeldLease> {
    const now = () => this.clock.now();
    return {
      heartbeat: async () => {
        this.#check();
        this.members.set(member, now() + this.ttl);
        const live = [...this.members].filter(([, e]) => e > now()).map(([m]) => m).sort();
        return { members: live, leases: [...this.leases].map(([partition, l]) => ({ partition, holder: l.holder, live: l.holder !== null && l.expires > now() })), nameClash: false };
      },
      acquire: async (p) => {
        this.#check();
        const l = this.leases.get(p);
        if (l === undefined || (l.holder !== null && l.holder !== member && l.expires > now())) return null;
        l.holder = member;
        l.token += 1;
        l.expires = now() + this.ttl;
        return { partition: p, token: l.token };
      },
      renew: async (held) => {
        this.#check();
        const out = new Set<number>();
        for (const h of held) {
          const l = this.leases.get(h.partition);
          if (l && l.holder === member && l.token === h.token && l.expires > now()) {
            l.expires = now() + this.ttl;
            out.add(h.partition);
          }
        }
        return out;
      },
      release: async (held) => {
        this.#check();
        for (const h of held) {
          const l = this.leases.get(h.partition);
          if (l && l.holder === member && l.token === h.token) l.holder = null;
        }
      },
      leave: async () => {
        this.members.delete(member);
      },
    };
  }
  /** Partitions per live holder. */
  owners(): Record<string, number[]> {
    const out: Record<string, number[]> = {};
    for (const [p, l] of this.leases) if (l.holder !== null && l.expires > this.clock.now()) (out[l.holder] ??= []).push(p);
    return out;
  }
}

const TTL = 5000;

function keeper(store: FakeLeases, clock: FakeClock, member: string, seen: Record<string, number[][]>, o: { healthy?: () => boolean } = {}): LeaseKeeper {
  seen[member] = [];
  return startLeaseKeeper({
    port: store.port(member),
    member,
    partitions: store.partitions,
    ttlMs: TTL,
    clock,
    onChange: async (held) => {
      seen[member]?.push(held.map((h) => h.partition));
    },
    ...(o.healthy ? { healthy: o.healthy } : {}),
  });
}

async function run(clock: FakeClock, ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 100) {
    clock.advance(100);
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  }
}

describe('the lease keeper', () => {
  it('replicas joining one by one end with a balanced share, one owner per partition', async () => {
    const clock = new FakeClock(0);
    const store = new FakeLeases(clock, 4, TTL);
    const seen: Record<string, number[][]> = {};
    const a = keeper(store, clock, 'a', seen);
    await run(clock, 2000);
    expect(store.owners()).toEqual({ a: [0, 1, 2, 3] });
    const b = keeper(store, clock, 'b', seen);
    await run(clock, 3000);
    expect(store.owners()).toEqual({ a: [0, 2], b: [1, 3] });
    const c = keeper(store, clock, 'c', seen);
    await run(clock, 3000);
    expect(store.owners()).toEqual({ a: [0, 3], b: [1], c: [2] });
    expect([a.held(), b.held(), c.held()]).toEqual([[0, 3], [1], [2]]);
    // A clean stop gives its partitions up at once: the others take them within a round or two.
    await c.close();
    await run(clock, 2000);
    expect(store.owners()).toEqual({ a: [0, 2], b: [1, 3] });
    await a.close();
    await b.close();
  });

  it('gives a partition up only after telling its owner (so the engine stops before the release)', async () => {
    const clock = new FakeClock(0);
    const store = new FakeLeases(clock, 2, TTL);
    const seen: Record<string, number[][]> = {};
    const order: string[] = [];
    const port = store.port('a');
    const a = startLeaseKeeper({
      port: { ...port, release: async (held) => { order.push(`release ${held.map((h) => h.partition).join(',')}`); await port.release(held); } },
      member: 'a', partitions: 2, ttlMs: TTL, clock,
      onChange: async (held) => {
        order.push(`hold ${held.map((h) => h.partition).join(',')}`);
      },
    });
    await run(clock, 1000);
    keeper(store, clock, 'b', seen);
    await run(clock, 3000);
    expect(order).toEqual(['hold 0,1', 'hold 0', 'release 1']);
    expect(store.owners()).toEqual({ a: [0], b: [1] });
    await a.close();
  });

  it("a replica that dies (stops renewing) loses its partitions to the others after the TTL", async () => {
    const clock = new FakeClock(0);
    const store = new FakeLeases(clock, 2, TTL);
    const seen: Record<string, number[][]> = {};
    let alive = true;
    // 'a' stops doing rounds at all, as after kill -9: modelled by an unhealthy check that never
    // reaches the store (its leases stay until they expire).
    const aPort = store.port('a');
    startLeaseKeeper({ port: { ...aPort, heartbeat: async () => { if (!alive) await new Promise(() => {}); return aPort.heartbeat(); } }, member: 'a', partitions: 2, ttlMs: TTL, clock, onChange: async () => {} });
    const b = keeper(store, clock, 'b', seen);
    await run(clock, 3000);
    expect(store.owners()).toEqual({ a: [0], b: [1] });
    alive = false;
    const killedAt = clock.now();
    let takenAt = 0;
    for (let t = 0; t < 12_000 && takenAt === 0; t += 100) {
      await run(clock, 100);
      if (store.owners().b?.length === 2) takenAt = clock.now();
    }
    expect(takenAt - killedAt).toBeGreaterThan(0);
    expect(takenAt - killedAt).toBeLessThanOrEqual(TTL + 2 * (TTL / 5) + 200);
    await b.close();
  });

  it('keeps renewing while a change is being applied, however long the engine takes to stop', async () => {
    const clock = new FakeClock(0);
    const store = new FakeLeases(clock, 2, TTL);
    let slowStop: () => void = () => {};
    let stopping = false;
    const a = startLeaseKeeper({
      port: store.port('a'), member: 'a', partitions: 2, ttlMs: TTL, clock,
      onChange: async (held) => {
        // Giving a partition up waits for the engine, which here takes three TTLs to stop.
        if (held.length === 1 && !stopping) {
          stopping = true;
          await new Promise<void>((r) => (slowStop = r));
        }
      },
    });
    await run(clock, 1000);
    expect(a.held()).toEqual([0, 1]);
    const seen: Record<string, number[][]> = {};
    const b = keeper(store, clock, 'b', seen);
    await run(clock, 3 * TTL);
    // a still holds partition 0 with its first token: renewed all along, never expired.
    expect(store.leases.get(0)).toMatchObject({ holder: 'a', token: 1 });
    expect(store.owners().a).toEqual([0]);
    slowStop();
    await run(clock, 2000);
    expect(store.owners()).toEqual({ a: [0], b: [1] });
    await a.close();
    await b.close();
  });

  it('drops everything (without releasing) once the store has been out of reach for the TTL', async () => {
    const clock = new FakeClock(0);
    const store = new FakeLeases(clock, 1, TTL);
    const seen: Record<string, number[][]> = {};
    const a = keeper(store, clock, 'a', seen);
    await run(clock, 1000);
    expect(a.held()).toEqual([0]);
    store.down = true;
    await run(clock, 2000);
    expect(a.held()).toEqual([0]);
    await run(clock, 3000);
    expect(a.held()).toEqual([]);
    expect(seen.a?.at(-1)).toEqual([]);
    store.down = false;
    await run(clock, 2000);
    expect(a.held()).toEqual([0]);
    await a.close();
  });

  it('reports a renewal that took more than half the TTL, and only such a one', async () => {
    const clock = new FakeClock(0);
    const store = new FakeLeases(clock, 1, TTL);
    const base = store.port('a');
    let renewMs = 0;
    const slow: number[] = [];
    const a = startLeaseKeeper({
      port: {
        ...base,
        renew: async (held) => {
          const until = clock.now() + renewMs;
          while (clock.now() < until) await new Promise((r) => setImmediate(r));
          return base.renew(held);
        },
      },
      member: 'a', partitions: 1, ttlMs: TTL, clock,
      onChange: async () => {},
      onSlowRenewal: (ms) => slow.push(ms),
    });
    await run(clock, 3000);
    expect(slow).toEqual([]);
    renewMs = 3000;
    await run(clock, 4000);
    expect(slow.length).toBeGreaterThan(0);
    expect(Math.min(...slow)).toBeGreaterThanOrEqual(3000);
    expect(a.held()).toEqual([0]);
    await a.close();
  });

  it('an unhealthy replica gives its partitions up', async () => {
    const clock = new FakeClock(0);
    const store = new FakeLeases(clock, 2, TTL);
    const seen: Record<string, number[][]> = {};
    let healthy = true;
    const a = keeper(store, clock, 'a', seen, { healthy: () => healthy });
    const b = keeper(store, clock, 'b', seen);
    await run(clock, 3000);
    expect(store.owners()).toEqual({ a: [0], b: [1] });
    healthy = false;
    await run(clock, 1500);
    expect(a.held()).toEqual([]);
    expect(store.owners().a).toBeUndefined();
    await a.close();
    await b.close();
  });
});
