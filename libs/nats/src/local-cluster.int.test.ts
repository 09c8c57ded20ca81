import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNats } from './connect.ts';
import { startLocalNatsCluster } from './local-cluster.ts';
import type { LocalNatsCluster } from './local-cluster.ts';

describe('startLocalNatsCluster', () => {
  let dir: string;
  let cluster: LocalNatsCluster;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'local-cluster-'));
    cluster = await startLocalNatsCluster({ size: 3, dir });
    await cluster.waitForMeta();
  });
  afterAll(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('forms a 3-server cluster that holds an R3 stream, which survives one server killed and restarted', async () => {
    expect(cluster.urls).toHaveLength(3);
    expect(cluster.url).toBe(cluster.urls.join(','));
    expect(new Set(cluster.servers.map((s) => s.pid)).size).toBe(3);
    const nc = await connectNats({ url: cluster.url, name: 'local-cluster-test' });
    try {
      const jsm = await jetstreamManager(nc);
      const info = await jsm.streams.add({ name: 'R3TEST', subjects: ['r3test.>'], num_replicas: 3 });
      expect(info.config.num_replicas).toBe(3);
      const js = jsm.jetstream();
      await js.publish('r3test.a', 'one');
      const placed = await jsm.streams.info('R3TEST');
      const members = [placed.cluster?.leader, ...(placed.cluster?.replicas ?? []).map((r) => r.name)].sort();
      expect(members).toEqual(cluster.servers.map((s) => s.name).sort());

      const victim = cluster.servers[1]!;
      await victim.kill('SIGKILL');
      expect(victim.running).toBe(false);
      expect(victim.pid).toBeUndefined();
      await victim.start();
      expect(victim.running).toBe(true);
      const after = await jsm.streams.info('R3TEST');
      expect(after.state.messages).toBe(1);
    } finally {
      await nc.close();
    }
  });
});
