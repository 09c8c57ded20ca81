// Replaying to a point from the nearest snapshot. The source's own snapshot is the start of the
// log; on the way, every CHECKPOINT_EVERY events the fold leaves a snapshot in memory (objects
// are immutable, so a snapshot is arrays of references), and later replays of the same source
// start from the nearest one at or before their point — moving through time in the UI, or
// `log diff A B`, replays only the distance between checkpoints.

import type { Folded, SliceWrites } from './replayer.ts';
import { DEFAULT_BATCH, Replayer } from './replayer.ts';
import type { LogPoint, LogSnapshot, LogSource } from './source.ts';

export const CHECKPOINT_EVERY = 100_000;
/** Checkpoints kept per source (oldest dropped first beyond it): each holds on to the objects of its time. */
const MAX_CHECKPOINTS = 12;

const checkpoints = new WeakMap<LogSource, LogSnapshot[]>();

function nearest(src: LogSource, seq: number): LogSnapshot | undefined {
  let best: LogSnapshot | undefined;
  for (const s of checkpoints.get(src) ?? []) if (s.seq <= seq && (best === undefined || s.seq > best.seq)) best = s;
  return best;
}

function keep(src: LogSource, snap: LogSnapshot): void {
  const list = checkpoints.get(src) ?? [];
  if (list.some((s) => s.seq === snap.seq)) return;
  list.push(snap);
  if (list.length > MAX_CHECKPOINTS) list.shift();
  checkpoints.set(src, list);
}

/** Forgets the checkpoints of `src` (a live log that was trimmed, or tests). */
export function dropCheckpoints(src: LogSource): void {
  checkpoints.delete(src);
}

export interface FoldOptions {
  readonly onProgress?: (done: number, total: number) => void;
  /** Called after each folded event. */
  readonly onFolded?: (f: Folded, rep: Replayer) => void;
  /** Leave checkpoints for later replays of the same source; default true (one-shot commands say false). */
  readonly checkpoints?: boolean;
  /** Called after each batch's reconciles, with the last event of the batch. */
  readonly onFlush?: (writes: ReadonlyMap<string, SliceWrites>, last: LogPoint, rep: Replayer) => void;
}

/** Folds `rep` forward through every event up to `to`, reporting progress by sequence. */
export async function foldTo(src: LogSource, rep: Replayer, to: number, opts: FoldOptions = {}): Promise<void> {
  const start = rep.seq;
  const total = Math.max(0, to - start);
  let lastReport = 0;
  let sinceCheckpoint = 0;
  opts.onProgress?.(0, total);
  const flush = (settle: boolean): void => {
    const last = { seq: rep.seq, time: rep.time };
    const writes = rep.flush(settle);
    opts.onFlush?.(writes, last, rep);
  };
  for await (const ev of src.events(start + 1, to)) {
    if (rep.closesBatch(ev)) {
      flush(false);
      // A checkpoint is a settled state: taken only between batches, with nothing left dirty.
      if (opts.checkpoints !== false && sinceCheckpoint >= CHECKPOINT_EVERY && rep.settled) {
        sinceCheckpoint = 0;
        keep(src, rep.snapshot());
      }
    }
    const f = rep.fold(ev);
    sinceCheckpoint++;
    opts.onFolded?.(f, rep);
    if (opts.onProgress !== undefined && ev.seq - lastReport >= 1000) {
      lastReport = ev.seq;
      opts.onProgress(ev.seq - start, total);
    }
  }
  // The state at `to` is settled: whatever is dirty is reconciled now.
  if (rep.pending || !rep.settled) flush(true);
  opts.onProgress?.(total, total);
}

export interface ReplayOptions {
  /** See FoldOptions.checkpoints. */
  readonly checkpoints?: boolean;
}

/** A Replayer holding the state after every event up to `seq`. */
export async function replayTo(src: LogSource, seq: number, onProgress?: (done: number, total: number) => void, opts: ReplayOptions = {}): Promise<Replayer> {
  const [settings, own, schedule] = await Promise.all([src.settings(), src.snapshot(), src.reconciles()]);
  const cp = nearest(src, seq);
  const rep = new Replayer(settings, cp !== undefined && cp.seq > own.seq ? cp : own, DEFAULT_BATCH, schedule);
  await foldTo(src, rep, seq, { ...(onProgress !== undefined ? { onProgress } : {}), ...(opts.checkpoints !== undefined ? { checkpoints: opts.checkpoints } : {}) });
  return rep;
}
