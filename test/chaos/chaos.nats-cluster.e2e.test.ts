// The fault campaign's CI version in nats_cluster mode (CI_NATS_CLUSTER_CAMPAIGN): NATS is a
// cluster of 3 servers of the campaign's own with every stream and bucket replicated 3 times, and
// the NATS fault is a kill -9 of one server mid-churn — first the leader of KUBE, then one drawn
// from the seed — started again 5 s later; the replica kills, the Postgres restart and the cut
// watch as in the single-server version. Nothing may be lost or duplicated, replay, truth and
// agents must be clean, no stream may stall longer than 12 s across a server's loss (the
// issue's bar is one summary interval, 5 s; see CI_NATS_CLUSTER_CAMPAIGN for why CI allows 12), each service logs its reconnect once (not per message), and every restart is
// absorbed (all replicas current again).

import { describe, expect, it } from 'vitest';
import { CI_NATS_CLUSTER_CAMPAIGN, runCampaign } from '../../services/stack/src/chaos/campaign.ts';

describe('fault campaign (CI version) on a 3-server NATS cluster', () => {
  it('losing one NATS server at a time, the KUBE leader included, stalls nothing beyond the bar and loses or duplicates nothing', async ({ onTestFailed }) => {
    const lines: string[] = [];
    const started = Date.now();
    // Also on a timeout: how far the campaign got, each line with its second.
    onTestFailed(() => void process.stdout.write(`campaign log so far:\n${lines.join('\n')}\n`));
    const r = await runCampaign({ ...CI_NATS_CLUSTER_CAMPAIGN, log: (l) => lines.push(`${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s ${l}`) });
    process.stdout.write(`${r.verdict.line}\n${JSON.stringify(r.verdict.json)}\n`);
    if (!r.verdict.ok) process.stdout.write(`kept in ${r.dir}\n`);
    expect(r.verdict.failures).toEqual([]);
    expect(r.verdict.json).toMatchObject({ lost: 0, duplicated: 0, verify_replay: true, verify_truth: true, verify_agents: true, nats_servers: 3, ok: true });
    expect(r.verdict.json.faults).toMatchObject({ 'nats-kill': 2, 'postgres-restart': 1, 'watch-cut': 1 });
    expect(r.verdict.json.faults['nats-restart']).toBeUndefined();
    const kills = r.report.natsCluster?.kills ?? [];
    expect(kills.some((k) => k.wasKubeLeader)).toBe(true);
    expect(r.verdict.json.max_stall_s).toBeLessThanOrEqual((CI_NATS_CLUSTER_CAMPAIGN.stallBarMs ?? 0) / 1000);
    expect(r.verdict.json.reconnects).toBeGreaterThan(0);
  }, 180_000);
});
