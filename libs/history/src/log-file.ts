// Reading a .slog file (log-format.ts) as a LogSource, with no server. Opening scans the file
// once: the header, the snapshot and the dead letters are parsed, events are only indexed (seq
// and time, read off the front of the line). A file up to CACHE_CHARS of event text keeps the
// lines in memory; a larger one is streamed again for each replay.

import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import { HistoryInputError } from './errors.ts';
import type { LogHeader, LogLine } from './log-format.ts';
import { LOG_FORMAT, LOG_VERSION, eventIndexOf } from './log-format.ts';
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

// The file's lines, a chunk's worth at a time (one await per megabyte, not per line).
async function* lineBatches(path: string, gzip: boolean): AsyncGenerator<string[]> {
  const file = createReadStream(path, { highWaterMark: 1 << 20 });
  const input: Readable = gzip ? file.pipe(createGunzip()) : file;
  if (gzip) file.on('error', (err) => input.destroy(err));
  input.setEncoding('utf8');
  let rest = '';
  try {
    for await (const chunk of input as AsyncIterable<string>) {
      const text = rest + chunk;
      const lines = text.split('\n');
      rest = lines.pop() ?? '';
      yield lines;
    }
    if (rest !== '') yield [rest];
  } finally {
    // A reader that stops early (a replay to a past point) must not leave the file open.
    file.destroy();
    input.destroy();
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

/**
 * Opens a .slog file (plain or gzip). Throws HistoryInputError when it is missing, not a log,
 * of a newer version, or has a malformed line (the line number says where).
 */
export async function openLogFile(path: string): Promise<LogFileSource> {
  let gzip: boolean;
  try {
    gzip = await isGzip(path);
  } catch (err) {
    throw new HistoryInputError(`cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  let header: LogHeader | undefined;
  const objects: SnapshotObject[] = [];
  const slices: EndpointSlice[] = [];
  const dead: DeadLetterEntry[] = [];
  const reconciles: ScheduledReconcile[] = [];
  const seqs: number[] = [];
  const times: string[] = [];
  let cache: string[] | null = [];
  let chars = 0;
  let complete = false;
  let n = 0;
  try {
    for await (const batch of lineBatches(path, gzip)) {
      for (const line of batch) {
        n++;
        if (header === undefined) {
          header = parseHeader(line, path);
          continue;
        }
        if (line === '') continue;
        const idx = eventIndexOf(line);
        if (idx !== null) {
          if (seqs.length > 0 && idx.seq <= (seqs[seqs.length - 1] as number)) throw new HistoryInputError(`${path}:${n}: event ${idx.seq} is out of order`);
          seqs.push(idx.seq);
          times.push(idx.time);
          if (cache !== null) {
            chars += line.length;
            if (chars > CACHE_CHARS) cache = null;
            else cache.push(line);
          }
          continue;
        }
        let l: LogLine;
        try {
          l = JSON.parse(line) as LogLine;
        } catch (err) {
          throw new HistoryInputError(`${path}:${n}: not JSON (${err instanceof Error ? err.message : String(err)})`);
        }
        if (l.t === 'object') objects.push({ deleted: l.deleted, object: l.object });
        else if (l.t === 'slice') slices.push(l.slice);
        else if (l.t === 'dead') dead.push({ seq: l.seq, time: l.time, subject: l.subject, stage: l.stage, body: l.body });
        else if (l.t === 'reconcile') reconciles.push({ seq: l.seq, service: l.service });
        else if (l.t === 'end') complete = true;
      }
    }
  } catch (err) {
    if (err instanceof HistoryInputError) throw err;
    throw new HistoryInputError(`cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (header === undefined) throw new HistoryInputError(`${path} is empty`);
  const h = header;
  const settings: LogSettings = h.settings;
  const snapshot: LogSnapshot = { seq: h.snapshot.seq, time: h.snapshot.time, objects, slices };
  const lines = cache;
  const point = (i: number): LogPoint => ({ seq: seqs[i] as number, time: times[i] as string });
  // Index of the first event with seq ≥ `seq` (seqs.length when none).
  const lowerBound = (seq: number): number => {
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
    info: { header: h, complete, events: seqs.length },
    settings: async () => settings,
    snapshot: async () => snapshot,
    bounds: async () => (seqs.length === 0 ? null : { first: point(0), last: point(seqs.length - 1) }),
    eventAtOrAfter: async (seq) => {
      const i = lowerBound(seq);
      return i < seqs.length ? point(i) : null;
    },
    events: async function* (from, to) {
      if (lines !== null) {
        for (let i = lowerBound(from); i < seqs.length && (seqs[i] as number) <= to; i++) yield eventOf(lines[i] as string);
        return;
      }
      for await (const batch of lineBatches(path, gzip)) {
        for (const line of batch) {
          const idx = eventIndexOf(line);
          if (idx === null || idx.seq < from) continue;
          if (idx.seq > to) return;
          yield eventOf(line);
        }
      }
    },
    deadLetters: async () => dead,
    reconciles: async () => reconciles,
    close: async () => {},
  };
}
