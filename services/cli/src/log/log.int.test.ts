// `slicemesh log` against a recorded log with known history: the scenario of
// libs/history/testing/scenario.ts published event by event to a real KUBE stream, with the real
// slicer consuming it into a real Postgres schema. Checked: a replayed past state equals what the
// slicer had at that sequence (its SLICES messages), every command gives the same output on the
// live log and on its export, and dead letters can be listed, shown and redriven.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SliceChangedMessage } from '@slicemesh/contracts';
import { dlqSubject } from '@slicemesh/contracts';
import { loadSlices } from '@slicemesh/db';
import { openLogFile, resolvePoint, sliceText, stateAt } from '@slicemesh/history';
import type { EndpointSlice } from '@slicemesh/model';
import { publishDeadLetter } from '@slicemesh/nats';
import type { Slicer } from '@slicemesh/slicer';
import { startSlicer } from '@slicemesh/slicer';
import { makePod } from '@slicemesh/testing';
import { scenarioSteps } from '../../../../libs/history/testing/scenario.ts';
import type { Stack } from '../../../slicer/src/testing/stack.ts';
import { withStack } from '../../../slicer/src/testing/stack.ts';
import { atVersion, envelopeOf, subjectOf } from '../../../slicer/src/testing/kube-events.ts';
import { runCli } from '../test-io.ts';
import { openLiveLog } from './live-log.ts';

let s: Stack;
let slicer: Slicer;
let live: string[];
const dir = mkdtempSync(join(tmpdir(), 'slog-int-'));
const web8 = atVersion(makePod('web-8', { namespace: 'shop', labels: { app: 'web' }, ips: ['10.1.0.8'], nodeName: 'worker-c-1' }), 100);

beforeAll(async () => {
  s = await withStack();
  slicer = startSlicer(s.config());
  await slicer.ready;
  // One event at a time, each consumed and reconciled before the next: live reconciles per event.
  for (const step of scenarioSteps()) {
    await s.publish(step.object, Number(step.object.metadata.resourceVersion), { type: step.type });
    await s.settled(s.config(), slicer);
  }
  // A pod an older slicer rejected: kept in the DLQ with its subject and whole message.
  await publishDeadLetter(s.js.js, dlqSubject('c1', 'slicer', { prefix: s.js.names.prefix }), {
    reason: 'rejected by a slicer with a bug since fixed',
    field: 'object.status.podIP',
    subject: subjectOf(web8, { prefix: s.js.names.prefix }),
    object: JSON.stringify(envelopeOf(web8)),
  });
  const n = s.js.names;
  live = ['--nats-url', s.js.url, '--database-url', s.db.url, '--db-schema', s.db.schema, '--cluster', 'c1', '--kube-stream', n.kube, '--dlq-stream', n.dlq, '--subject-prefix', n.prefix];
}, 120_000);

afterAll(async () => {
  await slicer?.close();
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (...argv: string[]) => runCli(['log', ...argv]);

// Keys sorted (Postgres' jsonb reorders them), trigger-time annotation left out (sliceText).
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]));
  return v;
}
const comparable = (slices: Iterable<EndpointSlice>): unknown[] => [...slices].map((x) => canonical(JSON.parse(sliceText(x))));

