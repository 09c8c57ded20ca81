// Reading a .slog file (log-format.ts) as a LogSource, with no server. A plain file is opened
// from its head (header, snapshot) and its tail (last event, dead letters, reconciles, end), so
// `log at latest` reads the events once; a gzip file, or one cut short, is scanned whole. Events
// are indexed (seq and time, read off the front of the line) on the first search by sequence or
// time; an index up to CACHE_CHARS of event text keeps the lines in memory, a larger file is
// streamed again for each replay.

import { open } from 'node:fs/promises';
import { HistoryInputError } from './errors.ts';
import type { LogHeader, LogLine } from './log-format.ts';
import { LOG_FORMAT, LOG_VERSION, eventIndexOf } from './log-format.ts';
import { eventSeqAt, eventTimeAt, lineChunks } from './file-lines.ts';
import type { DeadLetterEntry, LogEvent, LogPoint, LogSettings, LogSnapshot, LogSource, ScheduledReconcile, SnapshotObject } from './source.ts';
import { logSettings } from './source.ts';
import type { EndpointSlice } from '@slicemesh/model';

const CACHE_CHARS = 256 * 1024 * 1024;

async function isGzip(path: string): Promise<boolean> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(2);
    const { bytesRead } = await fh.read(buf, 0, 2, 0);
    return bytesRead === 2 && buf[0] === 0x1f && buf[1] === 0x8b;
  } finally {
    await fh.close();
  }
}

function eventOf(line: string): LogEvent {
  const l = JSON.parse(line) as Extract<LogLine, { t: 'event' }>;
  if (l.raw !== undefined) return { seq: l.seq, time: l.time, subject: l.subject, data: undefined, parseError: 'the stored body is not JSON' };
  return { seq: l.seq, time: l.time, subject: l.subject, data: l.data };
}

export interface LogFileInfo {
  readonly header: LogHeader;
  /** False when the file has no end line (cut short). */
  readonly complete: boolean;
  readonly events: number;
}

export interface LogFileSource extends LogSource {
  readonly info: LogFileInfo;
}

function parseHeader(line: string | undefined, path: string): LogHeader {
  let h: Partial<LogHeader> | undefined;
  try {
    h = line === undefined ? undefined : (JSON.parse(line) as Partial<LogHeader>);
  } catch {
    h = undefined;
  }
  if (h === undefined || h === null || h.format !== LOG_FORMAT) throw new HistoryInputError(`${path} is not a slicemesh log file (its first line is not a ${LOG_FORMAT} header)`);
  if (typeof h.version !== 'number' || h.version > LOG_VERSION) throw new HistoryInputError(`${path} is a version ${String(h.version)} log; this slicemesh reads up to version ${LOG_VERSION}`);
  if (typeof h.cluster !== 'string' || h.cluster === '') throw new HistoryInputError(`${path}: the header names no cluster`);
  return { ...(h as LogHeader), settings: logSettings({ ...(h.settings ?? {}), cluster: h.cluster }) };
}

interface FileParts {
  readonly header: LogHeader;
  readonly objects: SnapshotObject[];
  readonly slices: EndpointSlice[];
  readonly dead: DeadLetterEntry[];
  readonly reconciles: ScheduledReconcile[];
  complete: boolean;
  /** From the end line; -1 when there is none. */
  endEvents: number;
}

interface EventIndex {
  readonly seqs: number[];
  readonly times: string[];
  /** The event lines themselves, when they fit in CACHE_CHARS. */
  readonly lines: string[] | null;
}

function takeLine(parts: FileParts, l: LogLine): void {
  if (l.t === 'object') parts.objects.push({ deleted: l.deleted, object: l.object });
  else if (l.t === 'slice') parts.slices.push(l.slice);
  else if (l.t === 'dead') parts.dead.push({ seq: l.seq, time: l.time, subject: l.subject, stage: l.stage, body: l.body });
  else if (l.t === 'reconcile') parts.reconciles.push({ seq: l.seq, service: l.service });
  else if (l.t === 'end') {
    parts.complete = true;
    parts.endEvents = l.events;
  }
}

