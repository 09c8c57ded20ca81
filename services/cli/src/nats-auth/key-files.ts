// The files `slicemesh nats-auth` writes: a seed per role (or per agent), the server's
// authorization block for all of their public keys and, for a hub, its leaves' credentials.
// Seeds and passwords are secrets: mode 0600 in a 0700 directory, never printed, never left
// half-written (each goes through a temporary file).

import { chmod, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BackboneNames, NatsRole } from '@slicemesh/nats';
import { generateRoleNkeys, renderAuthorization } from '@slicemesh/nats';
import { UsageError } from '../cli-error.ts';
import { LEAFNODES_CONF, generateLeafnodeCredentials, leafnodeRemoteFile, renderLeafnodeRemote, renderLeafnodeUsers } from './leafnode-files.ts';

/** The server's include file, beside the seeds. */
export const AUTH_CONF = 'auth.conf';

/** Every role but the agents, which get one shared key or one each (keyFilesOf). */
export const SERVICE_ROLES: readonly NatsRole[] = ['watcher', 'slicer', 'hints', 'publisher', 'reader', 'admin'];

export interface KeyFile {
  /** File name inside the output directory. */
  readonly file: string;
  readonly role: NatsRole;
}

/** `<role>.nk` per service role, then `agent.nk`, or `agent-<name>.nk` per named agent. */
export function keyFilesOf(agents: readonly string[] | undefined): KeyFile[] {
  const agentFiles = agents === undefined ? [{ file: 'agent.nk', role: 'agent' as const }] : agents.map((a) => ({ file: `agent-${a}.nk`, role: 'agent' as const }));
  return [...SERVICE_ROLES.map((role) => ({ file: `${role}.nk`, role })), ...agentFiles];
}

export interface WriteKeysOptions {
  readonly dir: string;
  readonly cluster: string;
  readonly names: BackboneNames;
  readonly agents: readonly string[] | undefined;
  /** A hub's leaves and the leafnode URL they dial: their credential files too. */
  readonly leafnodes: { readonly names: readonly string[]; readonly hubUrl: string } | undefined;
  /** Replace existing seeds. */
  readonly force: boolean;
  /** Keep a complete existing set as it is. */
  readonly ifMissing: boolean;
}

export type WriteKeysResult =
  | { readonly kept: true; readonly files: readonly string[] }
  | {
      readonly kept: false;
      readonly keys: readonly { readonly path: string; readonly role: NatsRole; readonly nkey: string }[];
      readonly authConf: string;
      /** The hub's leafnode users file and each leaf's remote file, when asked for. */
      readonly leafnodes?: { readonly users: string; readonly remotes: readonly { readonly name: string; readonly path: string }[] };
    };

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/** Writes `text` to `path` with `mode` through a temporary file, so a reader never sees half of it. */
async function writeWhole(path: string, text: string, mode: number): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    await writeFile(tmp, text, { mode, flag: 'wx' });
    // The umask may have narrowed the mode; it must not be wider either way.
    await chmod(tmp, mode);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

function fileError(path: string, err: unknown): UsageError {
  const code = (err as NodeJS.ErrnoException).code;
  return new UsageError(`nats-auth: cannot write ${path} (${code ?? (err instanceof Error ? err.message : String(err))})`);
}

/** A secret: owner-only, reported by its path alone. */
async function writeSecret(path: string, text: string): Promise<void> {
  try {
    await writeWhole(path, text, 0o600);
  } catch (err) {
    throw fileError(path, err);
  }
}

/**
 * Generates the keys and writes them with auth.conf into `opts.dir`. Throws UsageError, naming
 * the file, when a seed exists and neither --force nor --if-missing allows it, when only part of
 * the set exists with --if-missing, or when a file cannot be written.
 */
export async function writeKeyFiles(opts: WriteKeysOptions): Promise<WriteKeysResult> {
  const files = keyFilesOf(opts.agents);
  const dir = opts.dir;
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // The directory holds secrets: only its owner may list or enter it, also when it existed.
    await chmod(dir, 0o700);
  } catch (err) {
    throw fileError(dir, err);
  }
  const leaves = opts.leafnodes;
  // The secrets, which are never replaced without --force, and everything --if-missing expects.
  const secrets = [...files.map((f) => f.file), ...(leaves === undefined ? [] : [LEAFNODES_CONF, ...leaves.names.map(leafnodeRemoteFile)])];
  const present: string[] = [];
  for (const f of secrets) if (await exists(join(dir, f))) present.push(f);
  if (opts.ifMissing) {
    const all = [...secrets, AUTH_CONF];
    const confPresent = await exists(join(dir, AUTH_CONF));
    if (present.length === secrets.length && confPresent) return { kept: true, files: all.map((f) => join(dir, f)) };
    if (present.length > 0 || confPresent) {
      const missing = all.filter((f) => f !== AUTH_CONF ? !present.includes(f) : !confPresent);
      throw new UsageError(`nats-auth: ${dir} holds some of the files but not ${join(dir, missing[0] ?? '')}; --force writes a new set (every process then needs its new seed)`);
    }
  } else if (present.length > 0 && !opts.force) {
    throw new UsageError(`nats-auth: ${join(dir, present[0] ?? '')} exists; --force replaces every key (every process then needs its new seed)`);
  }
  const generated = generateRoleNkeys(files.map((f) => f.role));
  const keys = files.map((f, i) => ({ ...f, path: join(dir, f.file), ...(generated[i] as { nkey: string; seed: string }) }));
  const header =
    `# nkey users of cluster ${JSON.stringify(opts.cluster)}, written by slicemesh nats-auth: ${keys.map((k) => `${k.file} (${k.role})`).join(', ')}.\n` +
    '# Include it from the nats-server configuration (include "auth/auth.conf"); the seeds stay with the processes.\n';
  const authConf = header + renderAuthorization(keys, { cluster: opts.cluster, names: opts.names });
  for (const k of keys) await writeSecret(k.path, `${k.seed}\n`);
  let leafnodes: { users: string; remotes: { name: string; path: string }[] } | undefined;
  if (leaves !== undefined) {
    const creds = generateLeafnodeCredentials(leaves.names);
    const remotes = creds.map((c) => ({ name: c.name, path: join(dir, leafnodeRemoteFile(c.name)), text: renderLeafnodeRemote(c, leaves.hubUrl) }));
    for (const r of remotes) await writeSecret(r.path, `# Leaf ${JSON.stringify(r.name)}'s login at the hub, written by slicemesh nats-auth: include it from its configuration, whose remote dials url: $HUB_LEAF_URL.\n${r.text}`);
    const users = join(dir, LEAFNODES_CONF);
    await writeSecret(users, `# The hub's leafnode users (${leaves.names.join(', ')}), written by slicemesh nats-auth: include it inside the hub's leafnodes {} block.\n${renderLeafnodeUsers(creds)}`);
    leafnodes = { users, remotes: remotes.map((r) => ({ name: r.name, path: r.path })) };
  }
  // Last: a server never includes a block for keys that were not all written.
  const confPath = join(dir, AUTH_CONF);
  try {
    await writeWhole(confPath, authConf, 0o644);
  } catch (err) {
    throw fileError(confPath, err);
  }
  return { kept: false, keys: keys.map((k) => ({ path: k.path, role: k.role, nkey: k.nkey })), authConf: confPath, ...(leafnodes === undefined ? {} : { leafnodes }) };
}
