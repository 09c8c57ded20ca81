// `slicemesh nats-auth …` command line: where the keys go, which cluster (and names) their
// permissions are scoped to, and which agents get a key of their own. Checked before any file is
// touched; a bad flag is a UsageError (one line, exit 2).

import { parseArgs } from 'node:util';
import type { BackboneNames } from '@slicemesh/nats';
import { DEFAULT_NAMES } from '@slicemesh/nats';
import { UsageError } from '../cli-error.ts';
import { checkHubLeafUrl } from './leafnode-files.ts';

export const NATS_AUTH_USAGE = `slicemesh nats-auth --cluster ID --out DIR [--agents NAME,NAME,...] [--force | --if-missing]
                   [--leafnodes NAME,NAME,... --hub-url URL] [--subject-prefix P] [--kube-stream S]
                   [--slices-stream S] [--dlq-stream S] [--events-stream S] [--svc-bucket B]
                   [--views-bucket B] [--hinted-bucket B]
  Locks NATS down: writes one nkey seed per role into DIR (watcher.nk, slicer.nk, hints.nk,
  publisher.nk, reader.nk, admin.nk and agent.nk; one line each, mode 0600, DIR 0700) and
  DIR/auth.conf, the nats-server "authorization { users = [...] }" block giving each key the
  permissions of its role in cluster ID. Include it from the server's configuration
  (include "auth/auth.conf") and give each process its seed (NATS_NKEY_SEED_FILE). Prints the
  files and public keys it wrote, never a seed.
  --cluster ID       the CLUSTER every service of the deployment runs with (env CLUSTER)
  --out DIR          where the files go (made if missing)
  --agents NAMES     one key per agent, DIR/agent-<name>.nk (e.g. node names), instead of one
                     agent.nk shared by every agent (a Kubernetes DaemonSet shares one Secret)
  --leafnodes NAMES  for a hub: DIR/leafnodes.conf, a user and password per leaf for the hub's
                     leafnodes {} block, and DIR/leafnode-<name>.conf per leaf, HUB_LEAF_URL (the
                     hub's leafnode URL with that leaf's user and password) for the leaf's remote
  --hub-url URL      the hub's leafnode URL the leaves dial, e.g. nats-leaf://hub:7422
  --force            replace existing keys and passwords (every process then needs its new one)
  --if-missing       write nothing when DIR already holds every file it would write (a one-shot
                     init job); a partial set is an error
  --subject-prefix, --kube-stream, --slices-stream, --dlq-stream, --events-stream,
  --svc-bucket, --views-bucket, --hinted-bucket   the names the services run with, when not
                     the defaults (env SUBJECT_PREFIX, KUBE_STREAM, ...; default none, KUBE,
                     SLICES, DLQ, EVENTS, svc, views, hinted)`;

const NAME_OPTIONS = {
  'subject-prefix': { env: 'SUBJECT_PREFIX', key: 'prefix' },
  'kube-stream': { env: 'KUBE_STREAM', key: 'kube' },
  'slices-stream': { env: 'SLICES_STREAM', key: 'slices' },
  'dlq-stream': { env: 'DLQ_STREAM', key: 'dlq' },
  'events-stream': { env: 'EVENTS_STREAM', key: 'events' },
  'svc-bucket': { env: 'SVC_BUCKET', key: 'svc' },
  'views-bucket': { env: 'VIEWS_BUCKET', key: 'views' },
  'hinted-bucket': { env: 'HINTED_BUCKET', key: 'hinted' },
} as const satisfies Readonly<Record<string, { env: string; key: keyof BackboneNames }>>;

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  cluster: { type: 'string' },
  out: { type: 'string', short: 'o' },
  agents: { type: 'string' },
  leafnodes: { type: 'string' },
  'hub-url': { type: 'string' },
  force: { type: 'boolean' },
  'if-missing': { type: 'boolean' },
  ...Object.fromEntries(Object.keys(NAME_OPTIONS).map((k) => [k, { type: 'string' }])),
} as const;

export interface NatsAuthCommandLine {
  readonly help: boolean;
  readonly cluster: string;
  readonly out: string;
  /** Agent names, each its own key; undefined: one shared agent key. */
  readonly agents: readonly string[] | undefined;
  /** A hub's leaves, each a leafnode user, and the URL they dial; undefined: no leafnode files. */
  readonly leafnodes: { readonly names: readonly string[]; readonly hubUrl: string } | undefined;
  readonly force: boolean;
  readonly ifMissing: boolean;
  readonly names: BackboneNames;
}

