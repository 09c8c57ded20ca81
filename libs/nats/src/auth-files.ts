// The files of a locked-down NATS: one nkey seed file per role (or per agent) and the server's
// `authorization` block, in one directory (a server several clusters share: the block of all
// their users, and each cluster's seeds in a directory of its own). The stack writes them for its own servers; operators
// write them with `slicemesh nats-auth`; services read their seed through NATS_NKEY_SEED_FILE.

import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError } from '@slicemesh/model';
import { generateRoleNkeys, renderAuthorization } from './auth-config.ts';
import type { NkeyUser } from './auth-config.ts';
import type { NatsRole, PermissionScope } from './permissions.ts';

/** The authorization block's file name in the directory, for nats-server's `include`. */
export const AUTH_CONF_FILE = 'auth.conf';

/** Every role but the agents', which get one key each or one shared key. */
export const SERVICE_ROLES: readonly Exclude<NatsRole, 'agent'>[] = ['watcher', 'slicer', 'hints', 'publisher', 'mcs', 'reader', 'admin'];

/** `<dir>/<role>.nk`; an agent's own `<dir>/agent-<name>.nk` when `agent` is given. */
export function roleSeedFile(dir: string, role: NatsRole, agent?: string): string {
  if (agent !== undefined && role !== 'agent') throw new InvalidArgumentError('agent', `only the agent role has per-agent keys, not ${role}`);
  return join(dir, agent === undefined ? `${role}.nk` : `agent-${agent}.nk`);
}

/**
 * Where the seeds of `cluster` go in a block shared by several clusters (a hub): `<dir>/<cluster>/`.
 * A block of one cluster keeps them in `dir` itself.
 */
export function clusterKeyDir(dir: string, cluster: string): string {
  return join(dir, cluster);
}

/** One seed file of a key set: its path, the role it logs in as and the cluster of its scope. */
export interface SeedFile {
  readonly path: string;
  readonly role: NatsRole;
  readonly cluster: string;
}

/**
 * Where writeNatsAuth puts the seeds of `clusters`: per cluster every service role's, then the
 * agents' (one shared `agent.nk` when `agents` is unset or empty, else one per name); in `dir` for
 * one cluster, in clusterKeyDir(dir, cluster) for several. Pure: for tools that check a key set.
 */
export function seedFilesOf(dir: string, agents: readonly string[] | undefined, clusters: readonly string[]): SeedFile[] {
  return clusters.flatMap((cluster) => {
    const d = clusters.length > 1 ? clusterKeyDir(dir, cluster) : dir;
    const agentFiles = agents === undefined || agents.length === 0 ? [{ path: roleSeedFile(d, 'agent'), role: 'agent' as const }] : agents.map((a) => ({ path: roleSeedFile(d, 'agent', a), role: 'agent' as const }));
    return [...SERVICE_ROLES.map((role) => ({ path: roleSeedFile(d, role), role })), ...agentFiles].map((f) => ({ ...f, cluster }));
  });
}

export interface WriteNatsAuthOptions {
  readonly dir: string;
  /**
   * The cluster (and names) the permissions are scoped to. Several, for a server that clusters
   * share (a hub): one block holds the users of each, every cluster's seeds in
   * clusterKeyDir(dir, cluster).
   */
  readonly scope: PermissionScope | readonly PermissionScope[];
  /** One key per named agent (revocable one by one), in every cluster; unset or empty: one shared agent key. */
  readonly agents?: readonly string[];
  /** Replace seed files that exist (a key rotation); otherwise refuse. */
  readonly force?: boolean;
}

export interface NatsAuthFiles {
  readonly dir: string;
  /** The `authorization { ... }` block's file. */
  readonly authConf: string;
  /** Each written seed file with its user (role, public key and cluster); never the seed. */
  readonly users: readonly (NkeyUser & { readonly cluster: string; readonly seedFile: string })[];
}

/** Agent and cluster names become file names: no path, no hidden file. */
const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/;

