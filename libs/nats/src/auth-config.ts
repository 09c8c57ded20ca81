// The nats-server `authorization` block that locks NATS down: one nkey user per role (or per
// agent), each with its role's permissions (permissions.ts), and the nkey pairs to hand out.
// Pure apart from the key generation's randomness; writing files is the caller's business.

import { InvalidArgumentError } from '@slicemesh/model';
import { nkeys } from '@nats-io/transport-node';
import { rolePermissions } from './permissions.ts';
import type { NatsPermissions, NatsRole, PermissionScope, SubjectPermission } from './permissions.ts';

/** One nkey user of the server: its public key (U...) and the role whose permissions it gets. */
export interface NkeyUser {
  readonly role: NatsRole;
  readonly nkey: string;
  /**
   * The cluster (and names) its role's permissions are scoped to, when it is not the block's: a
   * server shared by several clusters (a hub) holds the users of each in one block.
   */
  readonly scope?: PermissionScope;
}

/** A generated user key pair. The seed (S...) is the secret the role's process reads. */
export interface RoleNkey extends NkeyUser {
  readonly seed: string;
}

const utf8 = new TextDecoder();

/** Whether `key` is a well-formed public user nkey (U..., checksum included). */
export function isUserNkey(key: string): boolean {
  if (!key.startsWith('U')) return false;
  try {
    nkeys.fromPublic(key);
    return true;
  } catch {
    return false;
  }
}

/** A fresh user nkey pair for each of `roles` (give every agent its own, so one can be revoked). */
export function generateRoleNkeys(roles: readonly NatsRole[]): RoleNkey[] {
  return roles.map((role) => {
    const kp = nkeys.createUser();
    return { role, nkey: kp.getPublicKey(), seed: utf8.decode(kp.getSeed()) };
  });
}

/** A string in the server's config syntax: double-quoted, so `$`, `>` and `*` stay literal. */
const q = (s: string): string => JSON.stringify(s);

function renderList(xs: readonly string[]): string {
  return `[${xs.map(q).join(', ')}]`;
}

function renderDirection(p: SubjectPermission): string {
  return p.deny.length === 0 ? `{ allow: ${renderList(p.allow)} }` : `{ allow: ${renderList(p.allow)}, deny: ${renderList(p.deny)} }`;
}

function renderPermissions(p: NatsPermissions, indent: string): string {
  return `{\n${indent}  publish: ${renderDirection(p.publish)}\n${indent}  subscribe: ${renderDirection(p.subscribe)}\n${indent}}`;
}

/**
 * The `authorization { users = [...] }` block for nats-server (2.9 and later): each user
 * authenticates with its nkey and gets the permissions of its role in its own scope, or in
 * `scope` when it has none. Users of the default account, so JetStream works for them with
 * `jetstream {}` enabled on the server. Throws InvalidArgumentError for a key that is not a public
 * user nkey or appears twice, and for a user with no scope at all.
 */
export function renderAuthorization(users: readonly NkeyUser[], scope?: PermissionScope): string {
  const seen = new Set<string>();
  for (const u of users) {
    if (!isUserNkey(u.nkey)) throw new InvalidArgumentError('nkey', `the ${u.role} user's key must be a public user nkey (U...), got ${JSON.stringify(u.nkey.slice(0, 4))}...`);
    if (seen.has(u.nkey)) throw new InvalidArgumentError('nkey', `${u.nkey} is given twice`);
    if (u.scope === undefined && scope === undefined) throw new InvalidArgumentError('scope', `the ${u.role} user ${u.nkey} has no cluster: give it a scope, or the block one`);
    seen.add(u.nkey);
  }
  const entries = users.map((u) => {
    // A user of another scope than the block's names its cluster, so a reader of the block can tell the users apart.
    const comment = u.scope === undefined ? u.role : `${u.role} of cluster ${JSON.stringify(u.scope.cluster)}`;
    const permissions = rolePermissions(u.role, (u.scope ?? scope) as PermissionScope);
    return `    # ${comment}\n    { nkey: ${q(u.nkey)}, permissions: ${renderPermissions(permissions, '    ')} }`;
  });
  return `authorization {\n  users = [\n${entries.join('\n')}\n  ]\n}\n`;
}
