import { afterEach, describe, expect, it } from 'vitest';
import { NO_SERVER_MESSAGE, withJetStream } from './jetstream.ts';
import type { JetStreamFixture } from './jetstream.ts';
import { ensureKv, ensureStreams } from '../src/streams.ts';

describe('withJetStream', () => {
  const fixtures: JetStreamFixture[] = [];
  afterEach(async () => {
    for (const f of fixtures.splice(0)) await f.cleanup();
  });

  it('hands out names no other call uses, valid as stream names and subject prefix', async () => {
    const a = await withJetStream();
    const b = await withJetStream();
    fixtures.push(a, b);
    expect(a.id).not.toBe(b.id);
    for (const f of [a, b]) {
      expect(f.names.kube).toMatch(/^KUBE_[A-Za-z0-9]+$/);
      expect(f.names.prefix).toMatch(/^t[A-Za-z0-9]+\.$/);
      expect(f.names.svc).toMatch(/^svc_[A-Za-z0-9]+$/);
    }
    expect(new Set([a.names.kube, b.names.kube, a.names.prefix, b.names.prefix]).size).toBe(4);
  });

  it('cleanup deletes the streams and buckets it named and closes the connection', async () => {
    const f = await withJetStream();
    await ensureStreams(f.jsm, f.names);
    await ensureKv(f.nc, f.names.views);
    const probe = await withJetStream();
    fixtures.push(probe);
    await f.cleanup();
    expect(f.nc.isClosed()).toBe(true);
    for (const s of [f.names.kube, f.names.slices, f.names.dlq, `KV_${f.names.views}`]) {
      await expect(probe.jsm.streams.info(s)).rejects.toThrow(/stream not found/);
    }
  });

  it('cleanup tolerates streams the test never created', async () => {
    const f = await withJetStream();
    await expect(f.cleanup()).resolves.toBeUndefined();
  });

  it('without NATS_URL and without a container runtime, fails with one clear line', async () => {
    const err = await withJetStream({
      env: {},
      startServer: () => Promise.reject(new Error('Could not find a working container runtime strategy\n    at ...')),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    const message = (err as Error).message;
    expect(message).toContain(NO_SERVER_MESSAGE);
    expect(message).toContain('set NATS_URL or provide a Docker engine');
    expect(message).toContain('Could not find a working container runtime strategy');
    expect(message).not.toContain('\n');
  });

  it('uses the server from NATS_URL when set and starts no container', async () => {
    const first = await withJetStream();
    fixtures.push(first);
    let started = false;
    const f = await withJetStream({
      env: { NATS_URL: first.url },
      startServer: () => {
        started = true;
        return Promise.reject(new Error('must not start'));
      },
    });
    fixtures.push(f);
    expect(started).toBe(false);
    expect(f.url).toBe(first.url);
    expect(f.nc.isClosed()).toBe(false);
  });
});
