// `npm start` settings: each declared once with flag, env variable, default and doc
// (`npm start -- --help` prints them).

import { NATS_URL_SETTING } from '@slicemesh/nats';
import { parseDuration, defineConfig } from '@slicemesh/runtime';
import type { ConfigOf } from '@slicemesh/runtime';
import { AGENT_MODES } from './agents.ts';
import { parseReplicas } from './replicas.ts';
import { LOG_LEVELS, STACK_PUBLISHER_MODES } from './service-env.ts';

/** `--duration`: plain seconds (`30`) or a duration (`90s`, `2m`); 0 = until Ctrl-C. Returns ms. */
export function parseRunDuration(text: string): number {
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  return parseDuration(text);
}

function speed(text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0 || n > 1000) throw new Error('must be a number in (0, 1000]');
  return n;
}

/** The largest `--nats-cluster`: more servers only add replication traffic on one machine. */
export const MAX_LOCAL_NATS_SERVERS = 7;

/**
 * `--nats-cluster N`: 1 (the default: one server — its own when locked down, else NATS_URL) or a
 * cluster of 3 to 7 local nats-servers. 2 is refused: a replicated stream on two servers stops when either is lost
 * (no quorum), so it survives nothing one server does not.
 */
export function parseNatsClusterSize(text: string): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (n === 1 || (n >= 3 && n <= MAX_LOCAL_NATS_SERVERS)) return n;
  if (n === 2) throw new Error('must be 1 or 3..7: a cluster of 2 loses its quorum with either server, so it survives nothing one server does not');
  throw new Error(`must be 1 (a single server) or a number of servers from 3 to ${MAX_LOCAL_NATS_SERVERS}`);
}

/** Replicas of every stream and bucket on a local cluster of `size` servers: 3 (one server may go), never more than the servers. */
export function localClusterReplicas(size: number): number {
  return Math.min(3, size);
}


/** `--nats-auth`: lock NATS down with an nkey user per role (the default), or connect without credentials. */
export const NATS_AUTH_MODES = ['nkeys', 'none'] as const;
export type NatsAuthMode = (typeof NATS_AUTH_MODES)[number];

/**
 * Why the NATS settings of `npm start` cannot run together, or undefined. A locked-down stack
 * starts its own servers (it cannot lock yours down) unless --nats-auth-dir hands it the keys of
 * yours; a local cluster starts its own servers, so --nats-url on the command line would be
 * ignored. (NATS_URL from the environment is only a default and gives way.)
 */
export function natsSettingsConflict(argv: readonly string[], c: Pick<StackConfig, 'natsCluster' | 'natsAuth' | 'natsAuthDir'>): string | undefined {
  const urlGiven = argv.some((a) => a === '--nats-url' || a.startsWith('--nats-url='));
  if (c.natsAuthDir !== undefined && c.natsAuth === 'none') return '--nats-auth-dir holds keys for a locked-down NATS, so it cannot go with --nats-auth none: drop one of the two';
  if (c.natsAuthDir !== undefined && c.natsCluster > 1) return `--nats-cluster ${c.natsCluster} starts its own servers with keys of its own, so --nats-auth-dir cannot be given with it: drop --nats-auth-dir, or drop --nats-cluster and give --nats-url of the servers those keys are for`;
  if (c.natsCluster > 1 && urlGiven) return `--nats-cluster ${c.natsCluster} starts its own ${c.natsCluster} nats-servers, so --nats-url cannot be given with it: drop --nats-url, or drop --nats-cluster to run against your servers (a comma-separated --nats-url lists a cluster's servers)`;
  if (c.natsAuth === 'nkeys' && urlGiven && c.natsAuthDir === undefined) {
    return '--nats-url runs the stack against your servers, which it cannot lock down itself: give --nats-auth-dir <dir> with their keys (slicemesh nats-auth --cluster <id> --out <dir>), or --nats-auth none to connect without credentials';
  }
  return undefined;
}

