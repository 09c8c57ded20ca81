// "Settled": nothing left to do anywhere in the pipeline. Every consumer has finished its
// backlog, no Service is dirty, the outbox is published, and nothing has moved (cluster, KUBE,
// SLICES, views) for a quiet period — the quiet period covers the in-memory batching windows
// (slicer pod batching, hints debounce) that no stream or table shows.

import type { BackboneReading } from './probe.ts';

export interface SettleOptions {
  /** Give up after this long, ms. Defaults to 60000. */
  readonly timeoutMs?: number;
  /** How long everything must stay still, ms. Defaults to 1500. */
  readonly quietMs?: number;
  /** Poll period, ms. Defaults to 200. */
  readonly intervalMs?: number;
}

/** What a settle poll reads: the backbone, plus the simulator's resourceVersion when there is one. */
export interface SettleReading {
  readonly backbone: BackboneReading;
  readonly clusterVersion?: number;
}

/** The parts that must not move during the quiet period. */
export function motionKey(r: SettleReading): string {
  const b = r.backbone;
  return JSON.stringify([r.clusterVersion ?? null, b.kubeSeq, b.slicesSeq, b.viewsSeq, b.deadLetters]);
}

/** Why `r` is not settled yet, or null when nothing is pending. */
export function pendingWork(r: SettleReading): string | null {
  const b = r.backbone;
  // A count neither the server nor the services' offsets could give (readBackbone) tells nothing
  // either way: the quiet period, in which no stream moves, decides alone then.
  const pendingUnknown = b.unknown?.includes('pending') === true;
  if (b.pending === null && !pendingUnknown) return b.missingConsumer === undefined ? 'a consumer does not exist yet' : `a consumer cannot be read (${b.missingConsumer})`;
  const parts: string[] = [];
  if (b.pending !== null && b.pending > 0) parts.push(`${b.pending} messages pending`);
  if (b.behind !== undefined) parts.push(`not counted, behind: ${b.behind}`);
  if (b.dirty > 0) parts.push(`${b.dirty} dirty Services`);
  if (b.outbox > 0) parts.push(`${b.outbox} outbox rows unpublished`);
  return parts.length === 0 ? null : parts.join(', ');
}

export class NotSettledError extends Error {
  override readonly name = 'NotSettledError';
}

/**
 * Polls `read` until, for `quietMs`, there was no pending work and motionKey stayed the same.
 * Resolves with the last reading; throws NotSettledError (with what was still moving) after
 * `timeoutMs`.
 */
export async function waitSettled(
  read: () => Promise<SettleReading>,
  opts: SettleOptions = {},
  now: () => number = Date.now,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Promise<SettleReading> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const quietMs = opts.quietMs ?? 1500;
  const start = now();
  let key = '';
  // When the current still period began; undefined while work is pending.
  let stillSince: number | undefined;
  let why = 'nothing read yet';
  // The last pending work seen: a count that comes and goes shows here instead of as motion.
  let lastPending: string | undefined;
  for (;;) {
    const r = await read();
    const k = motionKey(r);
    const t = now();
    const pending = pendingWork(r);
    const moved = k !== key;
    if (pending !== null) {
      stillSince = undefined;
      lastPending = pending;
    } else if (moved || stillSince === undefined) stillSince = t;
    key = k;
    if (stillSince !== undefined && t - stillSince >= quietMs) return r;
    why = pending ?? (moved || lastPending === undefined ? `still moving (${k})` : `pending work came and went (last: ${lastPending}; ${k})`);
    if (t - start >= timeoutMs) throw new NotSettledError(`not settled after ${timeoutMs} ms: ${why}`);
    await sleep(opts.intervalMs ?? 200);
  }
}
