// `log export`: a stretch of a log as a self-contained .slog (log-format.ts). The snapshot is the
// replayed state just before the first exported event — objects, tombstones and the slicer's
// slices — so a replay of the file reaches exactly the states a replay of the whole log does.

import { createWriteStream } from 'node:fs';
import type { Writable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { replayTo } from './checkpoints.ts';
import type { LogHeader } from './log-format.ts';
import { LOG_FORMAT, LOG_VERSION, eventLine } from './log-format.ts';
import type { LogPoint, LogSource } from './source.ts';
import type { Progress } from './state-at.ts';

/** Where export lines go; resolves once the line is accepted (backpressure honoured). */
export type LineSink = (text: string) => Promise<void>;

export interface ExportOptions {
  /** The first event exported; default the log's first. */
  readonly from?: LogPoint;
  /** The last event exported; default the log's last. */
  readonly to?: LogPoint;
  /** RFC 3339 time written in the header. */
  readonly now: string;
  readonly onProgress?: Progress;
}

export interface ExportSummary {
  readonly events: number;
  readonly objects: number;
  readonly slices: number;
  readonly deadLetters: number;
  /** Recorded reconciles written. */
  readonly reconciles: number;
  readonly snapshotSeq: number;
}

/** Writes the export of `src` to `sink` (see the file comment). */
export async function exportLog(src: LogSource, sink: LineSink, opts: ExportOptions): Promise<ExportSummary> {
  const [settings, bounds] = await Promise.all([src.settings(), src.bounds()]);
  const from = opts.from ?? bounds?.first;
  const to = opts.to ?? bounds?.last;
  const own = await src.snapshot();
  const startAt = from === undefined ? own.seq : Math.max(own.seq, from.seq - 1);
  // The state before the first exported event; progress covers this replay and the copy.
  const total = (to?.seq ?? startAt) - own.seq;
  const rep = await replayTo(src, startAt, opts.onProgress === undefined ? undefined : (done) => opts.onProgress?.(done, total), { checkpoints: false });
  const snap = rep.snapshot();
  const header: LogHeader = { format: LOG_FORMAT, version: LOG_VERSION, cluster: settings.cluster, settings, exportedAt: opts.now, snapshot: { seq: snap.seq, time: snap.time }, origin: src.description };
  await sink(`${JSON.stringify(header)}\n`);
  for (const o of snap.objects) await sink(`${JSON.stringify({ t: 'object', deleted: o.deleted, object: o.object })}\n`);
  for (const s of snap.slices) await sink(`${JSON.stringify({ t: 'slice', slice: s })}\n`);
  let events = 0;
  if (to !== undefined && to.seq > snap.seq) {
    let batch = '';
    for await (const ev of src.events(snap.seq + 1, to.seq)) {
      batch += `${eventLine(ev.seq, ev.time, ev.subject, ev.data, ev.parseError, ev.parseError === undefined ? undefined : String(ev.data ?? ''))}\n`;
      events++;
      if (batch.length > 1 << 20) {
        await sink(batch);
        batch = '';
        opts.onProgress?.(ev.seq - own.seq, total);
      }
    }
    if (batch !== '') await sink(batch);
  }
  // Dead letters rejected while the exported stretch was written (all of them for a whole-log export).
  const lo = from === undefined || from.seq <= (bounds?.first.seq ?? 0) ? '' : from.time;
  const hi = to === undefined || to.seq >= (bounds?.last.seq ?? 0) ? '\uffff' : to.time;
  const dead = (await src.deadLetters()).filter((d) => d.time >= lo && d.time <= hi);
  for (const d of dead) await sink(`${JSON.stringify({ t: 'dead', seq: d.seq, time: d.time, subject: d.subject, stage: d.stage, body: d.body })}\n`);
  // When live reconciled, so the file replays with the same cadence.
  const last = to?.seq ?? snap.seq;
  let reconciles = 0;
  for (const r of await src.reconciles()) {
    if (r.seq <= snap.seq || r.seq > last) continue;
    await sink(`${JSON.stringify({ t: 'reconcile', seq: r.seq, service: r.service })}\n`);
    reconciles++;
  }
  await sink(`${JSON.stringify({ t: 'end', events })}\n`);
  opts.onProgress?.(total, total);
  return { events, objects: snap.objects.length, slices: snap.slices.length, deadLetters: dead.length, reconciles, snapshotSeq: snap.seq };
}

/**
 * A sink writing to `out` (a file path, or a stream such as stdout), gzip-compressed when asked.
 * `close` flushes and waits until everything is written.
 */
export function streamSink(out: string | Writable, gzip: boolean): { readonly sink: LineSink; readonly close: () => Promise<void> } {
  const target: Writable = typeof out === 'string' ? createWriteStream(out) : out;
  const gz = gzip ? createGzip() : null;
  // stdout is never ended; a file is, once everything reached it.
  if (gz !== null) gz.pipe(target, { end: false });
  const head: Writable = gz ?? target;
  let failed: Error | null = null;
  head.on('error', (err: Error) => (failed = err));
  target.on('error', (err: Error) => (failed = err));
  const sink: LineSink = async (text) => {
    if (failed !== null) throw failed;
    if (!head.write(text)) await new Promise<void>((resolve) => head.once('drain', resolve));
  };
  const close = async (): Promise<void> => {
    if (gz !== null) {
      const flushed = new Promise<void>((resolve) => gz.once('end', resolve));
      gz.end();
      await flushed;
    }
    if (typeof out === 'string') {
      const finished = new Promise<void>((resolve, reject) => {
        target.once('finish', resolve);
        target.once('error', reject);
      });
      target.end();
      await finished;
    }
    if (failed !== null) throw failed;
  };
  return { sink, close };
}
