// `--replicas slicer=3,hints=2,watcher=2`: how many copies of each replicable service the stack
// runs. Slicers and hints services share the KUBE partitions through Postgres leases
// (REPLICA_ID slicer-<n>, hints-<n>), watchers run active-active with dedup. The publisher and
// the agents are not replicated here.

/** The services the stack can run several copies of. */
export const REPLICA_KINDS = ['slicer', 'hints', 'watcher'] as const;
export type ReplicaKind = (typeof REPLICA_KINDS)[number];

export type ReplicaCounts = Readonly<Record<ReplicaKind, number>>;

export const ONE_EACH: ReplicaCounts = { slicer: 1, hints: 1, watcher: 1 };

/** Upper bound per kind: every replica is a process with its own connections on one machine. */
export const MAX_REPLICAS = 16;

/**
 * Parses `kind=n[,kind=n…]`; kinds not named keep 1. Throws (a message for ConfigError) on an
 * unknown kind, a kind named twice, a count that is not an integer in 1..MAX_REPLICAS, or
 * anything that is not `kind=n`. The empty string means one of each.
 */
export function parseReplicas(text: string): ReplicaCounts {
  const out: Record<ReplicaKind, number> = { ...ONE_EACH };
  const seen = new Set<string>();
  const trimmed = text.trim();
  if (trimmed === '') return out;
  for (const part of trimmed.split(',')) {
    const m = /^\s*([A-Za-z-]+)\s*=\s*(\S*)\s*$/.exec(part);
    if (m === null) throw new Error(`${JSON.stringify(part)} is not kind=count (e.g. slicer=3,hints=2,watcher=2)`);
    const kind = (m[1] as string).toLowerCase();
    const count = m[2] as string;
    if (!(REPLICA_KINDS as readonly string[]).includes(kind)) throw new Error(`unknown service ${JSON.stringify(kind)}: replicas are for ${REPLICA_KINDS.join(', ')}`);
    if (seen.has(kind)) throw new Error(`${kind} is named twice`);
    seen.add(kind);
    if (!/^\d+$/.test(count)) throw new Error(`${kind}=${count}: the count must be a whole number 1..${MAX_REPLICAS}`);
    const n = Number(count);
    if (n < 1 || n > MAX_REPLICAS) throw new Error(`${kind}=${count}: the count must be 1..${MAX_REPLICAS} (0 would leave the pipeline without a ${kind})`);
    out[kind as ReplicaKind] = n;
  }
  return out;
}

/** `slicer=3,hints=2,watcher=2`, the inverse of parseReplicas. */
export function formatReplicas(r: ReplicaCounts): string {
  return REPLICA_KINDS.map((k) => `${k}=${r[k]}`).join(',');
}

/** True when some kind runs more than once. */
export function hasReplicas(r: ReplicaCounts): boolean {
  return REPLICA_KINDS.some((k) => r[k] > 1);
}

/**
 * Component names of `kind` with `n` replicas: the bare kind for one (as ever: `slicer`, its log
 * `slicer.log`), `<kind>-0` … `<kind>-<n-1>` for several.
 */
export function replicaNames(kind: ReplicaKind, n: number): string[] {
  if (n <= 1) return [kind];
  return Array.from({ length: n }, (_, i) => `${kind}-${i}`);
}

/** The replica kind of a component name (`slicer`, `slicer-2` → slicer), or undefined. */
export function replicaKindOf(name: string): ReplicaKind | undefined {
  return REPLICA_KINDS.find((k) => name === k || new RegExp(`^${k}-\\d+$`).test(name));
}

/** Per replicable kind run: replicas ready and replicas run (status line, `--replicas`). */
export interface ReplicaReadiness {
  readonly kind: ReplicaKind;
  readonly ready: number;
  readonly total: number;
}

/** Readiness per kind over the stack's components (kinds without a component left out). */
export function replicaReadiness(components: readonly { readonly name: string; isReady(): boolean }[]): ReplicaReadiness[] {
  const out: ReplicaReadiness[] = [];
  for (const kind of REPLICA_KINDS) {
    const mine = components.filter((c) => replicaKindOf(c.name) === kind);
    if (mine.length > 0) out.push({ kind, ready: mine.filter((c) => c.isReady()).length, total: mine.length });
  }
  return out;
}
