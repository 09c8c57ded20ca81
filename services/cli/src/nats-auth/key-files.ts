// The files `slicemesh nats-auth` writes: a seed per role (or per agent) and the server's
// authorization block for their public keys (writeNatsAuth of @slicemesh/nats, as `npm start`
// writes them) and, for a hub, its leaves' credentials. Seeds and passwords are secrets: mode
// 0600 in a 0700 directory, never printed.

import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InvalidArgumentError } from '@slicemesh/model';
import type { NatsRole, PermissionScope } from '@slicemesh/nats';
import { AUTH_CONF_FILE, seedFilesOf, writeNatsAuth } from '@slicemesh/nats';
import { UsageError } from '../cli-error.ts';
import { LEAFNODES_CONF, generateLeafnodeCredentials, leafnodeRemoteFile, renderLeafnodeRemote, renderLeafnodeUsers } from './leafnode-files.ts';

export interface WriteKeysOptions {
  readonly dir: string;
  /** The clusters (names, exports bucket) the permissions are scoped to. */
  readonly scopes: readonly PermissionScope[];
  readonly agents: readonly string[] | undefined;
  /** A hub's leaves and the leafnode URL they dial: their credential files too. */
  readonly leafnodes: { readonly names: readonly string[]; readonly hubUrl: string } | undefined;
  /** Replace existing seeds and passwords. */
  readonly force: boolean;
  /** Keep a complete existing set as it is. */
  readonly ifMissing: boolean;
}

export type WriteKeysResult =
  | { readonly kept: true }
  | {
      readonly kept: false;
      readonly keys: readonly { readonly path: string; readonly role: NatsRole; readonly cluster: string; readonly nkey: string }[];
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

function fileError(path: string, err: unknown): UsageError {
  const code = (err as NodeJS.ErrnoException).code;
  return new UsageError(`nats-auth: cannot write ${path} (${code ?? (err instanceof Error ? err.message : String(err))})`);
}

/** A secret: owner-only, reported by its path alone. */
async function writeSecret(path: string, text: string): Promise<void> {
  try {
    await writeFile(path, text, { mode: 0o600 });
  } catch (err) {
    throw fileError(path, err);
  }
}

/**
 * Generates the keys (and leaf passwords) and writes them with auth.conf into `opts.dir`. Throws
 * UsageError, naming the file, when one exists and neither --force nor --if-missing allows it,
 * when only part of the set exists with --if-missing, or when a file cannot be written.
 */
export async function writeKeyFiles(opts: WriteKeysOptions): Promise<WriteKeysResult> {
  const { dir, leafnodes: leaves } = opts;
  const leafFiles = leaves === undefined ? [] : [join(dir, LEAFNODES_CONF), ...leaves.names.map((n) => join(dir, leafnodeRemoteFile(n)))];
  const everything = [...seedFilesOf(dir, opts.agents, opts.scopes.map((s) => s.cluster)).map((f) => f.path), ...leafFiles, join(dir, AUTH_CONF_FILE)];
  const present: string[] = [];
  for (const f of everything) if (await exists(f)) present.push(f);
  if (opts.ifMissing && present.length > 0) {
    if (present.length === everything.length) return { kept: true };
    const missing = everything.find((f) => !present.includes(f)) ?? '';
    throw new UsageError(`nats-auth: ${dir} holds some of the files but not ${missing}; --force writes a new set (every process then needs its new seed)`);
  }
  // writeNatsAuth refuses existing seeds itself; the leaves' passwords are checked here, first.
  const leafPresent = leafFiles.find((f) => present.includes(f));
  if (leafPresent !== undefined && !opts.force) throw new UsageError(`nats-auth: --out: ${leafPresent} exists: passwords are never replaced by accident (give --force to rotate them all)`);
  let written;
  try {
    written = writeNatsAuth({ dir, scope: opts.scopes, ...(opts.agents === undefined ? {} : { agents: opts.agents }), force: opts.force });
  } catch (err) {
    if (err instanceof InvalidArgumentError) throw new UsageError(`nats-auth: --${err.argument}: ${err.reason}`);
    throw fileError(dir, err);
  }
  let leafnodes: { users: string; remotes: { name: string; path: string }[] } | undefined;
  if (leaves !== undefined) {
    const creds = generateLeafnodeCredentials(leaves.names);
    const remotes = creds.map((c) => ({ name: c.name, path: join(dir, leafnodeRemoteFile(c.name)), text: renderLeafnodeRemote(c, leaves.hubUrl) }));
    for (const r of remotes) await writeSecret(r.path, `# Leaf ${JSON.stringify(r.name)}'s login at the hub, written by slicemesh nats-auth: include it from its configuration, whose remote dials url: $HUB_LEAF_URL.\n${r.text}`);
    const users = join(dir, LEAFNODES_CONF);
    await writeSecret(users, `# The hub's leafnode users (${leaves.names.join(', ')}), written by slicemesh nats-auth: include it inside the hub's leafnodes {} block.\n${renderLeafnodeUsers(creds)}`);
    leafnodes = { users, remotes: remotes.map((r) => ({ name: r.name, path: r.path })) };
  }
  return { kept: false, keys: written.users.map((u) => ({ path: u.seedFile, role: u.role, cluster: u.cluster, nkey: u.nkey })), authConf: written.authConf, ...(leafnodes === undefined ? {} : { leafnodes }) };
}
