// NATS_REPLICAS against real servers started by the test (ports of its own): a 3-server
// JetStream cluster and a single server.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamManager } from '@nats-io/jetstream';
import { nuid } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNats } from './connect.ts';
import { ReplicasUnavailableError } from './errors.ts';
import { startLocalNatsCluster } from './local-cluster.ts';
import type { LocalNatsCluster } from './local-cluster.ts';
import { ensureKv, ensureStreams } from './streams.ts';
import type { BackboneNames, ReplicasChange } from './streams.ts';

function uniqueNames(): BackboneNames {
  const id = nuid.next();
  return { kube: `KUBE_${id}`, slices: `SLICES_${id}`, dlq: `DLQ_${id}`, events: `EVENTS_${id}`, prefix: `t${id}.`, svc: `svc_${id}`, views: `views_${id}`, hinted: `hinted_${id}` };
}

/** Servers that hold `stream`: its leader and replicas. */
async function placement(jsm: JetStreamManager, stream: string): Promise<string[]> {
  const info = await jsm.streams.info(stream);
  return [info.cluster?.leader ?? '', ...(info.cluster?.replicas ?? []).map((r) => r.name)].filter((n) => n !== '').sort();
}

let dir: string;
let cluster: LocalNatsCluster;
let single: LocalNatsCluster;
let nc: NatsConnection;
let jsm: JetStreamManager;
let ncSingle: NatsConnection;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'nats-replicas-'));
  [cluster, single] = await Promise.all([startLocalNatsCluster({ size: 3, dir: join(dir, 'cluster') }), startLocalNatsCluster({ size: 1, dir: join(dir, 'single') })]);
  await cluster.waitForMeta();
  nc = await connectNats({ url: cluster.url, name: 'replicas-test' });
  jsm = await jetstreamManager(nc);
  ncSingle = await connectNats({ url: single.url, name: 'replicas-test-single' });
});

afterAll(async () => {
  await nc?.close();
  await ncSingle?.close();
  await Promise.all([cluster?.stop(), single?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('NATS_REPLICAS on a 3-server cluster', () => {
  it('creates every stream and bucket with 3 replicas, one on each server', async () => {
    const names = uniqueNames();
    const streams = await ensureStreams(jsm, names, { replicas: 3 });
    for (const info of [streams.kube, streams.slices, streams.dlq, streams.events!]) expect(info.config.num_replicas).toBe(3);
    for (const bucket of [names.svc, names.views, names.hinted]) {
      const kv = await ensureKv(nc, bucket, { replicas: 3 });
      expect((await kv.status()).streamInfo.config.num_replicas).toBe(3);
    }
    const all = cluster.servers.map((s) => s.name).sort();
    for (const stream of [names.kube, names.slices, names.dlq, names.events!, `KV_${names.svc}`, `KV_${names.views}`, `KV_${names.hinted}`]) {
      expect(await placement(jsm, stream)).toEqual(all);
    }
  });

  it('updates an existing R1 stream and bucket to R3 in place, keeping their messages, and says so', async () => {
    const names = uniqueNames();
    await ensureStreams(jsm, names);
    const kv1 = await ensureKv(nc, names.svc);
    await jsm.jetstream().publish(`${names.prefix}kube.c1.x`, 'kept').catch(() => undefined);
    await kv1.put('k', 'v');
    expect((await jsm.streams.info(names.kube)).config.num_replicas).toBe(1);
    const before = (await jsm.streams.info(names.kube)).state.messages;

    const changes: ReplicasChange[] = [];
    const streams = await ensureStreams(jsm, names, { replicas: 3, onReplicasChanged: (c) => changes.push(c) });
    expect(streams.kube.config.num_replicas).toBe(3);
    const kv3 = await ensureKv(nc, names.svc, { replicas: 3, onReplicasChanged: (c) => changes.push(c) });
    expect(changes).toEqual([
      { stream: names.kube, from: 1, to: 3 },
      { stream: names.slices, from: 1, to: 3 },
      { stream: names.dlq, from: 1, to: 3 },
      { stream: names.events, from: 1, to: 3 },
      { stream: `KV_${names.svc}`, from: 1, to: 3 },
    ]);
    expect((await kv3.status()).streamInfo.config.num_replicas).toBe(3);
    expect((await kv3.get('k'))?.string()).toBe('v');
    expect((await jsm.streams.info(names.kube)).state.messages).toBe(before);
    // Idempotent: a second start changes nothing, and neither does one without the setting
    // (a service started without NATS_REPLICAS must not take them back to one copy).
    changes.length = 0;
    await ensureStreams(jsm, names, { replicas: 3, onReplicasChanged: (c) => changes.push(c) });
    await ensureKv(nc, names.svc, { replicas: 3, onReplicasChanged: (c) => changes.push(c) });
    await ensureStreams(jsm, names, { onReplicasChanged: (c) => changes.push(c) });
    await ensureKv(nc, names.svc, { onReplicasChanged: (c) => changes.push(c) });
    expect(changes).toEqual([]);
    expect((await jsm.streams.info(names.kube)).config.num_replicas).toBe(3);
    expect((await jsm.streams.info(`KV_${names.svc}`)).config.num_replicas).toBe(3);
    const all = cluster.servers.map((s) => s.name).sort();
    await expect.poll(() => placement(jsm, names.kube), { timeout: 10_000 }).toEqual(all);
  });

  it('refuses more replicas than servers, saying what to do', async () => {
    const names = uniqueNames();
    const err = await ensureStreams(jsm, names, { replicas: 5 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ReplicasUnavailableError);
    expect((err as ReplicasUnavailableError).problem).toBe('too-few-servers');
    expect((err as Error).message).toContain('NATS_REPLICAS=5 needs at least 5 JetStream servers up in the cluster');
  });
});

describe('NATS_REPLICAS on a single server', () => {
  it('refuses 3 replicas for a new stream, a new bucket and an existing R1 stream, with the message', async () => {
    const js1 = await jetstreamManager(ncSingle);
    const message = 'NATS_REPLICAS=3 needs a JetStream cluster of at least 3 servers; this server is not clustered';
    const names = uniqueNames();
    await expect(ensureStreams(js1, names, { replicas: 3 })).rejects.toThrow(message);
    await expect(ensureKv(ncSingle, names.views, { replicas: 3 })).rejects.toThrow(message);

    const existing = uniqueNames();
    await ensureStreams(js1, existing);
    const err = await ensureStreams(js1, existing, { replicas: 3 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ReplicasUnavailableError);
    expect((err as Error).message).toContain(message);
    expect((err as Error).message).toContain(`updating stream ${existing.kube} from 1 to 3 replicas`);
    expect((err as Error).message).toContain('Set NATS_REPLICAS=1');
    await ensureKv(ncSingle, existing.svc);
    await expect(ensureKv(ncSingle, existing.svc, { replicas: 3 })).rejects.toThrow(message);
    expect((await js1.streams.info(existing.kube)).config.num_replicas).toBe(1);
  });
});
