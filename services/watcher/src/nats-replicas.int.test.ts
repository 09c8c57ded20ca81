// NATS_REPLICAS as the watcher reads it: R3 streams on a 3-server cluster started by the test,
// and a refusal to start on a single server.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectNats, jetstreamManager, startLocalNatsCluster } from '@slicemesh/nats';
import { describe, expect, it } from 'vitest';
import { watcherConfig } from './config.ts';
import { startWatcher } from './start-watcher.ts';


function envFor(natsUrl: string, replicas: number): Record<string, string> {
  const id = randomBytes(6).toString('hex');
  return { NATS_URL: natsUrl, NATS_REPLICAS: String(replicas), KUBE_SERVER: 'http://127.0.0.1:1', KUBE_STREAM: `KUBE_${id}`, SLICES_STREAM: `SLICES_${id}`, DLQ_STREAM: `DLQ_${id}`, SUBJECT_PREFIX: `t${id}.`, LOG_LEVEL: 'silent' };
}

describe('watcher NATS_REPLICAS', () => {
  it('on a single server, NATS_REPLICAS=3 refuses to start, saying what to do', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'watcher-r1-'));
    const single = await startLocalNatsCluster({ size: 1, dir });
    try {
      const w = startWatcher(watcherConfig.parse([], envFor(single.url, 3)));
      await expect(w.ready).rejects.toThrow('NATS_REPLICAS=3 needs a JetStream cluster of at least 3 servers; this server is not clustered');
      await w.close().catch(() => {});
    } finally {
      await single.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('on a 3-server cluster, NATS_REPLICAS=3 creates KUBE, SLICES and DLQ with 3 replicas', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'watcher-r3-'));
    const cluster = await startLocalNatsCluster({ size: 3, dir });
    try {
      await cluster.waitForMeta();
      const env = envFor(cluster.url, 3);
      const w = startWatcher(watcherConfig.parse([], env));
      // The API server is unreachable: the streams are declared before the watcher lists.
      const nc = await connectNats({ url: cluster.url, name: 'watcher-r3-test' });
      try {
        const jsm = await jetstreamManager(nc);
        for (const stream of [env['KUBE_STREAM']!, env['SLICES_STREAM']!, env['DLQ_STREAM']!]) {
          await expect.poll(async () => (await jsm.streams.info(stream).catch(() => undefined))?.config.num_replicas, { timeout: 20_000 }).toBe(3);
        }
      } finally {
        await nc.close();
        await w.close().catch(() => {});
      }
    } finally {
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
