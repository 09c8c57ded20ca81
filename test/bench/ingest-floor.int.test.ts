import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMPTY_SCENARIO, startClusterSim } from '@slicemesh/cluster-sim';
import type { ClusterSim, KubeObj } from '@slicemesh/cluster-sim';
import { withJetStream } from '@slicemesh/nats/testing';
import type { JetStreamFixture } from '@slicemesh/nats/testing';
import type { FloorMode } from '../../bench/ingest-floor-run.ts';
import { FLOOR_SIM, floorPercentiles, runIngestFloor } from '../../bench/ingest-floor-run.ts';

const PODS = 20;
let sim: ClusterSim;
let js: JetStreamFixture;
let runs = 0;

beforeAll(async () => {
  js = await withJetStream();
  sim = await startClusterSim({ scenario: EMPTY_SCENARIO, apiPodReadinessDelayMs: 86_400_000 });
  sim.store.create('Namespace', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'floor' } });
  for (let i = 0; i < PODS; i++) {
    sim.store.create('Pod', { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p-${i}`, namespace: 'floor' }, spec: { nodeName: 'n', containers: [{ name: 'main' }] }, status: { phase: 'Running', podIP: `10.9.0.${i + 1}` } });
  }
});

afterAll(async () => {
  await sim?.close();
  await js?.cleanup();
});

/** Relabels every pod once (a burst of PODS changes) and returns the write times, as the bench's burst does. */
function burst(extra: readonly string[] = []): (ready: boolean) => Map<string, number> {
  return (ready) => {
    const at = new Map<string, number>();
    for (let i = 0; i < PODS; i++) {
      const cur = sim.store.get('Pod', 'floor', `p-${i}`) as KubeObj;
      sim.store.update('Pod', { ...cur, metadata: { ...cur.metadata, labels: { run: String(runs), ready: String(ready) } } });
      at.set(`floor/p-${i}`, performance.timeOrigin + performance.now());
    }
    if (ready) for (const pod of extra) at.set(pod, performance.timeOrigin + performance.now());
    return at;
  };
}

describe('runIngestFloor', () => {
  const cases: { mode: FloorMode; processes: string[] }[] = [
    { mode: 'watch', processes: [FLOOR_SIM, 'watch client'] },
    { mode: 'jetstream', processes: [FLOOR_SIM, 'consumer', 'publisher', 'nats-server'] },
  ];
  it.each(cases)('$mode: every pod change of the measured burst is seen once by the last client, with its latency and each process\'s CPU', async ({ mode, processes }) => {
    const id = `t${js.id}${++runs}`;
    const run = await runIngestFloor({ mode, apiUrl: sim.url, natsUrl: js.url, id, pods: PODS, write: burst(), timeoutMs: 30_000 });
    expect(run.pods).toBe(PODS);
    expect(run.latencies).toHaveLength(PODS);
    expect(run.latencies.every((ms) => ms >= 0 && ms < 30_000)).toBe(true);
    expect(run.events).toBe(PODS); // only the pods changed: no Service, so no Endpoints
    expect(run.spanMs).toBeGreaterThan(0);
    expect([...run.cpuMs.keys()]).toEqual(processes);
    expect(run.cpuMs.get(mode === 'watch' ? 'watch client' : 'consumer')).toBeGreaterThan(0);
    const { p50, p99 } = floorPercentiles(run);
    expect(p50).toBeLessThanOrEqual(p99);
    // The run's stream is gone afterwards.
    await expect(js.jsm.streams.info(`FLOOR_${id}`)).rejects.toThrow();
  });

  it('fails, naming the pod, when a change written never reaches the last client', async () => {
    const run = runIngestFloor({ mode: 'jetstream', apiUrl: sim.url, natsUrl: js.url, id: `t${js.id}${++runs}`, pods: PODS, write: burst(['floor/never-written']), timeoutMs: 30_000 });
    await expect(run).rejects.toThrow(/floor\/never-written was written and never seen/);
  });
});
