// Which clusters of the set are live: a cluster is withdrawn from every import once its last
// heartbeat is older than the TTL (KEP-1645 "Endpoint TTL"), and returns with its next one.
// Ages are measured on the importer's own clock from when it saw each heartbeat, so clock skew
// between clusters cannot withdraw a live cluster or keep a dead one.

export interface HeartbeatSeen {
  readonly cluster: string;
  /** When this importer saw the heartbeat (ms, its own clock); at start-up, the entry's stored time. */
  readonly seenAt: number;
}

/** The clusters whose heartbeat is younger than `ttlMs` at `now`; `self` is always live. */
export function liveClusters(seen: Iterable<HeartbeatSeen>, now: number, ttlMs: number, self: string): Set<string> {
  const live = new Set<string>([self]);
  for (const h of seen) if (now - h.seenAt < ttlMs) live.add(h.cluster);
  return live;
}

/** When the next cluster would expire (ms), or undefined when none but `self` is live. */
export function nextExpiry(seen: Iterable<HeartbeatSeen>, now: number, ttlMs: number, self: string): number | undefined {
  let next: number | undefined;
  for (const h of seen) {
    if (h.cluster === self) continue;
    const at = h.seenAt + ttlMs;
    if (at > now && (next === undefined || at < next)) next = at;
  }
  return next;
}
