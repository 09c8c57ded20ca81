import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { scenarioEvents } from '../testing/scenario.ts';
import { exportLog, streamSink } from './export-log.ts';
import { historyOf } from './history-of.ts';
import { openLogFile } from './log-file.ts';
import { memoryLog } from './memory-log.ts';
import { resolvePoint, timeline } from './points.ts';
import type { LogSource } from './source.ts';
import { logSettings } from './source.ts';
import { stateAt } from './state-at.ts';

const dir = mkdtempSync(join(tmpdir(), 'slog-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const whole = () => memoryLog({ settings: logSettings({ cluster: 'c' }), events: scenarioEvents('c'), deadLetters: [{ seq: 3, time: '2026-11-26T10:05:30.000Z', subject: 'dlq.c.slicer', stage: 'slicer', body: { reason: 'bad', subject: 'kube.c.0.pod.shop.x', at: '2026-11-26T10:05:30.000Z', object: '{}', objectBytes: 2, truncated: false } }] });

async function write(src: LogSource, name: string, o: { from?: string; to?: string; gzip?: boolean } = {}): Promise<string> {
  const path = join(dir, name);
  const out = streamSink(path, o.gzip ?? false);
  await exportLog(src, out.sink, { now: '2026-11-26T12:00:00Z', ...(o.from ? { from: await resolvePoint(src, o.from) } : {}), ...(o.to ? { to: await resolvePoint(src, o.to) } : {}) });
  await out.close();
  return path;
}

// The trigger-time annotation is the slicer's process memory (A.10), not the log's: left out.
const stateText = async (src: LogSource, spec: string): Promise<string> =>
  JSON.stringify((await stateAt(src, await resolvePoint(src, spec))).services).replace(/"endpoints\.kubernetes\.io\/last-change-trigger-time":"[^"]*"/g, '');

describe('the .slog file', () => {
  it.each([
    ['plain', false],
    ['gzip', true],
  ])('round-trips a whole log (%s): the same states, history and dead letters as the log it came from', async (_name, gzip) => {
    const path = await write(whole(), `whole-${String(gzip)}.slog`, { gzip });
    const file = await openLogFile(path);
    expect(file.info).toMatchObject({ complete: true, events: 18 });
    for (const p of ['4', '11', '13', 'latest']) expect(await stateText(file, p)).toBe(await stateText(whole(), p));
    expect(JSON.stringify(await historyOf(file, { namespace: 'shop', name: 'web' }))).toBe(JSON.stringify(await historyOf(whole(), { namespace: 'shop', name: 'web' })));
    expect(await file.deadLetters()).toEqual(await whole().deadLetters());
  });

  it('an export from the middle starts from a snapshot and reaches the same later states', async () => {
    const path = await write(whole(), 'middle.slog', { from: '10', to: '15' });
    const file = await openLogFile(path);
    expect(file.info.header.snapshot.seq).toBe(9);
    expect(await file.bounds()).toMatchObject({ first: { seq: 10 }, last: { seq: 15 } });
    for (const p of ['10', '12', '15']) expect(await stateText(file, p)).toBe(await stateText(whole(), p));
    // The snapshot itself is a point of the file.
    expect(await stateText(file, '9')).toBe(await stateText(whole(), '9'));
  });

  it('gives the same timeline from its index as the log from its events', async () => {
    const file = await openLogFile(await write(whole(), 'timeline.slog'));
    expect(await timeline(file, 4)).toEqual(await timeline(memoryLog({ settings: logSettings({ cluster: 'c' }), events: scenarioEvents('c') }), 4));
  });

  it('keeps the settings in force in the header', async () => {
    const src = memoryLog({ settings: logSettings({ cluster: 'c', maxEndpointsPerSlice: 3 }), events: scenarioEvents('c') });
    const file = await openLogFile(await write(src, 'settings.slog'));
    expect((await file.settings()).maxEndpointsPerSlice).toBe(3);
    const s = await stateAt(file, await resolvePoint(file, 'latest'));
    // Seven endpoints at most three to a slice.
    expect(s.services.find((x) => x.name === 'web')?.slices.length).toBe(3);
  });

  it('reads a file cut short, and says so', async () => {
    const full = readFileSync(await write(whole(), 'full.slog'), 'utf8').split('\n');
    const cut = join(dir, 'cut.slog');
    writeFileSync(cut, full.slice(0, 8).join('\n'));
    const file = await openLogFile(cut);
    expect(file.info).toMatchObject({ complete: false, events: 7 });
  });

  it.each([
    ['a file that is not a log', 'hello\n', /is not a slicemesh log file/],
    ['a newer version', `${JSON.stringify({ format: 'slicemesh-log', version: 99, cluster: 'c', snapshot: { seq: 0, time: '' } })}\n`, /version 99 log; this slicemesh reads up to version 1/],
    ['a header without a cluster', `${JSON.stringify({ format: 'slicemesh-log', version: 1, snapshot: { seq: 0, time: '' } })}\n`, /names no cluster/],
    ['a malformed line', `${JSON.stringify({ format: 'slicemesh-log', version: 1, cluster: 'c', snapshot: { seq: 0, time: '' } })}\n{oops\n`, /:2: not JSON/],
    ['an empty file', '', /is empty/],
  ])('rejects %s with one clear error', async (_name, text, message) => {
    const path = join(dir, `bad-${Math.random().toString(36).slice(2)}.slog`);
    writeFileSync(path, text);
    await expect(openLogFile(path)).rejects.toMatchObject({ name: 'HistoryInputError', message: expect.stringMatching(message) });
  });

  it('rejects a gzip file whose content is not a log', async () => {
    const path = join(dir, 'bad.slog.gz');
    writeFileSync(path, gzipSync('nope\n'));
    await expect(openLogFile(path)).rejects.toThrow(/is not a slicemesh log file/);
  });

  it('says a missing file cannot be read', async () => {
    await expect(openLogFile(join(dir, 'missing.slog'))).rejects.toThrow(/cannot read .*missing\.slog/);
  });
});