describe('slicemesh log on a live log', () => {
  it('replays every past state the slicer published: each SLICES message equals the replay at its KUBE sequence', async () => {
    const messages = (await s.read(s.js.names.slices, `${s.js.names.prefix}slices.>`)).map((m) => m.data as SliceChangedMessage);
    expect(messages.length).toBeGreaterThan(10);
    const src = await openLiveLog({ natsUrl: s.js.url, databaseUrl: s.db.url, schema: s.db.schema, cluster: 'c1', names: s.js.names });
    try {
      const had = new Map<string, Map<string, EndpointSlice>>();
      for (const m of messages) {
        const key = `${m.namespace}/${m.service}`;
        const slices = had.get(key) ?? new Map<string, EndpointSlice>();
        had.set(key, slices);
        for (const u of m.upserts) slices.set(u.metadata.name, u);
        for (const d of m.deletes) slices.delete(d);
        const seq = Math.max(m.kubeSeq?.to ?? 0, m.kubeSeq?.nodesTo ?? 0);
        const state = await stateAt(src, await resolvePoint(src, String(seq)));
        const replayed = state.services.find((x) => `${x.namespace}/${x.name}` === key)?.ownSlices ?? [];
        expect({ seq, key, slices: comparable(replayed) }).toEqual({ seq, key, slices: comparable(slices.values()) });
      }
      // And the end state is what Postgres holds.
      const end = await stateAt(src, await resolvePoint(src, 'latest'));
      const stored = await loadSlices(s.db.db, 'c1', 'shop', 'web');
      expect(comparable(end.services.find((x) => x.name === 'web')?.ownSlices ?? [])).toEqual(comparable(stored));
    } finally {
      await src.close();
    }
  });

  it.each([
    ['history names the causes', ['history', 'shop/web'], /because pod shop\/web-7 became Ready on worker-b-1[\s\S]*because node worker-a-1 moved to zone-c from zone-a/],
    ['at a sequence shows that state', ['at', '11'], /10\.1\.0\.7 not ready on worker-b-1/],
    ['at --node shows what the node programs', ['at', 'latest', '--node', 'worker-b-1'], /shop\/web:http\/TCP\n {4}cluster: 10\.1\.0\.5:8080, 10\.1\.0\.7:8080/],
    ['why explains the zone hints', ['why', '--node', 'worker-b-1', 'shop/web'], /SKIPS {3}10\.1\.0\.3:8080 pod shop\/web-3 on worker-c-1, zone-c\n {11}- ready\n {11}- not used for cluster traffic: hinted for zone-c, not zone-b/],
    ['diff lists what changed', ['diff', '12', 'latest'], /shop\/api \(added\)[\s\S]*shop\/web \(changed\)[\s\S]*endpoints: removed 10\.1\.0\.1/],
    ['dlq lists dead letters with their reasons', ['dlq'], /\tslicer\t.*pod\.shop\.web-8\trejected by a slicer with a bug since fixed \(field object\.status\.podIP\)/],
  ])('%s', async (_name, argv, want) => {
    const r = await cli(...argv, ...live);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(want);
  });

  it('dlq show prints one dead letter whole', async () => {
    const list = JSON.parse((await cli('dlq', 'list', '--output', 'json', ...live)).stdout) as { seq: number }[];
    const r = await cli('dlq', 'show', String(list[0]?.seq), ...live);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ stage: 'slicer', body: { reason: 'rejected by a slicer with a bug since fixed', truncated: false } });
  });

  it('gives the same output for every command on its export as on the live log (the incident on a laptop)', async () => {
    const file = join(dir, 'incident.slog.gz');
    const exported = await cli('export', '-o', file, ...live);
    expect(exported.code).toBe(0);
    expect(exported.stderr).toMatch(/exported 18 events after a snapshot at seq 0 \(0 objects, 0 slices\) and 1 dead letters/);
    expect((await openLogFile(file)).info.complete).toBe(true);
    const commands = [
      ['history', 'shop/web'],
      ['history', 'shop/api', '--output', 'json'],
      ['at', '12'],
      ['at', 'latest', '--output', 'json'],
      ['at', 'latest', '--node', 'worker-b-1'],
      ['why', '--node', 'worker-b-1', 'shop/web'],
      ['why', '--node', 'worker-a-1', 'shop/api', '--at', '13'],
      ['diff', '12', 'latest'],
      ['dlq', 'list'],
    ];
    for (const argv of commands) {
      const a = await cli(...argv, ...live);
      const b = await cli(...argv, '-f', file);
      expect({ argv, code: b.code, stdout: b.stdout }).toEqual({ argv, code: a.code, stdout: a.stdout });
    }
  });

  it('an export of a stretch replays to the same states from its snapshot', async () => {
    const file = join(dir, 'stretch.slog');
    expect((await cli('export', '--from', '10', '--to', '15', '-o', file, ...live)).code).toBe(0);
    for (const p of ['10', '13', '15']) {
      const a = await cli('at', p, ...live);
      const b = await cli('at', p, '-f', file);
      expect(b.stdout).toBe(a.stdout);
    }
  });

  it('redrives a dead letter after the fix: its message goes back on its subject and the slicer takes it; a second redrive changes nothing', async () => {
    const seq = String((JSON.parse((await cli('dlq', 'list', '--output', 'json', ...live)).stdout) as { seq: number }[])[0]?.seq);
    expect((await cli('dlq', 'redrive', seq, '-f', join(dir, 'incident.slog.gz'))).code).toBe(2);
    const r = await cli('dlq', 'redrive', seq, ...live);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`dead letter ${seq}: republished to .*kube\\.c1\\.0\\.pod\\.shop\\.web-8 \\(stream seq 19\\)\\nredrove 1 of 1 dead letter;`));
    await s.settled(s.config(), slicer);
    expect((await s.slices('web', 'shop')).flatMap((x) => x.endpoints.flatMap((e) => e.addresses))).toContain('10.1.0.8');
    expect((await cli('at', 'latest', ...live)).stdout).toMatch(/10\.1\.0\.8 ready on worker-c-1/);
    const again = await cli('dlq', 'redrive', seq, ...live);
    expect(again.stdout).toMatch(new RegExp(`dead letter ${seq}: not republished: already redriven`));
  });

  it.each([
    ['an unreachable NATS', ['at', 'latest', '--nats-url', 'nats://127.0.0.1:9'], /^slicemesh: cannot open the live log \(NATS nats:\/\/127\.0\.0\.1:9(, Postgres)?\): NATS not reachable.*use -f FILE for an exported log\n$/],
    ['an unknown Service', ['why', '--node', 'worker-b-1', 'shop/none'], /^slicemesh: service shop\/none is not in the log at sequence \d+\n$/],
    ['a point before the log', ['at', '2020-01-01T00:00:00Z'], /^slicemesh: 2020-01-01T00:00:00Z is before the log's first event/],
  ])('%s: one line, exit 2', async (_name, argv, want) => {
    const r = await cli(...argv, ...(argv.includes('--nats-url') ? [] : live));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(want);
  });
});
