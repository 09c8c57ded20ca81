import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { eventLine } from './log-format.ts';
import { eventSeqAt, eventTimeAt, lineChunks } from './file-lines.ts';

const dir = mkdtempSync(join(tmpdir(), 'file-lines-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const at = (line: string) => {
  const buf = Buffer.from(line);
  return [eventSeqAt(buf, 0, buf.length), eventTimeAt(buf, 0, buf.length)];
};

describe('event lines read as bytes', () => {
  it.each([
    ['an event line', eventLine(1234, '2026-11-26T10:00:00.000Z', 'kube.c.node.n', { a: 'é' }), [1234, '2026-11-26T10:00:00.000Z']],
    ['an event whose body was not JSON', eventLine(7, 't', 's', undefined, 'bad', 'raw text'), [7, 't']],
    ['another line type', '{"t":"dead","seq":5}', [-1, '']],
    ['a line cut inside the prefix', '{"t":"event","seq":', [-1, '']],
  ])('%s', (_name, line, want) => {
    expect(at(line)).toEqual(want);
  });

  it.each([
    ['plain', false],
    ['gzip', true],
  ])('splits a %s file into its lines, across chunk boundaries and with a last line without newline', async (_name, gzip) => {
    const long = 'x'.repeat(3 << 20);
    const text = `a\n${long}\nb\n\nc`;
    const path = join(dir, `f-${String(gzip)}`);
    writeFileSync(path, gzip ? gzipSync(text) : text);
    const lines: string[] = [];
    for await (const { buf, starts, ends } of lineChunks(path, gzip)) for (let i = 0; i < starts.length; i++) lines.push(buf.toString('utf8', starts[i], ends[i]));
    expect(lines.map((l) => (l.length > 10 ? l.length : l))).toEqual(['a', 3 << 20, 'b', '', 'c']);
  });
});
