// A watcher whose watch is cut mid-run: the API server's history is compacted under it (410,
// re-list), its connections are dropped (resume from the last resourceVersion), and an outage
// spans a compaction (410 on resume). The final state still equals the offline answer and
// KUBE holds every object version once.

import { describe, expect, it } from 'vitest';
import { parseScenario, startClusterSim } from '@slicemesh/cluster-sim';
import type { ClusterSim } from '@slicemesh/cluster-sim';
import type { KubeChangeEvent } from '@slicemesh/kube';
import { startApiProxy } from '@slicemesh/kube/testing';
import { repeatedMsgIDs, repeatedVersions } from '../../services/watcher/src/testing/stream-state.ts';
import { scrapeMetric } from '../../services/stack/src/index.ts';
import { expectLiveEqualsOffline, expectReplayIdentical, readStreamOf, scenarioFinished, startFixture } from './support/fixture.ts';
import { proxiedRunSlots } from './support/proxied-run.ts';
import { churnScenario } from './support/scenarios.ts';

const run = proxiedRunSlots();

async function atClusterTime(s: ClusterSim, ms: number): Promise<void> {
  while (s.driver.elapsedMs() < ms) await new Promise((r) => setTimeout(r, 100));
}

describe('a cut watch', () => {
  it('410 (compaction), dropped connections and an outage spanning a compaction end in the offline answer, each version stored once', async () => {
    const sim = (run.sim = await startClusterSim({ scenario: parseScenario(churnScenario({ seed: 'e2e-cut', durationSeconds: 30 }), 'e2e-cut'), speed: 3 }));
    const proxy = (run.proxy = await startApiProxy(sim.url));
    const f = (run.f = await startFixture({ sim, kubeServer: proxy.url, agents: 'zone' }));
    await f.stack.ready;

    await atClusterTime(sim, 6_000);
    sim.store.compact(); // every open watch gets 410 and re-lists
    await atClusterTime(sim, 11_000);
    proxy.cut(); // dropped connections: watches resume from their resourceVersion
    await atClusterTime(sim, 13_000);
    proxy.cut();
    await atClusterTime(sim, 16_000);
    await proxy.down(); // an outage during which history is compacted: 410 on resume
    await atClusterTime(sim, 20_000);
    sim.store.compact();
    await proxy.resume();

    await scenarioFinished(sim);
    await expectLiveEqualsOffline(f);
    await expectReplayIdentical(f);

    const kube = await readStreamOf<KubeChangeEvent>(f, f.stack.run.names.kube);
    expect(repeatedMsgIDs(kube)).toEqual([]);
    expect(repeatedVersions(kube)).toEqual([]);
    const health = f.stack.component('watcher').healthUrl();
    expect(await scrapeMetric(health, 'slicemesh_watcher_relists_total')).toBeGreaterThan(0);
    expect(await scrapeMetric(health, 'slicemesh_watcher_informer_restarts_total')).toBeGreaterThan(0);
  });
});
