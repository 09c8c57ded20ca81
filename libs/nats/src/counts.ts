// Counts read from the server, as they may be shown or summed: a count that cannot be true is
// unknown (null), never a number. nats-server was seen to report a consumer's num_pending as
// 2^64 − 1 after a restart (an unsigned underflow), which JSON turns into 18446744073709552000.

/** A count as it may be shown: a safe non-negative integer, or null (unknown) for anything else. */
export function trustedCount(value: number | null | undefined): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/** A count the server reported that cannot be true. */
export interface ImpossibleCount {
  /** What was read, e.g. `consumer KUBE/slicer-0 num_pending`. */
  readonly what: string;
  readonly value: number;
}

/** Receives impossible counts (see onceEach). */
export type ImpossibleCountSink = (count: ImpossibleCount) => void;

/**
 * `value` if trustworthy (trustedCount), else null, telling `onImpossible` what it was. A
 * missing value (undefined/null) is unknown without being reported.
 */
export function checkedCount(value: number | null | undefined, what: string, onImpossible?: ImpossibleCountSink): number | null {
  const n = trustedCount(value);
  if (n === null && typeof value === 'number') onImpossible?.({ what, value });
  return n;
}

/** The sum, or null when any part is unknown. */
export function sumCounts(counts: readonly (number | null)[]): number | null {
  let total = 0;
  for (const c of counts) {
    if (c === null) return null;
    total += c;
  }
  return trustedCount(total);
}

/**
 * A sink that passes each `what` on once (the first impossible value of each), so a count that
 * stays wrong for minutes is logged once, not at every reading.
 */
export function onceEach(sink: ImpossibleCountSink): ImpossibleCountSink {
  const seen = new Set<string>();
  return (c) => {
    if (seen.has(c.what)) return;
    seen.add(c.what);
    sink(c);
  };
}

/** The one line a person reads about it. */
export function describeImpossibleCount(c: ImpossibleCount): string {
  return `NATS reported ${c.what} = ${c.value}, which cannot be true (a server-side underflow, seen after a restart); shown as unknown ("?") until the server reports a real count`;
}
