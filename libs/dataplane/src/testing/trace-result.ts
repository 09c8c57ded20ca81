// What a packet trace reports, shared by the iptables and nftables tracers.

/** Packet under test. `protocol` defaults to TCP. */
export interface TracePacket {
  readonly sourceIP: string;
  readonly destIP: string;
  readonly destPort: number;
  readonly protocol?: 'TCP' | 'UDP' | 'SCTP';
  /** Sent by a process on the node (OUTPUT path) rather than arriving (PREROUTING path). */
  readonly fromLocalProcess?: boolean;
}

export interface TraceOptions {
  /** The node's own addresses (loopback is always local). */
  readonly nodeIPs: readonly string[];
  /** Affinity lists / sets that already hold the packet's source (`--rcheck`, `@set` lookups). */
  readonly affinityHits?: readonly string[];
}

export type TraceVerdict = 'DNAT' | 'REJECT' | 'DROP' | 'ACCEPT' | 'NONE';

/** One way the packet can go (random matches fork the trace). */
export interface TracePath {
  readonly verdict: TraceVerdict;
  /** `ip:port` after DNAT, or null. */
  readonly endpoint: string | null;
  readonly masquerade: boolean;
  /** Affinity lists / sets the source would be recorded in. */
  readonly affinity: readonly string[];
}

export interface TraceResult {
  /** Every endpoint some path reaches, sorted. */
  readonly endpoints: readonly string[];
  /** Some path is masqueraded. */
  readonly masquerade: boolean;
  /** DNAT if any path DNATs, else the first path's verdict. */
  readonly verdict: TraceVerdict;
  /** Affinity lists / sets recorded on some path, sorted; absent when none. */
  readonly affinity?: readonly string[];
  readonly paths: readonly TracePath[];
}

/** Folds paths into a result. */
export function summarize(paths: readonly TracePath[]): TraceResult {
  const endpoints = [...new Set(paths.flatMap((p) => (p.verdict === 'DNAT' && p.endpoint ? [p.endpoint] : [])))].sort();
  const affinity = [...new Set(paths.flatMap((p) => p.affinity))].sort();
  const verdict = paths.some((p) => p.verdict === 'DNAT') ? 'DNAT' : (paths[0]?.verdict ?? 'NONE');
  return {
    endpoints,
    masquerade: paths.some((p) => p.masquerade),
    verdict,
    ...(affinity.length > 0 ? { affinity } : {}),
    paths,
  };
}

/**
 * A trace as upstream's packet-flow tables write it: the endpoints joined by ", " for DNAT,
 * `REJECT` or `DROP`, and '' when no rule of ours decides.
 */
export function describeTrace(r: TraceResult): string {
  if (r.verdict === 'DNAT') return r.endpoints.join(', ');
  if (r.verdict === 'REJECT' || r.verdict === 'DROP') return r.verdict;
  return '';
}

/** Splits `ip:port` / `[ip]:port`. */
export function splitHostPort(s: string): { ip: string; port: number } {
  if (s.startsWith('[')) {
    const end = s.indexOf(']');
    return { ip: s.slice(1, end), port: Number(s.slice(end + 2)) };
  }
  const colon = s.lastIndexOf(':');
  return { ip: s.slice(0, colon), port: Number(s.slice(colon + 1)) };
}
