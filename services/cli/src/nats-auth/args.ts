// `slicemesh nats-auth …` command line: where the keys go, which cluster (and names) their
// permissions are scoped to, and which agents get a key of their own. Checked before any file is
// touched; a bad flag is a UsageError (one line, exit 2).

import { parseArgs } from 'node:util';
import type { BackboneNames, PermissionScope } from '@slicemesh/nats';
import { DEFAULT_NAMES } from '@slicemesh/nats';
import { UsageError } from '../cli-error.ts';
import { checkHubLeafUrl } from './leafnode-files.ts';

export const NATS_AUTH_USAGE = `slicemesh nats-auth --cluster ID [--cluster ID ...] --out DIR [--agents NAME,NAME,...]
                   [--force | --if-missing] [--leafnodes NAME,NAME,... --hub-url URL]
                   [--exports-domain D] [--exports-bucket B] [--subject-prefix P ...]
                   [--kube-stream S] [--slices-stream S] [--dlq-stream S] [--events-stream S]
                   [--svc-bucket B] [--views-bucket B] [--hinted-bucket B]
  Locks NATS down: writes one nkey seed per role into DIR (watcher.nk, slicer.nk, hints.nk,
  publisher.nk, mcs.nk, reader.nk, admin.nk and agent.nk; one line each, mode 0600, DIR 0700)
  and DIR/auth.conf, the nats-server "authorization { users = [...] }" block giving each key the
  permissions of its role in cluster ID. Include it from the server's configuration
  (include "auth/auth.conf") and give each process its seed (NATS_NKEY_SEED_FILE). Prints the
  files and public keys it wrote, never a seed.
  --cluster ID       the CLUSTER every service of the deployment runs with (env CLUSTER). Given
                     several times (a hub several clusters' services use): one auth.conf with the
                     users of every cluster, each cluster's seeds in DIR/<ID>/
  --subject-prefix P the SUBJECT_PREFIX the services run with (default none); once for every
                     cluster, or once per --cluster, in the same order (disjoint prefixes)
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
  --exports-domain D the JetStream domain of the cluster set's exports bucket, as the mcs runs
                     with it (env EXPORTS_DOMAIN): the hub's (hub) on a leaf; unset: this server's
  --exports-bucket B the exports bucket's name (env EXPORTS_BUCKET; default exports)
  --kube-stream, --slices-stream, --dlq-stream, --events-stream, --svc-bucket, --views-bucket,
  --hinted-bucket    the names the services run with, when not the defaults (env KUBE_STREAM,
                     ...; default KUBE, SLICES, DLQ, EVENTS, svc, views, hinted)`;

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
  cluster: { type: 'string', multiple: true },
  out: { type: 'string', short: 'o' },
  agents: { type: 'string' },
  leafnodes: { type: 'string' },
  'hub-url': { type: 'string' },
  force: { type: 'boolean' },
  'if-missing': { type: 'boolean' },
  'exports-domain': { type: 'string' },
  'exports-bucket': { type: 'string' },
  ...Object.fromEntries(Object.keys(NAME_OPTIONS).map((k) => [k, { type: 'string', multiple: k === 'subject-prefix' }])),
} as const;