function parseLine(line: string, where: string): LogLine {
  try {
    return JSON.parse(line) as LogLine;
  } catch (err) {
    throw new HistoryInputError(`${where}: not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
}

/**
 * One pass over the file. `head`: stop at the first event (header and snapshot read, the first
 * event's point returned); otherwise read every line, index the events and collect the rest.
 */
async function scanFile(path: string, gzip: boolean, head: boolean): Promise<{ parts: FileParts; index: EventIndex; first: LogPoint | null }> {
  let parts: FileParts | undefined;
  const seqs: number[] = [];
  const times: string[] = [];
  let lines: string[] | null = [];
  let chars = 0;
  let n = 0;
  try {
    for await (const { buf, starts, ends } of lineChunks(path, gzip)) {
      for (let k = 0; k < starts.length; k++) {
        const start = starts[k] as number;
        const end = ends[k] as number;
        n++;
        if (parts === undefined) {
          parts = { header: parseHeader(buf.toString('utf8', start, end), path), objects: [], slices: [], dead: [], reconciles: [], complete: false, endEvents: -1 };
          continue;
        }
        if (end === start) continue;
        const seq = eventSeqAt(buf, start, end);
        if (seq >= 0) {
          const time = eventTimeAt(buf, start, end);
          if (head) return { parts, index: { seqs, times, lines: null }, first: { seq, time } };
          if (seqs.length > 0 && seq <= (seqs[seqs.length - 1] as number)) throw new HistoryInputError(`${path}:${n}: event ${seq} is out of order`);
          seqs.push(seq);
          times.push(time);
          if (lines !== null) {
            chars += end - start;
            if (chars > CACHE_CHARS) lines = null;
            else lines.push(buf.toString('utf8', start, end));
          }
          continue;
        }
        takeLine(parts, parseLine(buf.toString('utf8', start, end), `${path}:${n}`));
      }
    }
  } catch (err) {
    if (err instanceof HistoryInputError) throw err;
    throw new HistoryInputError(`cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (parts === undefined) throw new HistoryInputError(`${path} is empty`);
  return { parts, index: { seqs, times, lines }, first: seqs.length > 0 ? { seq: seqs[0] as number, time: times[0] as string } : null };
}

/**
 * The lines after the last event of a plain file, read backwards from its end: the last
 * event's point and the dead letters, reconciles and end line after it. null when the file has
 * no end line (cut short: read it whole instead).
 */
async function readTail(path: string, into: FileParts): Promise<{ last: LogPoint | null } | null> {
  const fh = await open(path, 'r');
  try {
    const size = (await fh.stat()).size;
    for (let span = 1 << 20; ; span *= 4) {
      const from = Math.max(0, size - span);
      const buf = Buffer.alloc(size - from);
      await fh.read(buf, 0, buf.length, from);
      const lines = buf.toString('utf8').split('\n');
      // The first line may have been cut by the read (and is the header when from is 0).
      const whole = lines.slice(1);
      const tail: LogLine[] = [];
      let last: LogPoint | null = null;
      for (let i = whole.length - 1; i >= 0; i--) {
        const line = whole[i] as string;
        if (line === '') continue;
        const idx = eventIndexOf(line);
        if (idx !== null) {
          last = idx;
          break;
        }
        tail.push(parseLine(line, `${path} (near its end)`));
      }
      if (last === null && from > 0) continue;
      if (!tail.some((l) => l.t === 'end')) return null;
      // Those before the last event (its snapshot lines) were read with the head already.
      if (last !== null || from > 0) for (const l of tail.reverse()) takeLine(into, l);
      return { last };
    }
  } finally {
    await fh.close();
  }
}

/**
 * Opens a .slog file (plain or gzip). A plain file with its end line is opened from its head and
 * tail; the events are indexed only when a search by sequence or time needs it. Throws
 * HistoryInputError when it is missing, not a log, of a newer version, or has a malformed line.
 */
export async function openLogFile(path: string): Promise<LogFileSource> {
  let gzip: boolean;
  try {
    gzip = await isGzip(path);
  } catch (err) {
    throw new HistoryInputError(`cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!gzip) {
    const head = await scanFile(path, false, true);
    if (head.first !== null) {
      const tail = await readTail(path, head.parts);
      if (tail !== null && tail.last !== null) return fileSource(path, false, head.parts, { first: head.first, last: tail.last }, null);
    }
  }
  const full = await scanFile(path, gzip, false);
  const b = full.index.seqs.length === 0 ? null : { first: full.first as LogPoint, last: { seq: full.index.seqs[full.index.seqs.length - 1] as number, time: full.index.times[full.index.times.length - 1] as string } };
  return fileSource(path, gzip, full.parts, b, full.index);
}

function fileSource(path: string, gzip: boolean, parts: FileParts, bounds: { first: LogPoint; last: LogPoint } | null, built: EventIndex | null): LogFileSource {
  const h = parts.header;
  const settings: LogSettings = h.settings;
  const snapshot: LogSnapshot = { seq: h.snapshot.seq, time: h.snapshot.time, objects: parts.objects, slices: parts.slices };
  let index: Promise<EventIndex> | null = built === null ? null : Promise.resolve(built);
  // Built on the first search: one more pass over the file.
  const indexed = (): Promise<EventIndex> => (index ??= scanFile(path, gzip, false).then((r) => r.index));
  const lowerBound = (seqs: readonly number[], seq: number): number => {
    let lo = 0;
    let hi = seqs.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((seqs[mid] as number) < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return {
    kind: 'file',
    description: path,
    info: { header: h, complete: parts.complete, events: parts.endEvents >= 0 ? parts.endEvents : (built?.seqs.length ?? 0) },
    settings: async () => settings,
    snapshot: async () => snapshot,
    bounds: async () => bounds,
    eventAtOrAfter: async (seq) => {
      const { seqs, times } = await indexed();
      const i = lowerBound(seqs, seq);
      return i < seqs.length ? { seq: seqs[i] as number, time: times[i] as string } : null;
    },
    events: async function* (from, to) {
      const ready = built ?? (index === null ? null : await index);
      if (ready !== null && ready.lines !== null) {
        const { seqs, lines } = ready;
        for (let i = lowerBound(seqs, from); i < seqs.length && (seqs[i] as number) <= to; i++) yield eventOf(lines[i] as string);
        return;
      }
      for await (const { buf, starts, ends } of lineChunks(path, gzip)) {
        for (let k = 0; k < starts.length; k++) {
          const seq = eventSeqAt(buf, starts[k] as number, ends[k] as number);
          if (seq < 0 || seq < from) continue;
          if (seq > to) return;
          yield eventOf(buf.toString('utf8', starts[k] as number, ends[k] as number));
        }
      }
    },
    deadLetters: async () => parts.dead,
    reconciles: async () => parts.reconciles,
    points: async () => {
      const { seqs, times } = await indexed();
      return seqs.map((seq, i) => ({ seq, time: times[i] as string }));
    },
    close: async () => {},
  };
}
