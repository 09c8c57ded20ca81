import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNats } from './connect.ts';
import { jetstreamManager } from './js-domain.ts';
import { ensureKv } from './streams.ts';
import { findNatsServerBinary, freeLocalPort, startLocalNatsCluster } from './local-cluster.ts';
import type { LocalNatsCluster } from './local-cluster.ts';
import { kvGetJson, kvPutJson, openKv } from './kv.ts';

// A hub and a leaf with JetStream domains of their own: a client of the hub that names the leaf's
// domain (NATS_JS_DOMAIN) makes and reads the leaf's buckets, as a service running centrally would.
describe.skipIf(findNatsServerBinary() === undefined)('a connection with a JetStream domain', () => {
  const dir = mkdtempSync(join(tmpdir(), 'js-domain-'));
  let hub: LocalNatsCluster;
  let leaf: LocalNatsCluster;
  beforeAll(async () => {
    const leafPort = await freeLocalPort();
    hub = await startLocalNatsCluster({ size: 1, dir: join(dir, 'hub'), namePrefix: 'hub', config: `jetstream { domain: hub }\nleafnodes { listen: "127.0.0.1:${leafPort}" }` });
    leaf = await startLocalNatsCluster({ size: 1, dir: join(dir, 'leaf'), namePrefix: 'leaf', config: `jetstream { domain: a }\nleafnodes { remotes: [ { url: "nats-leaf://127.0.0.1:${leafPort}" } ] }` });
  });
  afterAll(async () => {
    await leaf?.stop();
    await hub?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("creates and reads buckets in the named domain, not on the server it is connected to", async () => {
    const central = await connectNats({ url: hub.url, name: 'central', jsDomain: 'a' });
    const local = await connectNats({ url: leaf.url, name: 'local' });
    try {
      // The leaf link may take a moment after start.
      let kv;
      for (let i = 0; ; i++) {
        try {
          kv = await ensureKv(central, 'views_domain_test');
          break;
        } catch (err) {
          if (i > 50) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      await kvPutJson(kv, 'k', { from: 'hub' });
      expect(await kvGetJson(await openKv(local, 'views_domain_test'), 'k')).toEqual({ from: 'hub' });
      const own = await connectNats({ url: hub.url, name: 'hub-own' });
      await expect((await jetstreamManager(own)).streams.info('KV_views_domain_test')).rejects.toThrow(/stream not found/);
      await own.close();
      expect((await (await jetstreamManager(central)).getAccountInfo()).streams).toBe(1);
    } finally {
      await central.close();
      await local.close();
    }
  });
});
