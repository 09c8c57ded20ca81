// The fault campaign of `npm run chaos`, in its CI version (CI_CAMPAIGN: a 50 s fault phase, a
// 10 s agent cut): 3 slicers, 2 hints services, 2 watchers, the
// publisher and dry-run agents as child processes, on their own nats-server and Postgres (the
// shared ones serve other tests), under kill -9 of random replicas, a NATS kill -9 and restart,
// a Postgres immediate restart, a cut watch and an agent cut off from NATS. Nothing may be lost
// or duplicated, and replay, truth and agents must be clean.

import { describe, expect, it } from 'vitest';
import { CI_CAMPAIGN, runCampaign } from '../../services/stack/src/chaos/campaign.ts';

describe('fault campaign (CI version)', () => {
  it('kills, server restarts and cuts under churn lose nothing, duplicate nothing and end in the offline answer', async () => {
    const lines: string[] = [];
    const r = await runCampaign({ ...CI_CAMPAIGN, log: (l) => lines.push(l) });
    process.stdout.write(`${r.verdict.line}\n${JSON.stringify(r.verdict.json)}\n`);
    if (!r.verdict.ok) process.stdout.write(`campaign log:\n${lines.join('\n')}\nkept in ${r.dir}\n`);
    expect(r.verdict.failures).toEqual([]);
    expect(r.verdict.json).toMatchObject({ lost: 0, duplicated: 0, verify_replay: true, verify_truth: true, verify_agents: true, ok: true });
    expect(r.verdict.json.kills).toBeGreaterThanOrEqual(8);
    expect(r.verdict.json.faults).toMatchObject({ 'nats-restart': 1, 'postgres-restart': 1, 'watch-cut': 1, 'agent-cut': 1 });
    expect(r.report.takeoversS.length).toBeGreaterThan(0);
    // The slicers snapshot every 300 messages of a partition: KUBE is compacted under the faults, and the replay starts from snapshots.
    expect(r.verdict.json.compacted_partitions).toBeGreaterThan(0);
  }, 180_000);
});