export const stackConfig = defineConfig({
  natsUrl: { ...NATS_URL_SETTING, doc: `${NATS_URL_SETTING.doc} Not with --nats-cluster, which starts servers of its own.` },
  natsCluster: {
    env: 'STACK_NATS_CLUSTER',
    flag: '--nats-cluster',
    default: 1,
    parse: parseNatsClusterSize,
    doc: 'Start this many clustered nats-servers on free local ports (3..7; 1: one server, or none with --nats-auth none or --nats-auth-dir, which use --nats-url) and run the stack on all of them with every stream and bucket replicated 3 times; their store is a temporary directory (<run-dir>/nats-cluster with --keep-state), and they stop at exit.',
  },
  natsAuth: {
    env: 'STACK_NATS_AUTH',
    flag: '--nats-auth',
    default: 'nkeys',
    choices: NATS_AUTH_MODES,
    parse: 'string',
    doc: "nkeys: run NATS locked down — the stack starts its own server(s) on free ports with one nkey user per role and least-privilege permissions (docs/operations.md), fresh keys in the servers' directory; none: connect to --nats-url without credentials.",
  },
  natsAuthDir: {
    env: 'STACK_NATS_AUTH_DIR',
    flag: '--nats-auth-dir',
    optional: true,
    parse: 'string',
    doc: 'Run against your locked-down servers at --nats-url with the role keys in this directory (written by `slicemesh nats-auth --cluster <id> --out <dir>` for the same cluster and names, e.g. --keep-state).',
  },
  databaseUrl: { env: 'DATABASE_URL', flag: '--database-url', default: 'postgres://postgres@127.0.0.1:5432/postgres', parse: 'url', doc: 'Postgres server.' },
  scenario: { env: 'STACK_SCENARIO', flag: '--scenario', optional: true, parse: 'string', doc: "cluster-sim scenario YAML; default: cluster-sim's scenarios/default.yaml." },
  speed: { env: 'STACK_SPEED', flag: '--speed', default: 1, parse: speed, doc: 'Play the scenario this many times faster.' },
  seed: { env: 'STACK_SEED', flag: '--seed', optional: true, parse: 'string', doc: "Override the scenario's seed." },
  simPort: { env: 'STACK_SIM_PORT', flag: '--sim-port', default: 8001, min: 0, max: 65_535, parse: 'int', doc: "cluster-sim's port (kubectl --server http://127.0.0.1:<port>); 0 picks a free one." },
  uiPort: { env: 'STACK_UI_PORT', flag: '--ui-port', default: 8080, min: 0, max: 65_535, parse: 'int', doc: "The web view's port (slicemesh ui on the live log); 0 picks a free one, as does a busy port." },
  cluster: { env: 'STACK_CLUSTER', flag: '--cluster', default: 'local', parse: 'string', doc: 'Cluster id of the simulated cluster in subjects and keys.' },
  partitions: { env: 'STACK_PARTITIONS', flag: '--partitions', default: 2, min: 1, max: 64, parse: 'int', doc: 'KUBE partitions (namespaces hashed over them).' },
  publisherMode: {
    env: 'STACK_PUBLISHER_MODE',
    flag: '--publisher-mode',
    default: 'write',
    choices: STACK_PUBLISHER_MODES,
    parse: 'string',
    doc: 'The publisher: write the slices to cluster-sim (kubectl get endpointslices shows them), shadow (count what it would write), or off.',
  },
  agents: { env: 'STACK_AGENTS', flag: '--agents', default: 'node', choices: AGENT_MODES, parse: 'string', doc: 'Dry-run proxy agents: one per node, one per zone, or none.' },
  processes: {
    env: 'STACK_PROCESSES',
    flag: '--processes',
    default: false,
    parse: 'bool',
    doc: 'Run watcher, slicer, hints, publisher and agents as child processes (node dist/<svc>.js, as built; from the sources when the stack itself runs from them) instead of in this process.',
  },
  replicas: {
    env: 'STACK_REPLICAS',
    flag: '--replicas',
    default: 'slicer=1,hints=1,watcher=1',
    parse: parseReplicas,
    doc: 'Copies per service, e.g. slicer=3,hints=2,watcher=2 (kinds: slicer, hints, watcher; 1..16 each; kinds not named: 1). Several are named slicer-0, slicer-1, … with their own health port and log file; slicers and hints services share the partitions by lease, watchers publish active-active with dedup.',
  },
  keepState: {
    env: 'STACK_KEEP_STATE',
    flag: '--keep-state',
    default: false,
    parse: 'bool',
    doc: 'Use the persistent names (streams KUBE SLICES DLQ, buckets svc views, schema slicemesh) and keep them; otherwise every run gets fresh ones.',
  },
  cleanup: { env: 'STACK_CLEANUP', flag: '--cleanup', default: true, parse: 'bool', doc: "Fresh runs: delete the run's streams, buckets and schema at exit (--cleanup=false keeps them for `replay`)." },
  duration: { env: 'STACK_DURATION', flag: '--duration', default: '0', parse: parseRunDuration, doc: 'Stop after this long (seconds, or 90s / 2m) and exit 0; 0 runs until Ctrl-C.' },
  verify: {
    env: 'STACK_VERIFY',
    flag: '--verify',
    default: false,
    parse: 'bool',
    doc: "Before stopping: freeze the cluster, wait until settled, then check (a) the KUBE log replayed into a fresh schema, (b) the live slices and hints against `slicemesh plan` of the API's final state, (c) each agent's rules against `slicemesh proxy-plan` for its node; exit 1 on any difference.",
  },
  summaryInterval: { env: 'STACK_SUMMARY_INTERVAL', flag: '--summary-interval', default: '5s', min: 500, parse: 'duration', doc: 'How often the live summary line is printed.' },
  runDir: { env: 'STACK_RUN_DIR', flag: '--run-dir', default: '.slicemesh/run', parse: 'string', doc: 'Where the agents write <node>.rules and the services their logs (logs/<component>.log).' },
  logLevel: { env: 'STACK_LOG_LEVEL', flag: '--log-level', default: 'info', choices: LOG_LEVELS, parse: 'string', doc: "Level of the services' log files." },
  batchPeriod: { env: 'STACK_BATCH_PERIOD', flag: '--batch-period', default: '100ms', min: 0, parse: 'duration', doc: "The slicer's pod batching window." },
});

export type StackConfig = ConfigOf<typeof stackConfig.spec>;
