import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roleCredentials, roleSeedFile, writeNatsAuth } from './auth-files.ts';
import { connectNats } from './connect.ts';
import { NatsAuthorizationError } from './errors.ts';
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
    const nc = await connectNats({ url: cluster.url, name: 'local-cluster-test', reconnectWaitMs: 100 });
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
      // The client may have been on the killed server: requests answer again once it has moved.
      await expect.poll(async () => (await jsm.streams.info('R3TEST').catch(() => undefined))?.state.messages, { timeout: 15_000 }).toBe(1);
    } finally {
      await nc.close();
    }
  });

  it('connectNats takes the whole list and moves to another server when its own is killed', async () => {
    await cluster.waitForMeta(); // the server restarted above is back in the meta group
    const nc = await connectNats({ url: cluster.url, name: 'local-cluster-failover', reconnectWaitMs: 100 });
    try {
      // The client was given every server and retries forever.
      const opts = (nc as unknown as { options: { servers: string[]; maxReconnectAttempts: number } }).options;
      expect([...opts.servers].sort()).toEqual(cluster.servers.map((s) => `127.0.0.1:${s.port}`).sort());
      expect(opts.maxReconnectAttempts).toBe(-1);
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: 'FAILOVER', subjects: ['failover.>'], num_replicas: 3 });
      const first = nc.getServer();
      const victim = cluster.servers.find((s) => first.endsWith(`:${s.port}`))!;
      await victim.kill('SIGKILL');
      await expect.poll(() => nc.getServer(), { timeout: 10_000 }).not.toBe(first);
      // The R3 stream still takes messages with one server of three gone.
      await expect.poll(async () => (await jsm.jetstream().publish('failover.a', 'x')).seq, { timeout: 15_000 }).toBe(1);
      await victim.start();
    } finally {
      await nc.close();
    }
  });
  it('names the clients connected to each server (its monitoring port)', async () => {
    const nc = await connectNats({ url: cluster.servers[2]!.url, name: 'local-cluster-named' });
    try {
      await expect.poll(async () => cluster.servers[2]!.clientNames(), { timeout: 5000 }).toContain('local-cluster-named');
      expect(await cluster.servers[0]!.clientNames()).not.toContain('local-cluster-named');
    } finally {
      await nc.close();
    }
  });
});

describe('startLocalNatsCluster locked down', () => {
  it('starts a server with the authorization block: its admin probe gets in, a client without credentials does not', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'local-locked-'));
    const auth = writeNatsAuth({ dir: join(dir, 'auth'), scope: { cluster: 'c1' } });
    const server = await startLocalNatsCluster({ size: 1, dir, authorization: { block: readFileSync(auth.authConf, 'utf8'), seedFile: roleSeedFile(auth.dir, 'admin') } });
    try {
      await expect(connectNats({ url: server.url, name: 'no-credentials', timeoutMs: 2000 })).rejects.toBeInstanceOf(NatsAuthorizationError);
      const nc = await connectNats({ url: server.url, name: 'watcher', timeoutMs: 2000, ...roleCredentials(auth.dir, 'watcher') });
      try {
        const jsm = await jetstreamManager(nc);
        expect((await jsm.getAccountInfo()).streams).toBe(0);
      } finally {
        await nc.close();
      }
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