export interface NatsAuthCommandLine {
  readonly help: boolean;
  /**
   * The clusters the keys are for, with the names and the exports bucket their services run with.
   * Several: one block for a server they share (a hub), each cluster's seeds in DIR/<cluster>/.
   */
  readonly scopes: readonly PermissionScope[];
  readonly out: string;
  /** Agent names, each its own key; undefined: one shared agent key. */
  readonly agents: readonly string[] | undefined;
  /** A hub's leaves, each a leafnode user, and the URL they dial; undefined: no leafnode files. */
  readonly leafnodes: { readonly names: readonly string[]; readonly hubUrl: string } | undefined;
  readonly force: boolean;
  readonly ifMissing: boolean;
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

type Flags = Readonly<Record<string, string | boolean | readonly string[] | undefined>>;

/** The names shared by every cluster (all but the subject prefix), from the flags or else the env. */
function namesOf(flags: Flags, env: Env): BackboneNames {
  const names: Record<string, string> = { ...DEFAULT_NAMES };
  for (const [flag, { env: variable, key }] of Object.entries(NAME_OPTIONS)) {
    if (key === 'prefix') continue;
    const value = flags[flag] ?? env[variable];
    if (typeof value !== 'string') continue;
    if (!NAME_TOKEN.test(value)) throw new UsageError(`--${flag} ${JSON.stringify(value)}: must be [A-Za-z0-9_-]+`);
    names[key] = value;
  }
  return names as unknown as BackboneNames;
}

/** Each cluster's subject prefix: one for all (a flag or SUBJECT_PREFIX), or one flag per cluster, paired in order. */
function prefixesOf(given: readonly string[] | undefined, env: Env, clusters: readonly string[]): string[] {
  const prefixes = given ?? (env['SUBJECT_PREFIX'] === undefined ? [''] : [env['SUBJECT_PREFIX']]);
  for (const p of prefixes) if (!PREFIX.test(p)) throw new UsageError(`--subject-prefix ${JSON.stringify(p)}: must be empty or dot-terminated tokens, e.g. "t1."`);
  if (prefixes.length === 1) return clusters.map(() => prefixes[0] as string);
  if (prefixes.length !== clusters.length) throw new UsageError(`nats-auth: ${prefixes.length} --subject-prefix for ${clusters.length} --cluster: give one for all, or one per cluster in the same order`);
  // Clusters sharing a server need disjoint subject spaces (infra/README.md, "Multi-cluster").
  const twice = prefixes.find((p, i) => prefixes.indexOf(p) !== i);
  if (twice !== undefined) throw new UsageError(`nats-auth: --subject-prefix ${JSON.stringify(twice)} is given for two clusters: each needs its own`);
  return [...prefixes];
}

/** The exports bucket the mcs role reaches (its name and domain), when a flag or the env names one. */
function exportsOf(flags: Flags, env: Env): PermissionScope['exports'] {
  const bucket = flags['exports-bucket'] ?? env['EXPORTS_BUCKET'];
  const domain = flags['exports-domain'] ?? env['EXPORTS_DOMAIN'];
  if (typeof bucket === 'string' && !NAME_TOKEN.test(bucket)) throw new UsageError(`--exports-bucket ${JSON.stringify(bucket)}: must be [A-Za-z0-9_-]+`);
  // A domain is one subject token of the API prefix ($JS.<domain>.API).
  if (typeof domain === 'string' && !NAME_TOKEN.test(domain)) throw new UsageError(`--exports-domain ${JSON.stringify(domain)}: must be [A-Za-z0-9_-]+`);
  if (typeof bucket !== 'string' && typeof domain !== 'string') return undefined;
  return { ...(typeof bucket === 'string' ? { bucket } : {}), ...(typeof domain === 'string' ? { domain } : {}) };
}

/** Parses the arguments after `nats-auth`; `env` supplies CLUSTER and the names when no flag does. */
export function parseNatsAuthCommandLine(argv: readonly string[], env: Env): NatsAuthCommandLine {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`nats-auth: ${(err instanceof Error ? err.message : String(err)).split('\n')[0] ?? ''}`);
  }
  const v = parsed.values as Flags;
  const help = v['help'] === true;
  const force = v['force'] === true;
  const ifMissing = v['if-missing'] === true;
  const base = { help, force, ifMissing, agents: undefined, leafnodes: undefined, scopes: [], out: '' };
  if (help) return base;
  if (parsed.positionals.length > 0) throw new UsageError(`nats-auth: unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
  if (force && ifMissing) throw new UsageError('nats-auth: give --force or --if-missing, not both');
  const clusters = (v['cluster'] as readonly string[] | undefined) ?? (env['CLUSTER'] === undefined ? [] : [env['CLUSTER']]);
  if (clusters.length === 0 || clusters.includes('')) throw new UsageError('nats-auth needs --cluster ID: the CLUSTER the services run with (the permissions are scoped to it)');
  const twice = clusters.find((c, i) => clusters.indexOf(c) !== i);
  if (twice !== undefined) throw new UsageError(`nats-auth: --cluster ${JSON.stringify(twice)} is given twice`);
  // Several clusters' seeds go to DIR/<cluster>/.
  if (clusters.length > 1) for (const c of clusters) if (!FILE_NAME_PART.test(c)) throw new UsageError(`nats-auth: --cluster ${JSON.stringify(c)} cannot name its keys' directory (letters, digits, '.', '_' and '-', not starting with '.', '_' or '-')`);
  const out = v['out'];
  if (typeof out !== 'string' || out === '') throw new UsageError('nats-auth needs --out DIR: where the seeds and auth.conf go');
  // writeNatsAuth checks the agents' names (they become file names) before it writes anything.
  const agents = typeof v['agents'] === 'string' ? v['agents'].split(',').map((a) => a.trim()) : undefined;
  const leafnodes = leafnodesOf(typeof v['leafnodes'] === 'string' ? v['leafnodes'] : undefined, typeof v['hub-url'] === 'string' ? v['hub-url'] : undefined);
  const names = namesOf(v, env);
  const prefixes = prefixesOf(v['subject-prefix'] as readonly string[] | undefined, env, clusters);
  const exports = exportsOf(v, env);
  const scopes = clusters.map((cluster, i) => ({ cluster, names: { ...names, prefix: prefixes[i] as string }, ...(exports === undefined ? {} : { exports }) }));
  return { ...base, scopes, out, agents, leafnodes };
}
