// Crash safety: the slicer and the hints service run as child processes and are killed with
// SIGKILL mid-run (no shutdown hook runs), then restarted. Nothing is lost (every outbox row
// reaches SLICES, the SLICES log folds to the stored slices, the final state equals the offline
// answer) and nothing is duplicated (one SLICES message per outbox row, one KUBE message per
// object version).

import { afterEach, describe, expect, it } from 'vitest';
import type { ClusterSim } from '@slicemesh/cluster-sim';
import type { EndpointSlice } from '@slicemesh/model';
import type { KubeChangeEvent } from '@slicemesh/kube';
import { repeatedMsgIDs } from '../../services/watcher/src/testing/stream-state.ts';
import type { SliceChangedMessage } from '../../services/slicer/src/index.ts';
import { expectLiveEqualsOffline, expectReplayIdentical, readStreamOf, scenarioFinished, startFixture } from './support/fixture.ts';
import type { StackFixture } from './support/fixture.ts';
import { comparable } from './support/oracle.ts';
import { churnScenario } from './support/scenarios.ts';

let f: StackFixture | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

/** Resolves once the scenario clock has passed `ms` (cluster time). */
async function atClusterTime(sim: ClusterSim, ms: number): Promise<void> {
  while (sim.driver.elapsedMs() < ms) await new Promise((r) => setTimeout(r, 100));
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('kill -9 and restart', () => {
  it('SIGKILL of the slicer and the hints service mid-run loses nothing, duplicates nothing and ends in the offline answer', async () => {
    f = await startFixture({ scenarioYaml: churnScenario({ seed: 'e2e-kill', durationSeconds: 30 }), speed: 3, agents: 'none', processes: ['slicer', 'hints'] });
    const { stack } = f;
    await stack.ready;
    const sim = stack.sim as ClusterSim;
    const slicer = stack.component('slicer');
    const hints = stack.component('hints');
    expect(slicer.mode).toBe('process');

    await atClusterTime(sim, 6_000);
    const firstPid = slicer.pid();
    await slicer.kill('SIGKILL'); // changes keep flowing into KUBE meanwhile
    await pause(1500);
    await slicer.restart();
    expect(slicer.pid()).not.toBe(firstPid);

    await atClusterTime(sim, 14_000);
    await hints.kill('SIGKILL');
    await pause(1000);
    await hints.restart();

    await atClusterTime(sim, 20_000);
    await Promise.all([slicer.kill('SIGKILL'), hints.kill('SIGKILL')]);
    await pause(1000);
    await Promise.all([slicer.restart(), hints.restart()]);

    await scenarioFinished(sim);
    await expectLiveEqualsOffline(f);
    await expectReplayIdentical(f);

    // One SLICES message per outbox row, none missing, none twice.
    const names = stack.run.names;
    const slices = await readStreamOf<SliceChangedMessage>(f, names.slices);
    expect(repeatedMsgIDs(slices)).toEqual([]);
    const outbox = await stack.db.selectFrom('outbox').select('msg_id').orderBy('id').execute();
    expect(slices.map((m) => m.msgID).sort()).toEqual(outbox.map((r) => r.msg_id).sort());
    // Each reconcile wrote once: no reconcile ID appears in two SLICES messages.
    const ids = slices.map((m) => m.body.reconcileID);
    expect(ids.length).toBe(new Set(ids).size);

    // The SLICES log alone (what the hints service consumes) folds to the stored slices.
    const folded = new Map<string, EndpointSlice>();
    for (const m of slices) {
      for (const name of m.body.deletes) folded.delete(`${m.body.namespace}/${name}`);
      for (const s of m.body.upserts) folded.set(`${m.body.namespace}/${s.metadata.name}`, s);
    }
    const stored = await stack.db.selectFrom('endpoint_slices').select(['namespace', 'name', 'body']).where('cluster', '=', stack.layout.cluster).execute();
    expect(new Map([...folded].map(([k, s]) => [k, comparable(s)]))).toEqual(new Map(stored.map((r) => [`${r.namespace}/${r.name}`, comparable(r.body)])));

    // The watcher was never killed: KUBE holds each object version once.
    expect(repeatedMsgIDs(await readStreamOf<KubeChangeEvent>(f, names.kube))).toEqual([]);
  });
});
