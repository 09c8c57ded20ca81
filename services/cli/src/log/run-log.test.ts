import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportLog, logSettings, memoryLog, streamSink } from '@slicemesh/history';
import { scenarioEvents } from '../../../../libs/history/testing/scenario.ts';
import { runCli } from '../test-io.ts';

const dir = mkdtempSync(join(tmpdir(), 'log-cli-'));
const file = join(dir, 'scenario.slog');

beforeAll(async () => {
  const out = streamSink(file, false);
  await exportLog(memoryLog({ settings: logSettings({ cluster: 'c' }), events: scenarioEvents('c') }), out.sink, { now: '2026-11-26T12:00:00Z' });
  await out.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('slicemesh log on a file', () => {
  it.each([
    ['history', ['history', 'shop/web'], /^shop\/web: 12 changes\n/],
    ['at with JSON output', ['at', '7', '--output', 'json'], /"at": \{\n\s+"seq": 7,/],
    ['at --node', ['at', 'latest', '--node', 'worker-a-1'], /shop\/api:http\/TCP\n {4}cluster: -\n {4}local: {3}10\.1\.0\.21:8080/],
    ['why at a time', ['why', '--node', 'worker-b-1', 'shop/web', '--at', '2026-11-26T10:05:30Z'], /at seq 6 \(2026-11-26T10:05:00\.000Z\)[\s\S]*hints \(IPv4\): not given — .*2 ready endpoints cannot cover 3 zones/],
    ['diff', ['diff', 'first', 'latest'], /From seq 1 .* to seq 18 .*: 2 services changed/],
    ['dlq on a file without dead letters', ['dlq'], /^no dead letters\n$/],
    ['help', ['--help'], /^Usage: slicemesh log <command>/],
  ])('%s', async (_name, argv, want) => {
    const r = await runCli(['log', ...argv, ...(argv[0] === '--help' ? [] : ['-f', file])]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(want);
  });

  it.each([
    ['no command', [], /^slicemesh: log needs a command \(one of history, at, why, diff, dlq, export\)/],
    ['an unknown command', ['replay'], /^slicemesh: unknown log command "replay"/],
    ['a Service not written ns/name', ['history', 'web'], /^slicemesh: a Service is written <namespace>\/<name>/],
    ['why without --node', ['why', 'shop/web'], /^slicemesh: log why needs --node NAME/],
    ['a flag of another command', ['history', 'shop/web', '--node', 'x'], /^slicemesh: flag --node does not apply to log history/],
    ['a bad --output', ['at', '3', '--output', 'yaml'], /^slicemesh: --output must be text or json/],
    ['a missing argument', ['diff', '3'], /^slicemesh: log diff needs 2 arguments/],
    ['a point that is no point', ['at', 'soon'], /^slicemesh: a point is a sequence number, an RFC 3339 time, "first" or "latest"; got "soon"/],
    ['redrive on a file', ['dlq', 'redrive', '--all'], /^slicemesh: log dlq redrive publishes to the live streams; it does not work on a file/],
    ['a missing file', ['at', 'latest', '-f', '/nonexistent.slog'], /^slicemesh: cannot read \/nonexistent\.slog/],
  ])('%s: one line on stderr, exit 2', async (_name, argv, want) => {
    const r = await runCli(['log', ...argv, ...(argv.includes('-f') ? [] : ['-f', file])]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(want);
    expect(r.stderr.split('\n')).toHaveLength(2);
  });
});
