// Live equals offline: a scenario with churn runs through the whole stack (cluster-sim → watcher
// → KUBE → slicer → Postgres + SLICES → hints → KV → dry-run agents); once it settles, the slices
// in Postgres and the zone views in KV equal what `slicemesh plan` computes from the final
// cluster state, names included, and replaying the KUBE log rebuilds the same slices.

import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { ClusterSim } from '@slicemesh/cluster-sim';
import { jetstream } from '@slicemesh/nats';
import { replayIntoScratch } from '../../services/stack/src/index.ts';
import { expectLiveEqualsOffline, expectReplayIdentical, readDeadLetters, scenarioFinished, startFixture } from './support/fixture.ts';
import type { StackFixture } from './support/fixture.ts';
import { churnScenario } from './support/scenarios.ts';

let f: StackFixture | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

describe('live equals offline', () => {
  it('after a churning scenario settles, Postgres slices and KV views equal `slicemesh plan` of the final state, and the log replays to them', async () => {
    f = await startFixture({ scenarioYaml: churnScenario({ seed: 'e2e-live' }), speed: 3, agents: 'zone', partitions: 2 });
    await f.stack.ready;
    const sim = f.stack.sim as ClusterSim;
    await scenarioFinished(sim);
    const expected = await expectLiveEqualsOffline(f);

    // Every feature of the scenario is in the answer: hints (Auto and trafficDistribution),
    // mirroring (legacy-db), and views per zone plus the unzoned one.
    const planned = expected.planned.map((s) => `${s.metadata.namespace}/${s.metadata.labels?.['kubernetes.io/service-name']}`);
    expect(new Set(planned)).toEqual(new Set(['shop/web', 'shop/api', 'shop/legacy-db', 'infra/logs', 'infra/cache', 'infra/edge']));
    expect(expected.planned.some((s) => s.endpoints.some((e) => (e.hints?.forZones?.length ?? 0) > 0))).toBe(true);
    expect([...expected.views.keys()].some((k) => k.startsWith('local._.'))).toBe(true);
    expect([...expected.views.keys()].some((k) => k.startsWith('local.zone-b.'))).toBe(true);

    await expectReplayIdentical(f);
    expect(await readDeadLetters(f)).toEqual([]);

    // The replay check can fail: a live slice edited behind the slicer's back is reported.
    const victim = await f.stack.db.selectFrom('endpoint_slices').select(['namespace', 'name', 'body']).where('service', '=', 'web').executeTakeFirstOrThrow();
    const tampered = { ...victim.body, endpoints: victim.body.endpoints.slice(1) };
    await f.stack.db.updateTable('endpoint_slices').set({ body: JSON.stringify(tampered) }).where('namespace', '=', victim.namespace).where('name', '=', victim.name).execute();
    const r = await replayIntoScratch({
      db: f.stack.db, liveSchema: f.stack.run.schema, databaseUrl: f.db.url, js: jetstream(f.stack.nc), names: f.stack.run.names, cluster: 'local', partitions: 2,
    });
    expect(r.ok).toBe(false);
    expect(r.problems.some((p) => p.startsWith(`slice ${victim.namespace}/${victim.name} differs`))).toBe(true);

    // The agents programmed the settled views: each rules file names the services of its zone.
    for (const a of f.stack.agents) {
      expect(f.stack.component(`agent/${a.node}`).isReady(), a.node).toBe(true);
      const rules = await readFile(a.rulesFile, 'utf8');
      expect(rules, a.node).toContain('shop/web:http');
    }
  });
});