export type Env = Readonly<Record<string, string | undefined>>;

/** A leaf's name becomes part of a file name: a server name fits, a path does not. */
const FILE_NAME_PART = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** As the services check their stream and bucket names and subject prefix. */
const NAME_TOKEN = /^[A-Za-z0-9_-]+$/;
const PREFIX = /^(?:[A-Za-z0-9_-]+\.)*$/;

/** A comma-separated list of names that become parts of file names (the leaves). */
function nameList(flag: string, what: string, text: string): string[] {
  const names = text.split(',').map((a) => a.trim());
  for (const a of names) {
    if (!FILE_NAME_PART.test(a)) throw new UsageError(`--${flag}: ${JSON.stringify(a)} is not ${what} (letters, digits, '.', '_' and '-', not starting with '.', '_' or '-')`);
  }
  const twice = names.find((a, i) => names.indexOf(a) !== i);
  if (twice !== undefined) throw new UsageError(`--${flag}: ${JSON.stringify(twice)} is given twice`);
  return names;
}

function leafnodesOf(names: string | undefined, hubUrl: string | undefined): NatsAuthCommandLine['leafnodes'] {
  if (names === undefined && hubUrl === undefined) return undefined;
  if (names === undefined) throw new UsageError('nats-auth: --hub-url goes with --leafnodes NAMES');
  if (hubUrl === undefined) throw new UsageError('nats-auth: --leafnodes needs --hub-url URL, the hub\'s leafnode URL the leaves dial (e.g. nats-leaf://hub:7422)');
  try {
    checkHubLeafUrl(hubUrl);
  } catch (err) {
    throw new UsageError(`nats-auth: --hub-url ${JSON.stringify(hubUrl)} ${(err as Error).message}`);
  }
  return { names: nameList('leafnodes', 'a leaf name', names), hubUrl };
}

function namesOf(flags: Readonly<Record<string, string | boolean | undefined>>, env: Env): BackboneNames {
  const names: Record<string, string> = { ...DEFAULT_NAMES };
  for (const [flag, { env: variable, key }] of Object.entries(NAME_OPTIONS)) {
    const value = flags[flag] ?? env[variable];
    if (typeof value !== 'string') continue;
    const ok = key === 'prefix' ? PREFIX.test(value) : NAME_TOKEN.test(value);
    if (!ok) throw new UsageError(`--${flag} ${JSON.stringify(value)}: ${key === 'prefix' ? 'must be empty or dot-terminated tokens, e.g. "t1."' : 'must be [A-Za-z0-9_-]+'}`);
    names[key] = value;
  }
  return names as unknown as BackboneNames;
}

/** Parses the arguments after `nats-auth`; `env` supplies CLUSTER and the names when no flag does. */
export function parseNatsAuthCommandLine(argv: readonly string[], env: Env): NatsAuthCommandLine {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`nats-auth: ${(err instanceof Error ? err.message : String(err)).split('\n')[0] ?? ''}`);
  }
  const v = parsed.values as Readonly<Record<string, string | boolean | undefined>>;
  const help = v['help'] === true;
  const force = v['force'] === true;
  const ifMissing = v['if-missing'] === true;
  const base = { help, force, ifMissing, agents: undefined, leafnodes: undefined, names: DEFAULT_NAMES, cluster: '', out: '' };
  if (help) return base;
  if (parsed.positionals.length > 0) throw new UsageError(`nats-auth: unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
  if (force && ifMissing) throw new UsageError('nats-auth: give --force or --if-missing, not both');
  const cluster = typeof v['cluster'] === 'string' ? v['cluster'] : env['CLUSTER'];
  if (cluster === undefined || cluster === '') throw new UsageError('nats-auth needs --cluster ID: the CLUSTER the services run with (the permissions are scoped to it)');
  const out = v['out'];
  if (typeof out !== 'string' || out === '') throw new UsageError('nats-auth needs --out DIR: where the seeds and auth.conf go');
  // writeNatsAuth checks the agents' names (they become file names) before it writes anything.
  const agents = typeof v['agents'] === 'string' ? v['agents'].split(',').map((a) => a.trim()) : undefined;
  const leafnodes = leafnodesOf(typeof v['leafnodes'] === 'string' ? v['leafnodes'] : undefined, typeof v['hub-url'] === 'string' ? v['hub-url'] : undefined);
  return { ...base, cluster, out, agents, leafnodes, names: namesOf(v, env) };
}
