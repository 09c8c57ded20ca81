// `npm run chaos`: the fault campaign (campaign.ts) from the command line. Prints progress on
// stderr, one summary line on stdout and, with --json, a JSON object as the last line; exits 1
// when a check failed. Run: npm run chaos -- [--ci] [--json] [--flag value ...]

import { ConfigError, defineConfig, helpRequested } from '@slicemesh/runtime';
import { parseReplicas } from '../replicas.ts';
import { REPO_ROOT } from '../child-process.ts';
import type { CampaignOptions } from './campaign.ts';
import { CI_CAMPAIGN, CI_NATS_CLUSTER_CAMPAIGN, FULL_CAMPAIGN, runCampaign } from './campaign.ts';

function positive(text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0 || n > 1000) throw new Error('must be a number in (0, 1000]');
  return n;
}

export const chaosConfig = defineConfig({
  ci: { env: 'CHAOS_CI', flag: '--ci', default: false, parse: 'bool', doc: `The CI version: a ${CI_CAMPAIGN.faultPhaseMs / 1000} s fault phase, a ${CI_CAMPAIGN.agentCutMs / 1000} s agent cut, at least ${CI_CAMPAIGN.minEvents} KUBE events (the full one: ${FULL_CAMPAIGN.faultPhaseMs / 1000} s, ${FULL_CAMPAIGN.agentCutMs / 1000} s, ${FULL_CAMPAIGN.minEvents}).` },
  json: { env: 'CHAOS_JSON', flag: '--json', default: false, parse: 'bool', doc: 'Print the result as a JSON object on the last line of stdout.' },
  seed: { env: 'CHAOS_SEED', flag: '--seed', optional: true, parse: 'string', doc: 'Seed of the fault plan and the scenario (default chaos, or chaos-ci).' },
  duration: { env: 'CHAOS_DURATION', flag: '--duration', optional: true, parse: 'duration', doc: 'Length of the fault phase (churn under faults).' },
  replicas: { env: 'CHAOS_REPLICAS', flag: '--replicas', default: 'slicer=3,hints=2,watcher=2', parse: parseReplicas, doc: 'Replicas per service (as npm start --replicas).' },
  killEvery: { env: 'CHAOS_KILL_EVERY', flag: '--kill-every', optional: true, min: 500, parse: 'duration', doc: 'A kill -9 of a random replica this often (default 4s).' },
  agentCut: { env: 'CHAOS_AGENT_CUT', flag: '--agent-cut', optional: true, min: 0, parse: 'duration', doc: 'How long one agent is cut off from NATS.' },
  speed: { env: 'CHAOS_SPEED', flag: '--speed', optional: true, parse: positive, doc: 'Scenario speed (default 4).' },
  churn: { env: 'CHAOS_CHURN', flag: '--churn', optional: true, parse: positive, doc: 'Pods replaced per second of cluster time (default 3).' },
  minEvents: { env: 'CHAOS_MIN_EVENTS', flag: '--min-events', optional: true, min: 0, parse: 'int', doc: 'Fail below this many KUBE events.' },
  natsCluster: {
    env: 'CHAOS_NATS_CLUSTER',
    flag: '--nats-cluster',
    default: false,
    parse: 'bool',
    doc: 'nats_cluster mode: NATS is a cluster of 3 servers of its own, every stream and bucket with 3 replicas; the NATS fault is a kill -9 of one server (the KUBE leader, then one drawn from the seed among those holding service connections), started again after --nats-down; no agent cut. Adds the longest stall, the reconnects and the restart absorbed to the summary.',
  },
  snapshotEvery: { env: 'CHAOS_SNAPSHOT_EVERY', flag: '--snapshot-every', optional: true, min: 0, parse: 'int', doc: "The slicers' SNAPSHOT_EVERY: KUBE is compacted during the run, and the campaign fails if it never was (default 1500, or 300 with --ci); 0: the slicers' own default, which a campaign does not reach." },
  natsDown: { env: 'CHAOS_NATS_DOWN', flag: '--nats-down', optional: true, min: 0, parse: 'duration', doc: 'nats_cluster mode: how long a killed server stays down (default 5s).' },
  stallBar: { env: 'CHAOS_STALL_BAR', flag: '--stall-bar', optional: true, min: 0, parse: 'duration', doc: "nats_cluster mode: fail when a stream stores nothing for longer across a nats-kill (default 5s, the stack's summary interval)." },
  keep: { env: 'CHAOS_KEEP', flag: '--keep', default: false, parse: 'bool', doc: 'Keep the temporary directory (logs, data) also when the campaign passes (a failing one is always kept).' },
  built: { env: 'CHAOS_BUILT', flag: '--built', default: false, parse: 'bool', doc: 'Run the services from dist/ (npm run build first; npm run chaos does) instead of from the sources.' },
});

const err = (line: string): void => void process.stderr.write(`${line}\n`);
const out = (line: string): void => void process.stdout.write(`${line}\n`);

async function main(argv: readonly string[]): Promise<void> {
  if (helpRequested(argv)) {
    out(`Usage: npm run chaos -- [--ci] [--json] [--flag value ...]\n\nThe fault campaign: churn under kill -9 of replicas, NATS and Postgres restarts, a cut watch and a cut agent (own nats-server and Postgres; --nats-cluster: a 3-server NATS cluster losing one server at a time), then checks: nothing lost, nothing duplicated, replay, truth and agents clean.\n\n${chaosConfig.usage()}`);
    return;
  }
  let c;
  try {
    c = chaosConfig.parse(argv, process.env);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    err(`chaos: ${e.message}`);
    process.exit(2);
  }
  const base = c.ci ? (c.natsCluster ? CI_NATS_CLUSTER_CAMPAIGN : CI_CAMPAIGN) : c.natsCluster ? { ...FULL_CAMPAIGN, seed: 'chaos-nats', natsCluster: 3 } : FULL_CAMPAIGN;
  const opts: CampaignOptions = {
    ...base,
    ...(c.seed !== undefined ? { seed: c.seed } : {}),
    ...(c.duration !== undefined ? { faultPhaseMs: c.duration } : {}),
    ...(c.killEvery !== undefined ? { killEveryMs: c.killEvery } : {}),
    ...(c.agentCut !== undefined ? { agentCutMs: c.agentCut } : {}),
    ...(c.speed !== undefined ? { speed: c.speed } : {}),
    ...(c.churn !== undefined ? { podsPerSecond: c.churn } : {}),
    ...(c.minEvents !== undefined ? { minEvents: c.minEvents } : {}),
    ...(c.built ? { builtRoot: REPO_ROOT } : {}),
    ...(c.natsDown !== undefined ? { natsDownMs: c.natsDown } : {}),
    ...(c.snapshotEvery !== undefined ? { snapshotEvery: c.snapshotEvery === 0 ? undefined : c.snapshotEvery } : {}),
    ...(c.stallBar !== undefined ? { stallBarMs: c.stallBar } : {}),
    replicas: c.replicas,
    keepDir: c.keep,
    log: (line) => err(`chaos ${line}`),
  };
  const r = await runCampaign(opts);
  for (const f of r.verdict.failures) err(`chaos: FAILED: ${f}`);
  if (!r.verdict.ok || c.keep) err(`chaos: logs and data kept in ${r.dir}`);
  out(r.verdict.line);
  if (c.json) out(JSON.stringify(r.verdict.json));
  process.exit(r.verdict.ok ? 0 : 1);
}

await main(process.argv.slice(2));
