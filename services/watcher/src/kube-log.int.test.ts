// natsKubeLog against a real nats-server: the stream behaviours the watcher's "newest version
// last" rule relies on (watcher.ts) — a duplicate msgID is answered as a duplicate before the
// expected last sequence is checked, 0 expects an empty subject, a mismatch throws
// WrongLastSequenceError, and lastOf reads a subject's last message back.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KubeChangeEvent } from '@slicemesh/kube';
import { ensureStreams, WrongLastSequenceError } from '@slicemesh/nats';
import { makePod } from '@slicemesh/testing';
import { withJetStream } from '../../../libs/nats/testing/jetstream.ts';
import type { JetStreamFixture } from '../../../libs/nats/testing/jetstream.ts';
import { natsKubeLog } from './kube-log.ts';
import type { KubeLog } from './kube-log.ts';
import { eventFor } from './kube-message.ts';
import type { KubeMessage } from './kube-message.ts';

let f: JetStreamFixture;
let log: KubeLog;

beforeEach(async () => {
  f = await withJetStream();
  await ensureStreams(f.jsm, f.names);
  log = natsKubeLog(f.nc, f.names);
});

afterEach(async () => {
  await f.cleanup();
});

const layout = () => ({ partitions: 2, prefix: f.names.prefix });
const podAt = (rv: string): KubeMessage => {
  const pod = makePod('web-1', { uid: 'p1' });
  return eventFor('Upserted.v1', { ...pod, metadata: { ...pod.metadata, resourceVersion: rv } }, 'c1', 0, layout());
};
const rvOf = (e: KubeChangeEvent | undefined): string | undefined => e?.object.metadata.resourceVersion;

describe('natsKubeLog: conditional appends on a real stream', () => {
  it('expect 0 stores on an empty subject; a mismatch is refused with WrongLastSequenceError and stores nothing', async () => {
    const first = await log.publish(podAt('10'), 0);
    expect(first.duplicate).toBe(false);
    await expect(log.publish(podAt('11'), 0)).rejects.toBeInstanceOf(WrongLastSequenceError);
    const last = await log.lastOf(podAt('10').subject);
    expect([last?.seq, rvOf(last?.event)]).toEqual([first.seq, '10']);
  });

  it('a repeated msgID is answered as a duplicate (with the stored seq) whatever sequence it expects', async () => {
    const first = await log.publish(podAt('10'), 0);
    const second = await log.publish(podAt('11'), first.seq);
    const again = await log.publish(podAt('10'), 12345);
    expect(again).toMatchObject({ duplicate: true, seq: first.seq });
    expect(rvOf((await log.lastOf(podAt('10').subject))?.event)).toBe('11');
    expect(second.seq).toBeGreaterThan(first.seq);
  });

  it('lastOf is undefined for a subject KUBE holds nothing of; lastStates carries each subject last sequence', async () => {
    expect(await log.lastOf(podAt('10').subject)).toBeUndefined();
    const a = await log.publish(podAt('10'), 0);
    const b = await log.publish(podAt('11'), a.seq);
    const states = await log.lastStates('c1');
    expect(states.map((s) => [s.subject, s.seq, rvOf(s.event)])).toEqual([[podAt('10').subject, b.seq, '11']]);
  });
});
