// Multi-cluster behind NATS leafnodes, with the configurations in infra/nats as they ship, locked
// down with the keys infra/nats/auth/README.md generates: each Kubernetes cluster's watcher
// publishes into its own leaf (JetStream domains a and b) under its own subject prefix (leaf
// streams from infra/nats/leaf-*.json), the hub's KUBE stream sources both leaves' KUBE through
// their domain APIs (infra/nats/hub-kube.json), and a slicer per cluster runs centrally on the hub
// over the sourced log. Every process logs in with its role's seed: the streams are the admin's,
// each watcher its leaf's watcher, each central slicer its own cluster's slicer of the hub's
// shared block. Each leaf holds only its own cluster, the hub holds both, and each cluster's
// slices equal `slicemesh plan` of that cluster alone.

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseScenario, startClusterSim } from '@slicemesh/cluster-sim';
import type { ClusterSim } from '@slicemesh/cluster-sim';
import { withTestDb } from '@slicemesh/db/testing';
import type { TestDb } from '@slicemesh/db/testing';
import type { NatsConnection, NatsRole, StreamInfo } from '@slicemesh/nats';
import { connectNats, jetstreamManager } from '@slicemesh/nats';
import { slicerConfigWith, startSlicer } from '@slicemesh/slicer';
import type { Slicer } from '@slicemesh/slicer';
import { startWatcher, watcherConfigWith } from '@slicemesh/watcher';
import type { WatcherHandle } from '@slicemesh/watcher';
import { REPO_ROOT } from '../../services/stack/src/index.ts';
import { comparable, differences, expectedFrom, simObjects } from './support/oracle.ts';
import { natsServerBinary } from './support/nats-servers.ts';
import { copyInfraNatsLocked, startLockedServer } from './support/locked-nats-servers.ts';
import type { LockedServer } from './support/locked-nats-servers.ts';
import { quietScenario } from './support/scenarios.ts';

const binary = natsServerBinary();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function streamConfig(file: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(join(REPO_ROOT, 'infra/nats', file), 'utf8')) as Record<string, unknown>;
}

