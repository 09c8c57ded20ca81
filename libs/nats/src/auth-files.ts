// The files of a locked-down NATS: one nkey seed file per role (or per agent) and the server's
// `authorization` block, in one directory. The stack writes them for its own servers; operators
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

export interface WriteNatsAuthOptions {
  readonly dir: string;
  /** The cluster (and names) the permissions are scoped to. */
  readonly scope: PermissionScope;
  /** One key per named agent (revocable one by one); unset or empty: one shared agent key. */
  readonly agents?: readonly string[];
  /** Replace seed files that exist (a key rotation); otherwise refuse. */
  readonly force?: boolean;
}

export interface NatsAuthFiles {
  readonly dir: string;
  /** The `authorization { ... }` block's file. */
  readonly authConf: string;
  /** Each written seed file with its user (role and public key); never the seed. */
  readonly users: readonly (NkeyUser & { readonly seedFile: string })[];
}

const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/;

/**
 * Generates a key per role (and per agent) and writes the seeds (mode 0600, directory 0700) and
 * the authorization block. Checks everything before writing anything: an existing seed file
 * without `force`, or an agent name unfit for a file name, throws InvalidArgumentError and leaves
 * the directory as it was.
 */
export function writeNatsAuth(opts: WriteNatsAuthOptions): NatsAuthFiles {
  const agents = opts.agents ?? [];
  for (const a of agents) if (!AGENT_NAME.test(a)) throw new InvalidArgumentError('agents', `${JSON.stringify(a)} is not a usable agent name (letters, digits, '.', '_', '-'; at most 253)`);
  if (new Set(agents).size !== agents.length) throw new InvalidArgumentError('agents', 'an agent is named twice');
  const planned = [
    ...SERVICE_ROLES.map((role) => ({ role, seedFile: roleSeedFile(opts.dir, role) })),
    ...(agents.length === 0 ? [{ role: 'agent' as const, seedFile: roleSeedFile(opts.dir, 'agent') }] : agents.map((a) => ({ role: 'agent' as const, seedFile: roleSeedFile(opts.dir, 'agent', a) }))),
  ];
  if (opts.force !== true) {
    const existing = planned.find((p) => existsSync(p.seedFile));
    if (existing !== undefined) throw new InvalidArgumentError('out', `${existing.seedFile} exists: keys are never replaced by accident (give --force to rotate them all)`);
  }
  const keys = generateRoleNkeys(planned.map((p) => p.role));
  const users = planned.map((p, i) => ({ role: p.role, nkey: (keys[i] as { nkey: string }).nkey, seedFile: p.seedFile }));
  // Rendered before any write, so a bad scope fails with nothing written.
  const block = renderAuthorization(users, opts.scope);
  mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
  chmodSync(opts.dir, 0o700);
  planned.forEach((p, i) => writeFileSync(p.seedFile, `${(keys[i] as { seed: string }).seed}\n`, { mode: 0o600 }));
  const authConf = join(opts.dir, AUTH_CONF_FILE);
  writeFileSync(authConf, `# Generated for cluster ${JSON.stringify(opts.scope.cluster)}: one nkey user per role, least privilege.\n${block}`, { mode: 0o644 });
  return { dir: opts.dir, authConf, users };
}

/** connectNats options of `role` with its seed from `dir` (writeNatsAuth's); none when `dir` is undefined (an open server). */
export function roleCredentials(dir: string | undefined, role: NatsRole): { nkeySeedFile?: string; role?: NatsRole } {
  return dir === undefined ? {} : { nkeySeedFile: roleSeedFile(dir, role), role };
}
