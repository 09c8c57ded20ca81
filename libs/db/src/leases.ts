// Partition leases and their fencing tokens (migration 0005). Leases live in Postgres, beside the
// state they guard, for one reason: a write can check its token in the same transaction that
// applies it. A replica whose lease ran out, was released or was taken over therefore cannot
// apply a late write, whatever its own clock or its network said. Expiry is judged by now() of
// the database, the one clock all replicas share.

import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import type { Db, Trx } from './schema.ts';

/** The right to write one partition of a group, as acquired. */
export interface LeaseClaim {
  readonly group: string;
  readonly partition: number;
  readonly holder: string;
  /** Fencing token: grows by one at every acquisition of the partition. */
  readonly token: number;
}

/** A write carried a claim that no longer holds: nothing of it was applied. */
export class FencedError extends Error {
  override readonly name = 'FencedError';
  readonly claims: readonly LeaseClaim[];
  constructor(claims: readonly LeaseClaim[]) {
    super(`lease lost: ${claims.map((c) => `${c.group}#${c.partition} token ${c.token}`).join(', ')} no longer held by ${claims[0]?.holder ?? '?'}; the write was refused`);
    this.claims = claims;
  }
}

/** One partition's lease as the database holds it. */
export interface LeaseState {
  readonly partition: number;
  readonly holder: string | null;
  readonly token: number;
  /** Held and not expired. */
  readonly live: boolean;
}

/** What one heartbeat reads: the live members (sorted) and every partition's lease. */
export interface LeaseRound {
  readonly members: readonly string[];
  readonly leases: readonly LeaseState[];
  /** Another live process uses this member name. */
  readonly nameClash: boolean;
}

const ms = (n: number): RawBuilder<unknown> => sql`make_interval(secs => ${n / 1000})`;

/**
 * Renews `member`'s heartbeat in `group`, makes sure lease rows 0..partitions-1 exist, and reads
 * the live members and the leases — one statement. It was a transaction of seven round trips; a
 * busy replica's event loop answered each of them late, and the heartbeat and renewal together
 * took up to 5 s of a 5 s TTL in the backbone bench (the lease keeper's onSlowRenewal warning).
 * The parts of one statement see the table as it was before it: this member counts as live
 * (it just beat), and the lease rows it created count as free. Its writes (`beat`, `forgotten`)
 * run whether or not the final select reads them.
 */
export async function leaseHeartbeat(db: Db, group: string, member: string, incarnation: string, ttlMs: number, partitions: number): Promise<LeaseRound> {
  const r = await sql<{ prev: { incarnation: string; live: boolean } | null; members: string[] | null; leases: { partition: number; holder: string | null; token: string | number; live: boolean }[] | null }>`with
  prev as (select incarnation, expires_at > now() as live from lease_members where lease_group = ${group} and member = ${member}),
  beat as (insert into lease_members (lease_group, member, incarnation, expires_at) values (${group}, ${member}, ${incarnation}, now() + ${ms(ttlMs)})
    on conflict (lease_group, member) do update set incarnation = excluded.incarnation, expires_at = excluded.expires_at),
  made as (insert into partition_leases (lease_group, partition)
    select ${group}, p from generate_series(0, ${partitions - 1}::int) p on conflict do nothing returning partition, holder, token),
  -- Members gone for an hour are forgotten (their rows only name who was here).
  forgotten as (delete from lease_members where lease_group = ${group} and member <> ${member} and expires_at < now() - interval '1 hour'),
  members as (select member from lease_members where lease_group = ${group} and member <> ${member} and expires_at > now() union select ${member}),
  leases as (
    select partition, holder, token, coalesce(holder is not null and expires_at > now(), false) as live
    from partition_leases where lease_group = ${group} and partition < ${partitions}
    union all select partition, holder, token, false from made)
select (select row_to_json(prev) from prev) as prev,
  (select json_agg(member order by member) from members) as members,
  (select json_agg(json_build_object('partition', partition, 'holder', holder, 'token', token, 'live', live) order by partition) from leases) as leases`.execute(db);
  const row = r.rows[0];
  const prev = row?.prev ?? undefined;
  return {
    members: row?.members ?? [],
    leases: (row?.leases ?? []).map((l) => ({ partition: l.partition, holder: l.holder, token: Number(l.token), live: l.live })),
    nameClash: prev !== undefined && prev.live && prev.incarnation !== incarnation,
  };
}

/**
 * Takes `partition` for `member` when it is free, expired, or already `member`'s (a restart under
 * the same name), with a new token. Returns the claim, or null when a live holder has it.
 *
 * The row is locked FOR UPDATE first: that is the one lock a fenced writer's FOR KEY SHARE holds
 * off, so a takeover waits until the deposed holder's writing transaction has ended.
 */
export async function acquireLease(db: Db, group: string, partition: number, member: string, ttlMs: number): Promise<LeaseClaim | null> {
  const r = await sql<{ token: string }>`
    with target as (select partition from partition_leases where lease_group = ${group} and partition = ${partition} for update)
    update partition_leases l set holder = ${member}, token = l.token + 1, expires_at = now() + ${ms(ttlMs)}, acquired_at = now()
    from target
    where l.lease_group = ${group} and l.partition = target.partition and (l.holder is null or l.holder = ${member} or l.expires_at <= now())
    returning l.token`.execute(db);
  const row = r.rows[0];
  return row === undefined ? null : { group, partition, holder: member, token: Number(row.token) };
}

/**
 * Extends every claim still held (same holder and token, not expired); returns the partitions
 * renewed. A plain update of a non-key column: it does not wait for the holder's own writers,
 * whose fences lock FOR KEY SHARE.
 */
export async function renewLeases(db: Db, claims: readonly LeaseClaim[], ttlMs: number): Promise<ReadonlySet<number>> {
  const first = claims[0];
  if (first === undefined) return new Set();
  const r = await sql<{ partition: number }>`
    update partition_leases set expires_at = now() + ${ms(ttlMs)}
    where lease_group = ${first.group} and holder = ${first.holder} and expires_at > now() and (partition, token) in (${pairs(claims)})
    returning partition`.execute(db);
  return new Set(r.rows.map((x) => x.partition));
}

/** Gives claims up at once (a clean stop or a rebalance), so the next owner need not wait for expiry. */
export async function releaseLeases(db: Db, claims: readonly LeaseClaim[]): Promise<void> {
  const first = claims[0];
  if (first === undefined) return;
  await sql`update partition_leases set holder = null, expires_at = null
    where lease_group = ${first.group} and holder = ${first.holder} and (partition, token) in (${pairs(claims)})`.execute(db);
}

/** Removes `member`'s heartbeat (a clean stop), when it is still this incarnation's. */
export async function leaveLeaseGroup(db: Db, group: string, member: string, incarnation: string): Promise<void> {
  await sql`delete from lease_members where lease_group = ${group} and member = ${member} and incarnation = ${incarnation}`.execute(db);
}

/** Every lease of `group` (for status pages and tests). */
export async function readLeases(db: Db, group: string): Promise<readonly LeaseState[]> {
  const r = await sql<{ partition: number; holder: string | null; token: string; live: boolean }>`
    select partition, holder, token, coalesce(holder is not null and expires_at > now(), false) as live
    from partition_leases where lease_group = ${group} order by partition`.execute(db);
  return r.rows.map((x) => ({ partition: x.partition, holder: x.holder, token: Number(x.token), live: x.live }));
}

function pairs(claims: readonly LeaseClaim[]): RawBuilder<unknown> {
  return sql.join(claims.map((c) => sql`(${c.partition}::int, ${c.token}::bigint)`));
}

/**
 * A boolean SQL expression: every claim still holds (same holder and token, not expired). The
 * rows are locked FOR KEY SHARE: a takeover (acquireLease locks FOR UPDATE) waits until the
 * writing transaction ended, while the holder's renewals, which update only expires_at, do not.
 * Under FOR SHARE a renewal queued behind every open write of its partitions, and a busy slicer
 * whose writes overlapped without a gap lost its own leases (the backbone bench at 500/s).
 * Always true for no claims (a writer that runs unfenced: tests, replays into a scratch schema).
 */
export function fenceHolds(claims: readonly LeaseClaim[]): RawBuilder<boolean> {
  const first = claims[0];
  if (first === undefined) return sql<boolean>`true`;
  return sql<boolean>`((select count(*) from (select 1 from partition_leases l
    where l.lease_group = ${first.group} and l.holder = ${first.holder} and l.expires_at > now() and (l.partition, l.token) in (${pairs(claims)})
    for key share of l) f) = ${claims.length})`;
}

/** Throws FencedError unless every claim still holds; call first in the transaction it guards. */
export async function assertFence(trx: Trx | Db, claims: readonly LeaseClaim[]): Promise<void> {
  if (claims.length === 0) return;
  const r = await sql<{ ok: boolean }>`select ${fenceHolds(claims)} as ok`.execute(trx);
  if (r.rows[0]?.ok !== true) throw new FencedError(claims);
}

/** The lease store bound to one group and member: the port a lease keeper (libs/runtime) drives. */
export function leaseStore(db: Db, o: { readonly group: string; readonly member: string; readonly incarnation: string; readonly ttlMs: number; readonly partitions: number }) {
  return {
    heartbeat: () => leaseHeartbeat(db, o.group, o.member, o.incarnation, o.ttlMs, o.partitions),
    acquire: (partition: number) => acquireLease(db, o.group, partition, o.member, o.ttlMs),
    renew: (held: readonly LeaseClaim[]) => renewLeases(db, held, o.ttlMs),
    release: (held: readonly LeaseClaim[]) => releaseLeases(db, held),
    leave: () => leaveLeaseGroup(db, o.group, o.member, o.incarnation),
  };
}
