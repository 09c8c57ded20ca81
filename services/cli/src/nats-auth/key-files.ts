// The files `slicemesh nats-auth` writes: a seed per role (or per agent) and the server's
// authorization block for all of their public keys. Seeds are secrets: mode 0600 in a 0700
// directory, never printed, never left half-written (each goes through a temporary file).

import { chmod, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BackboneNames, NatsRole } from '@slicemesh/nats';
import { generateRoleNkeys, renderAuthorization } from '@slicemesh/nats';
import { UsageError } from '../cli-error.ts';

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
  /** Replace existing seeds. */
  readonly force: boolean;
  /** Keep a complete existing set as it is. */
  readonly ifMissing: boolean;
}

export type WriteKeysResult =
  | { readonly kept: true; readonly files: readonly string[] }
  | { readonly kept: false; readonly keys: readonly { readonly path: string; readonly role: NatsRole; readonly nkey: string }[]; readonly authConf: string };

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
  const present: string[] = [];
  for (const f of files) if (await exists(join(dir, f.file))) present.push(f.file);
  if (opts.ifMissing) {
    const confPresent = await exists(join(dir, AUTH_CONF));
    if (present.length === files.length && confPresent) return { kept: true, files: [...files.map((f) => join(dir, f.file)), join(dir, AUTH_CONF)] };
    if (present.length > 0) {
      const missing = [...files.map((f) => f.file).filter((f) => !present.includes(f)), ...(confPresent ? [] : [AUTH_CONF])];
      throw new UsageError(`nats-auth: ${dir} holds some of the keys but not ${join(dir, missing[0] ?? '')}; --force writes a new set (every process then needs its new seed)`);
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
  for (const k of keys) {
    try {
      await writeWhole(k.path, `${k.seed}\n`, 0o600);
    } catch (err) {
      throw fileError(k.path, err);
    }
  }
  // Last: a server never includes a block for keys that were not all written.
  const confPath = join(dir, AUTH_CONF);
  try {
    await writeWhole(confPath, authConf, 0o644);
  } catch (err) {
    throw fileError(confPath, err);
  }
  return { kept: false, keys: keys.map((k) => ({ path: k.path, role: k.role, nkey: k.nkey })), authConf: confPath };
}
