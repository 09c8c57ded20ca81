// The settings every leased service shares (the slicer and the hints service): which partitions
// a replica may take, its name among the replicas, and the lease time to live. One declaration,
// spread into each service's config, so the two cannot drift apart.

import { hostname } from 'node:os';
import { ConfigError } from './errors.ts';

/** `all`, or partition numbers and ranges such as `0,2,4-7`. */
export type OwnedPartitions = 'all' | readonly number[];

/** Parses OWNED_PARTITIONS text; throws with the reason (range checks happen in ownedPartitionsOf). */
export function parseOwnedPartitions(text: string): OwnedPartitions {
  if (text.trim() === 'all') return 'all';
  const out = new Set<number>();
  for (const part of text.split(',').map((s) => s.trim())) {
    const m = /^(\d{1,4})(?:-(\d{1,4}))?$/.exec(part);
    if (m === null) throw new Error(`${JSON.stringify(part)} is not a partition number or range (e.g. 0,2,4-7 or all)`);
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi < lo) throw new Error(`range ${part} is empty`);
    for (let p = lo; p <= hi; p++) out.add(p);
  }
  return [...out].sort((a, b) => a - b);
}

/** `<hostname>-<pid>`: unique per process on a host and per pod in a cluster. */
export function defaultReplicaId(): string {
  return `${hostname().replace(/[^A-Za-z0-9_.-]/g, '-').slice(0, 200)}-${process.pid}`;
}

function parseReplicaId(text: string): string {
  if (!/^[A-Za-z0-9_.-]{1,253}$/.test(text)) throw new Error('must be 1..253 characters of [A-Za-z0-9_.-]');
  return text;
}

/** The lease settings, to spread into a service's defineConfig; `peers` names the group ("slicers"). */
export function leaseSettings(peers: string) {
  return {
    ownedPartitions: {
      env: 'OWNED_PARTITIONS',
      flag: '--owned-partitions',
      default: 'all',
      parse: parseOwnedPartitions,
      doc: `all: take a balanced share of the partitions with the other ${peers} (leases); a list such as 0,2,4-7: take exactly those, whenever their lease is free.`,
    },
    replicaId: { env: 'REPLICA_ID', flag: '--replica-id', default: defaultReplicaId(), parse: parseReplicaId, doc: `This replica's name among the ${peers} of the cluster (leases); unique per process. Defaults to <hostname>-<pid>.` },
    leaseTtl: { env: 'LEASE_TTL', flag: '--lease-ttl', default: '5s', min: 1000, parse: 'duration', doc: 'Lease time to live: a replica that stops renewing loses its partitions this long after its last renewal (renewed every TTL/5).' },
  } as const;
}

/**
 * The partitions a replica may take (all, or its list) and, for a list, `pinned`. Throws
 * ConfigError when a listed partition is outside 0..partitions-1 or the list is empty.
 */
export function ownedPartitionsOf(partitions: number, owned: OwnedPartitions): { readonly partitions: readonly number[]; readonly pinned?: readonly number[] } {
  const list = owned === 'all' ? Array.from({ length: partitions }, (_, i) => i) : owned;
  const bad = list.find((p) => p >= partitions);
  if (bad !== undefined) throw new ConfigError('--owned-partitions', `partition ${bad} is outside 0..${partitions - 1} (--partitions ${partitions})`);
  if (list.length === 0) throw new ConfigError('--owned-partitions', 'owns no partition');
  return { partitions: list, ...(owned === 'all' ? {} : { pinned: list }) };
}
