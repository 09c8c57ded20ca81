import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withJetStream } from '../testing/jetstream.ts';
import type { JetStreamFixture } from '../testing/jetstream.ts';
import { publishAcked, publishDeadLetter } from './publish.ts';
import { PublishError, WrongLastSequenceError } from './errors.ts';
import { DEAD_LETTER_MAX_OBJECT_BYTES } from '@slicemesh/contracts';
import type { DeadLetterBody } from '@slicemesh/contracts';
import { ensureStreams } from './streams.ts';
import { dlqSubject, kubeObjectSubject, slicesSubject } from '@slicemesh/contracts';

// One fixture (unique streams) for the file; every test uses its own subjects and msgIDs.
let f: JetStreamFixture;
beforeAll(async () => {
  f = await withJetStream();
  await ensureStreams(f.jsm, f.names);
});
afterAll(async () => {
  await f.cleanup();
});

async function lastBody(stream: string, subject: string): Promise<unknown> {
  const m = await f.jsm.streams.getMessage(stream, { last_by_subj: subject });
  return m?.json();
}

describe('publishAcked', () => {
  it('stores the JSON payload with its msgID and returns the sequence', async () => {
    const subject = kubeObjectSubject({ cluster: 'c', partition: 0, kind: 'Pod', namespace: 'n', name: 'p1' }, f.names);
    const r = await publishAcked(f.js, subject, { type: 'Upserted.v1', n: 1 }, { msgID: 'c/uid-1/10' });
    expect(r).toMatchObject({ duplicate: false, stream: f.names.kube });
    const m = await f.jsm.streams.getMessage(f.names.kube, { seq: r.seq });
    expect(m?.json()).toEqual({ type: 'Upserted.v1', n: 1 });
    expect(m?.header.get('Nats-Msg-Id')).toBe('c/uid-1/10');
  });

  it('habit 4: a repeated msgID is a duplicate with the first sequence, and is not stored twice', async () => {
    const subject = kubeObjectSubject({ cluster: 'c', partition: 0, kind: 'Pod', namespace: 'n', name: 'p2' }, f.names);
    const first = await publishAcked(f.js, subject, { v: 1 }, { msgID: 'c/uid-2/5' });
    const again = await publishAcked(f.js, subject, { v: 'ignored' }, { msgID: 'c/uid-2/5' });
    expect(again).toEqual({ seq: first.seq, duplicate: true, stream: f.names.kube });
    expect(await lastBody(f.names.kube, subject)).toEqual({ v: 1 });
  });

  it('expectLastSubjectSequence: 0 requires an empty subject, then the last sequence must match', async () => {
    const subject = slicesSubject({ cluster: 'c', partition: 0, namespace: 'n', service: 'expect-ok' }, f.names);
    const a = await publishAcked(f.js, subject, { i: 1 }, { msgID: 'c/outbox/1', expectLastSubjectSequence: 0 });
    const b = await publishAcked(f.js, subject, { i: 2 }, { msgID: 'c/outbox/2', expectLastSubjectSequence: a.seq });
    expect(b.seq).toBeGreaterThan(a.seq);
  });

  it('expectLastSubjectSequence mismatch throws WrongLastSequenceError and stores nothing', async () => {
    const subject = slicesSubject({ cluster: 'c', partition: 0, namespace: 'n', service: 'expect-bad' }, f.names);
    const a = await publishAcked(f.js, subject, { i: 1 }, { msgID: 'c/outbox/10' });
    const err = await publishAcked(f.js, subject, { i: 2 }, { msgID: 'c/outbox/11', expectLastSubjectSequence: a.seq + 1000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WrongLastSequenceError);
    expect((err as WrongLastSequenceError).expected).toBe(a.seq + 1000);
    expect(await lastBody(f.names.slices, subject)).toEqual({ i: 1 });
  });

  it('a retried publish with expectations is recognised as a duplicate, not a conflict (relay after a lost ack)', async () => {
    const subject = slicesSubject({ cluster: 'c', partition: 0, namespace: 'n', service: 'retry' }, f.names);
    const a = await publishAcked(f.js, subject, { i: 1 }, { msgID: 'c/outbox/20', expectLastSubjectSequence: 0 });
    const again = await publishAcked(f.js, subject, { i: 1 }, { msgID: 'c/outbox/20', expectLastSubjectSequence: 0 });
    expect(again).toMatchObject({ seq: a.seq, duplicate: true });
  });

  it('a subject no stream captures fails with PublishError after its retries', async () => {
    const err = await publishAcked(f.js, `${f.names.prefix}nowhere.x`, {}, { msgID: 'x', retries: 1, backoffMs: 1, timeoutMs: 500 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PublishError);
    expect((err as PublishError).retriesExhausted).toBe(true);
    expect((err as PublishError).message).toMatch(/after 2 attempts/);
  });

  it('a payload that is not JSON-encodable throws PublishError without publishing', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    const subject = `${f.names.prefix}kube.c.node.cyclic`;
    await expect(publishAcked(f.js, subject, cyclic, { msgID: 'cyc' })).rejects.toThrow(PublishError);
    await expect(publishAcked(f.js, subject, undefined, { msgID: 'undef' })).rejects.toThrow(/not JSON-encodable/);
    await expect(f.jsm.streams.getMessage(f.names.kube, { last_by_subj: subject })).resolves.toBeNull();
  });
});

describe('publishDeadLetter', () => {
  const cases = [
    { name: 'a small object is kept whole as its JSON text', object: { kind: 'Pod', metadata: { name: 'p' } }, truncated: false },
    { name: 'raw text (an unparsable body) is kept as received', object: '{"kind": "Pod", oops', truncated: false },
    { name: 'an object over 64 KiB is cut to 64 KiB', object: { data: 'x'.repeat(100_000) }, truncated: true },
    { name: 'multi-byte text is cut at a character boundary', object: 'é'.repeat(40_000), truncated: true },
  ];
  for (const [i, tc] of cases.entries()) {
    it(tc.name, async () => {
      const subject = dlqSubject('c', `watcher${i}`, f.names);
      const r = await publishDeadLetter(f.js, subject, { reason: 'spec.ports[0].port: must be 1..65535', field: 'spec.ports[0].port', object: tc.object, subject: 'kube.c.0.pod.n.p', at: '2024-01-02T03:04:05Z' });
      expect(r.duplicate).toBe(false);
      const body = (await lastBody(f.names.dlq, subject)) as DeadLetterBody;
      const full = typeof tc.object === 'string' ? tc.object : JSON.stringify(tc.object);
      const fullBytes = new TextEncoder().encode(full).length;
      expect(body).toMatchObject({ reason: 'spec.ports[0].port: must be 1..65535', field: 'spec.ports[0].port', subject: 'kube.c.0.pod.n.p', at: '2024-01-02T03:04:05Z', truncated: tc.truncated, objectBytes: fullBytes });
      expect(new TextEncoder().encode(body.object).length).toBeLessThanOrEqual(DEAD_LETTER_MAX_OBJECT_BYTES);
      expect(full.startsWith(body.object)).toBe(true);
      if (!tc.truncated) expect(body.object).toBe(full);
      else expect(body.object.length).toBeGreaterThan(DEAD_LETTER_MAX_OBJECT_BYTES / 2 - 2);
      expect(body.object).not.toContain('\uFFFD');
    });
  }

  it('the same rejection redelivered is stored once (content-derived msgID)', async () => {
    const subject = dlqSubject('c', 'slicer', f.names);
    const letter = { reason: 'bad', object: { a: 1 }, subject: 'kube.c.0.pod.n.q' };
    const a = await publishDeadLetter(f.js, subject, { ...letter, at: '2024-01-01T00:00:00Z' });
    const b = await publishDeadLetter(f.js, subject, { ...letter, at: '2024-01-01T00:00:09Z' });
    expect(b).toEqual({ ...a, duplicate: true });
  });
});
