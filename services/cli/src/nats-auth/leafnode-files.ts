// Credentials for the leafnode connections of a hub (infra/nats hub.conf, leaf-*.conf): the hub's
// leafnode listener takes one user per leaf, and each leaf dials the hub with its own. On
// nats-server 2.9 a remote without operator JWTs logs in only with a user and password in its URL
// (nkeys and `credentials` files need the operator mode), so that is what these are.

import { randomBytes } from 'node:crypto';

/** The hub's include file, inside its `leafnodes {}` block. */
export const LEAFNODES_CONF = 'leafnodes.conf';

/** The include file of leaf `name`: the variable its remote's url names. */
export const leafnodeRemoteFile = (name: string): string => `leafnode-${name}.conf`;

/** The variable a leaf's configuration uses as its remote url: `remotes: [{ url: $HUB_LEAF_URL }]`. */
export const HUB_LEAF_URL_VARIABLE = 'HUB_LEAF_URL';

export interface LeafnodeCredential {
  readonly name: string;
  readonly password: string;
}

/** A fresh random password per leaf: 192 bits, URL-safe, so it sits in the url unescaped. */
export function generateLeafnodeCredentials(names: readonly string[]): LeafnodeCredential[] {
  return names.map((name) => ({ name, password: randomBytes(24).toString('base64url') }));
}

const q = (s: string): string => JSON.stringify(s);

/** The hub's `authorization { users = [...] }` for its leafnode listener. */
export function renderLeafnodeUsers(creds: readonly LeafnodeCredential[]): string {
  const users = creds.map((c) => `    { user: ${q(c.name)}, password: ${q(c.password)} }`);
  return `authorization {\n  users = [\n${users.join('\n')}\n  ]\n}\n`;
}

/**
 * `HUB_LEAF_URL: "<scheme>://<name>:<password>@<host>:<port>"` for leaf `cred.name`, from the hub's
 * leafnode url (checked by the caller: no credentials of its own).
 */
export function renderLeafnodeRemote(cred: LeafnodeCredential, hubUrl: string): string {
  const url = new URL(hubUrl);
  url.username = cred.name;
  url.password = cred.password;
  return `${HUB_LEAF_URL_VARIABLE}: ${q(url.toString().replace(/\/$/, ''))}\n`;
}

/** Throws unless `text` is a leafnode url a remote dials (nats-leaf://, tls://, ws://, wss://) without credentials. */
export function checkHubLeafUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`is not a URL (e.g. nats-leaf://hub:7422)`);
  }
  if (!['nats-leaf:', 'tls:', 'ws:', 'wss:'].includes(url.protocol)) throw new Error(`must be nats-leaf://, tls://, ws:// or wss://, not ${url.protocol}//`);
  if (url.hostname === '') throw new Error('names no host');
  if (url.username !== '' || url.password !== '') throw new Error('must not carry credentials: each leaf gets its own');
  if (url.pathname !== '' && url.pathname !== '/') throw new Error('must not have a path');
  return text;
}