/** The scopes of `opts`, checked: at least one, each cluster once and, when several, fit for a directory name. */
function scopesOf(scope: WriteNatsAuthOptions['scope']): readonly PermissionScope[] {
  const scopes = Array.isArray(scope) ? (scope as readonly PermissionScope[]) : [scope as PermissionScope];
  if (scopes.length === 0) throw new InvalidArgumentError('scope', 'no cluster to write keys for');
  const clusters = scopes.map((s) => s.cluster);
  const twice = clusters.find((c, i) => clusters.indexOf(c) !== i);
  if (twice !== undefined) throw new InvalidArgumentError('scope', `cluster ${JSON.stringify(twice)} is given twice`);
  if (scopes.length > 1) {
    for (const c of clusters) if (!FILE_NAME.test(c)) throw new InvalidArgumentError('scope', `cluster ${JSON.stringify(c)} cannot name its keys' directory (letters, digits, '.', '_', '-'; at most 253)`);
  }
  return scopes;
}

/**
 * Generates a key per role (and per agent) of every cluster and writes the seeds (mode 0600,
 * directories 0700) and the authorization block. Checks everything before writing anything: an
 * existing seed file without `force`, an agent or cluster name unfit for a file name, or a cluster
 * given twice throws InvalidArgumentError and leaves the directory as it was.
 */
export function writeNatsAuth(opts: WriteNatsAuthOptions): NatsAuthFiles {
  const agents = opts.agents ?? [];
  for (const a of agents) if (!FILE_NAME.test(a)) throw new InvalidArgumentError('agents', `${JSON.stringify(a)} is not a usable agent name (letters, digits, '.', '_', '-'; at most 253)`);
  if (new Set(agents).size !== agents.length) throw new InvalidArgumentError('agents', 'an agent is named twice');
  const scopes = scopesOf(opts.scope);
  const shared = scopes.length > 1;
  const scopeOf = new Map(scopes.map((s) => [s.cluster, s]));
  const planned = seedFilesOf(opts.dir, agents, scopes.map((s) => s.cluster)).map((f) => ({
    role: f.role,
    seedFile: f.path,
    dir: shared ? clusterKeyDir(opts.dir, f.cluster) : opts.dir,
    scope: scopeOf.get(f.cluster) as PermissionScope,
  }));
  if (opts.force !== true) {
    const existing = planned.find((p) => existsSync(p.seedFile));
    if (existing !== undefined) throw new InvalidArgumentError('out', `${existing.seedFile} exists: keys are never replaced by accident (give --force to rotate them all)`);
  }
  const keys = generateRoleNkeys(planned.map((p) => p.role));
  const users = planned.map((p, i) => ({ role: p.role, nkey: (keys[i] as { nkey: string }).nkey, cluster: p.scope.cluster, seedFile: p.seedFile }));
  // Rendered before any write, so a bad scope fails with nothing written. One cluster: the block's
  // scope; several: each user its own.
  const block = shared ? renderAuthorization(users.map((u, i) => ({ role: u.role, nkey: u.nkey, scope: (planned[i] as { scope: PermissionScope }).scope }))) : renderAuthorization(users, scopes[0]);
  for (const d of new Set([opts.dir, ...planned.map((p) => p.dir)])) {
    mkdirSync(d, { recursive: true, mode: 0o700 });
    chmodSync(d, 0o700);
  }
  planned.forEach((p, i) => writeFileSync(p.seedFile, `${(keys[i] as { seed: string }).seed}\n`, { mode: 0o600 }));
  const authConf = join(opts.dir, AUTH_CONF_FILE);
  const what = shared ? `clusters ${scopes.map((s) => JSON.stringify(s.cluster)).join(', ')}` : `cluster ${JSON.stringify(scopes[0]?.cluster)}`;
  writeFileSync(authConf, `# Generated for ${what}: one nkey user per role, least privilege.\n${block}`, { mode: 0o644 });
  return { dir: opts.dir, authConf, users };
}

/** connectNats options of `role` with its seed from `dir` (writeNatsAuth's); none when `dir` is undefined (an open server). */
export function roleCredentials(dir: string | undefined, role: NatsRole): { nkeySeedFile?: string; role?: NatsRole } {
  return dir === undefined ? {} : { nkeySeedFile: roleSeedFile(dir, role), role };
}