describe.skipIf(binary === undefined)('multi-cluster through a hub and leafnodes', () => {
  it('watchers publish into their leaves, the hub sources both logs, and a central slicer per cluster matches the offline plan of that cluster', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'slicemesh-leaf-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const copy = await copyInfraNatsLocked(dir);
    const start = async (conf: string, hubLeafPort?: number): Promise<LockedServer> => {
      const s = await startLockedServer(binary as string, copy, conf, hubLeafPort);
      cleanups.push(() => s.stop());
      return s;
    };
    const hub = await start('hub.conf');
    const leaves = { a: await start('leaf-a.conf', hub.leafPort), b: await start('leaf-b.conf', hub.leafPort) };
    /** A connection of `role` to `server` with that role's seed (`cluster`'s, on the hub). */
    const as = async (server: LockedServer, role: NatsRole, name: string, cluster?: string): Promise<NatsConnection> => {
      const nc = await connectNats({ url: server.url, name, nkeySeedFile: server.seedOf(role, cluster), role });
      cleanups.push(() => nc.close());
      return nc;
    };
    expect(hub.sharedBy).toEqual(['cluster-a', 'cluster-b']);

    // Per leaf: its streams (the cluster's prefix, KUBE and DLQ only), a simulated cluster and a
    // watcher that does not declare streams itself.
    const clusters = [
      { id: 'cluster-a', domain: 'a', leaf: leaves.a },
      { id: 'cluster-b', domain: 'b', leaf: leaves.b },
    ];
    const sims = new Map<string, ClusterSim>();
    const leafCounts: number[] = [];
    for (const c of clusters) {
      const lnc = await as(c.leaf, 'admin', 'leaf-admin');
      const ljsm = await jetstreamManager(lnc);
      for (const f of ['leaf-kube.json', 'leaf-dlq.json']) {
        const conf = await streamConfig(f);
        await ljsm.streams.add({ ...conf, subjects: (conf['subjects'] as string[]).map((x) => x.replace(/^a\./, `${c.domain}.`)) } as never);
      }
      const sim = await startClusterSim({ scenario: parseScenario(quietScenario(`mc-${c.id}`), c.id) });
      cleanups.push(() => sim.close());
      sims.set(c.id, sim);
      const w: WatcherHandle = startWatcher(
        watcherConfigWith({ cluster: c.id, kubeServer: sim.url, natsUrl: c.leaf.url, natsNkeySeedFile: c.leaf.seedOf('watcher'), subjectPrefix: `${c.domain}.`, ensureStreams: false, partitions: 1, logLevel: 'silent', healthPort: 0 }),
      );
      cleanups.push(() => w.close());
      await w.ready;
    }
    await new Promise((r) => setTimeout(r, 500)); // let the pods' readiness updates land
    for (const c of clusters) {
      // The reader's seed reads the stream's state.
      const lnc = await as(c.leaf, 'reader', 'leaf-count');
      const kube = await (await jetstreamManager(lnc)).streams.info('KUBE', { subjects_filter: '>' });
      // Disjoint prefixes: a leaf's stream captures its own cluster only, nothing of the other.
      expect(Object.keys(kube.state.subjects ?? {}).every((x) => x.startsWith(`${c.domain}.kube.${c.id}.`)), c.id).toBe(true);
      leafCounts.push(kube.state.messages);
    }

    // The hub: KUBE and DLQ source the leaves, SLICES is its own (all from infra/nats/hub-*.json).
    const nc: NatsConnection = await as(hub, 'admin', 'hub-admin', 'cluster-a');
    const jsm = await jetstreamManager(nc);
    for (const f of ['hub-kube.json', 'hub-dlq.json', 'hub-slices.json']) await jsm.streams.add((await streamConfig(f)) as never);
    let info: StreamInfo = await jsm.streams.info('KUBE');
    for (let i = 0; i < 100 && info.state.messages < leafCounts[0]! + leafCounts[1]!; i++) {
      await new Promise((r) => setTimeout(r, 100));
      info = await jsm.streams.info('KUBE');
    }
    expect(info.state.messages).toBe(leafCounts[0]! + leafCounts[1]!);
    expect((info.sources ?? []).map((x) => x.lag)).toEqual([0, 0]);

    // One central slicer per cluster on the hub (own schema each); the hub's streams are the
    // operator's, so the slicers must not declare them.
    for (const c of clusters) {
      const db: TestDb = await withTestDb();
      cleanups.push(() => db.close());
      const slicer: Slicer = startSlicer(
        slicerConfigWith({ cluster: c.id, subjectPrefix: `${c.domain}.`, natsUrl: hub.url, natsNkeySeedFile: hub.seedOf('slicer', c.id), databaseUrl: db.url, dbSchema: db.schema, partitions: 1, ensureStreams: false, healthPort: 0, logLevel: 'silent' }),
      );
      cleanups.push(() => slicer.close());
      await slicer.ready;
      const expected = expectedFrom(simObjects(sims.get(c.id) as ClusterSim), c.id).slices;
      let problems: string[] = [];
      for (let i = 0; i < 100; i++) {
        const rows = await db.db.selectFrom('endpoint_slices').select(['namespace', 'name', 'body', 'cluster']).execute();
        expect(new Set(rows.map((r) => r.cluster))).toEqual(new Set(rows.length > 0 ? [c.id] : []));
        problems = differences('slice', expected, new Map(rows.map((r) => [`${r.namespace}/${r.name}`, comparable(r.body)])));
        if (problems.length === 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(problems, c.id).toEqual([]);
      expect(expected.size).toBeGreaterThan(0);
    }
    // The central slicers publish every change on the hub (the outbox relay may lag the rows).
    const published = async (): Promise<string[]> => Object.keys((await jsm.streams.info('SLICES', { subjects_filter: '>' })).state.subjects ?? {});
    let subjects = await published();
    for (let i = 0; i < 50 && !(subjects.some((x) => x.startsWith('a.slices.cluster-a.')) && subjects.some((x) => x.startsWith('b.slices.cluster-b.'))); i++) {
      await new Promise((r) => setTimeout(r, 100));
      subjects = await published();
    }
    expect(subjects.some((x) => x.startsWith('a.slices.cluster-a.')), 'SLICES of cluster-a on the hub').toBe(true);
    expect(subjects.some((x) => x.startsWith('b.slices.cluster-b.')), 'SLICES of cluster-b on the hub').toBe(true);
  });
});
