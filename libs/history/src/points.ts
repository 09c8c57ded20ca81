// Naming points of the log: `resolvePoint` turns what a person types (a sequence, an RFC 3339
// time, `first`, `latest`) into a LogPoint, and `timeline` buckets the log by time for a chart.
// Both search with eventAtOrAfter, so a live log answers without being read whole.

import { HistoryInputError } from './errors.ts';
import type { LogPoint, LogSource } from './source.ts';

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

const ms = (time: string): number => Date.parse(time);

/** The last event for which `ok` holds, searching seqs in [lo, hi]; `ok` must be monotone (true then false). */
async function lastWhere(src: LogSource, lo: LogPoint, hi: number, ok: (p: LogPoint) => boolean): Promise<LogPoint> {
  let best = lo;
  let low = lo.seq;
  let high = hi;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    const p = await src.eventAtOrAfter(mid);
    if (p !== null && p.seq <= hi && ok(p)) {
      best = p;
      low = p.seq;
      if (p.seq === high) break;
    } else high = mid - 1;
  }
  return best;
}

/**
 * The point `spec` names: `first` and `latest` (the first and last event), a sequence (the last
 * event at or before it; beyond the end: the last event), or an RFC 3339 time (the last event
 * stored at or before it). Throws HistoryInputError for anything else, for an empty log, or for
 * a point before the log starts.
 * Example: resolvePoint(src, '2026-11-26T21:00:00Z') → { seq: 1234, time: '2026-11-26T20:59:58.1Z' }.
 */
export async function resolvePoint(src: LogSource, spec: string): Promise<LogPoint> {
  const b = await src.bounds();
  const s = spec.trim();
  if (b === null) {
    const snap = await src.snapshot();
    if (snap.seq > 0 && (s === 'first' || s === 'latest' || s === String(snap.seq))) return { seq: snap.seq, time: snap.time };
    throw new HistoryInputError(`the log holds no events, so there is no point ${JSON.stringify(spec)}`);
  }
  if (s === 'latest' || s === 'last') return b.last;
  if (s === 'first') return b.first;
  if (/^\d+$/.test(s)) {
    const seq = Number(s);
    if (seq >= b.last.seq) return b.last;
    if (seq < b.first.seq) {
      const snap = await src.snapshot();
      if (snap.seq > 0 && seq === snap.seq) return { seq: snap.seq, time: snap.time };
      throw new HistoryInputError(`sequence ${seq} is before the log's first event (${b.first.seq})`);
    }
    return lastWhere(src, b.first, seq, (p) => p.seq <= seq);
  }
  if (RFC3339.test(s)) {
    const t = ms(s);
    if (Number.isNaN(t)) throw new HistoryInputError(`${JSON.stringify(spec)} is not a valid time`);
    if (ms(b.first.time) > t) throw new HistoryInputError(`${s} is before the log's first event (${b.first.time}, sequence ${b.first.seq})`);
    if (ms(b.last.time) <= t) return b.last;
    return lastWhere(src, b.first, b.last.seq, (p) => ms(p.time) <= t);
  }
  throw new HistoryInputError(`a point is a sequence number, an RFC 3339 time, "first" or "latest"; got ${JSON.stringify(spec)}`);
}

export interface TimelineBucket {
  readonly from: LogPoint;
  readonly to: LogPoint;
  readonly events: number;
}

/**
 * The log cut into `buckets` equal spans of time, first to last event, with the events of each.
 * An empty bucket's from and to are the last event before it, at the bucket's start time.
 * Empty log: [].
 */
export async function timeline(src: LogSource, buckets: number): Promise<readonly TimelineBucket[]> {
  if (!Number.isInteger(buckets) || buckets < 1) throw new HistoryInputError(`buckets must be a positive integer, got ${buckets}`);
  const b = await src.bounds();
  if (b === null) return [];
  const t0 = ms(b.first.time);
  const span = Math.max(1, ms(b.last.time) - t0 + 1);
  const width = span / buckets;
  const counts = new Array<number>(buckets).fill(0);
  const firsts = new Array<LogPoint | undefined>(buckets);
  const lasts = new Array<LogPoint | undefined>(buckets);
  const all: AsyncIterable<LogPoint> | Iterable<LogPoint> = src.points !== undefined ? await src.points() : src.events(b.first.seq, b.last.seq);
  for await (const ev of all) {
    const i = Math.min(buckets - 1, Math.max(0, Math.floor((ms(ev.time) - t0) / width)));
    counts[i] = (counts[i] ?? 0) + 1;
    const p = { seq: ev.seq, time: ev.time };
    if (firsts[i] === undefined) firsts[i] = p;
    lasts[i] = p;
  }
  const out: TimelineBucket[] = [];
  let previous: LogPoint = b.first;
  for (let i = 0; i < buckets; i++) {
    const first = firsts[i];
    const last = lasts[i];
    if (first !== undefined && last !== undefined) {
      out.push({ from: first, to: last, events: counts[i] ?? 0 });
      previous = last;
    } else {
      const at = { seq: previous.seq, time: new Date(t0 + i * width).toISOString() };
      out.push({ from: at, to: at, events: 0 });
    }
  }
  return out;
}
