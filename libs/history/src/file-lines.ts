// Lines of a .slog file as byte ranges of the chunks read, not strings: an event line's sequence
// and time are read off its first bytes, and only the lines wanted are decoded and parsed —
// a replay that starts in the middle, or an index pass, skips the rest cheaply.

import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';

/** One chunk's whole lines: line i is buf[starts[i], ends[i]). */
export interface LineChunk {
  readonly buf: Buffer;
  readonly starts: readonly number[];
  readonly ends: readonly number[];
}

const NEWLINE = 0x0a;
/** Every event line starts with these bytes (eventLine in log-format.ts writes them). */
const EVENT_HEAD = Buffer.from('{"t":"event","seq":');
const TIME_HEAD = Buffer.from(',"time":"');

/** The file's lines, a chunk (about a megabyte) at a time. */
export async function* lineChunks(path: string, gzip: boolean): AsyncGenerator<LineChunk> {
  const file = createReadStream(path, { highWaterMark: 1 << 20 });
  const input: Readable = gzip ? file.pipe(createGunzip()) : file;
  if (gzip) file.on('error', (err) => input.destroy(err));
  let rest: Buffer | null = null;
  try {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      const buf: Buffer = rest === null ? chunk : Buffer.concat([rest, chunk]);
      const starts: number[] = [];
      const ends: number[] = [];
      let start = 0;
      for (let i = buf.indexOf(NEWLINE, start); i !== -1; i = buf.indexOf(NEWLINE, start)) {
        starts.push(start);
        ends.push(i);
        start = i + 1;
      }
      rest = start < buf.length ? buf.subarray(start) : null;
      if (starts.length > 0) yield { buf, starts, ends };
    }
    if (rest !== null) yield { buf: rest, starts: [0], ends: [rest.length] };
  } finally {
    // A reader that stops early (a replay to a past point) must not leave the file open.
    file.destroy();
    input.destroy();
  }
}

/** The sequence of the event line at [start, end), or -1 when it is not an event line. */
export function eventSeqAt(buf: Buffer, start: number, end: number): number {
  const head = EVENT_HEAD.length;
  if (end - start <= head || buf.compare(EVENT_HEAD, 0, head, start, start + head) !== 0) return -1;
  let seq = 0;
  let i = start + head;
  for (; i < end; i++) {
    const c = buf[i] as number;
    if (c < 0x30 || c > 0x39) break;
    seq = seq * 10 + (c - 0x30);
  }
  return i === start + head ? -1 : seq;
}

/** The time of an event line (just after its sequence); '' when absent. */
export function eventTimeAt(buf: Buffer, start: number, end: number): string {
  const at = buf.indexOf(TIME_HEAD, start + EVENT_HEAD.length);
  if (at === -1 || at >= end) return '';
  const from = at + TIME_HEAD.length;
  const to = buf.indexOf(0x22, from);
  return to === -1 || to > end ? '' : buf.toString('latin1', from, to);
}
