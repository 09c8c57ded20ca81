// The NATS settings every service declares the same way (spread into defineConfig of
// @slicemesh/runtime): the server list and the replica count of what the service creates.

import { CREDS_FILE_ENV, NKEY_SEED_FILE_ENV } from './credentials.ts';
import { parseNatsUrlSetting } from './servers.ts';

/** A stream or bucket name setting (KUBE_STREAM, SVC_BUCKET, …): one subject token of [A-Za-z0-9_-]. */
export function parseNatsName(text: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) throw new Error('must be [A-Za-z0-9_-]+');
  return text;
}

/** SUBJECT_PREFIX: empty (production) or dot-terminated tokens, which tests isolate runs with. */
export function parseSubjectPrefix(text: string): string {
  if (!/^(?:[A-Za-z0-9_-]+\.)*$/.test(text)) throw new Error('must be empty or dot-terminated tokens of [A-Za-z0-9_-], e.g. "stage."');
  return text;
}

/** NATS_URL / --nats-url: a checked, comma-separated server list (see parseNatsServers). */
export const NATS_URL_SETTING = {
  env: 'NATS_URL',
  flag: '--nats-url',
  default: 'nats://127.0.0.1:4222',
  parse: parseNatsUrlSetting,
  doc: 'NATS server(s) with JetStream, comma-separated (nats://host:port, tls://host:port or host:port; credentials in a URL and tls:// apply to all); the client reconnects across them.',
} as const;

/** ENSURE_STREAMS / --ensure-streams: whether a service declares the log's streams at start. */
export const ENSURE_STREAMS_SETTING = {
  env: 'ENSURE_STREAMS',
  flag: '--ensure-streams',
  default: true,
  parse: 'bool',
  doc: 'Create or update the KUBE, SLICES, DLQ and EVENTS streams at start. false where an admin declares them (a locked-down NATS without declare rights, or a hub whose KUBE sources the leaves\' logs): the service then uses them as they are.',
} as const;

/** NATS_REPLICAS / --nats-replicas: replicas of every stream and KV bucket a service creates or updates at start. */
export const NATS_REPLICAS_SETTING = {
  env: 'NATS_REPLICAS',
  flag: '--nats-replicas',
  optional: true,
  min: 1,
  max: 5,
  parse: 'int',
  doc: 'Replicas of every JetStream stream and KV bucket this service creates or updates at start: 1 on a single server, 3 on a cluster (survives the loss of one server). An existing one with another count is changed to it; give every service the same value. Unset: new ones get 1, existing ones keep their count.',
} as const;

/** NATS_NKEY_SEED_FILE / --nats-nkey-seed-file: the role's nkey seed (see auth-config.ts); unset: no credentials. */
export const NATS_NKEY_SEED_FILE_SETTING = {
  env: NKEY_SEED_FILE_ENV,
  flag: '--nats-nkey-seed-file',
  optional: true,
  parse: 'string',
  doc: "A file holding this service's NATS user nkey seed (SU...), for a server that locks NATS down per role (nkey users with permissions). Unset: connect without credentials.",
} as const;

/** NATS_CREDS_FILE / --nats-creds-file: a .creds file (JWT + seed) for decentralized auth; unset: none. */
export const NATS_CREDS_FILE_SETTING = {
  env: CREDS_FILE_ENV,
  flag: '--nats-creds-file',
  optional: true,
  parse: 'string',
  doc: 'A NATS .creds file (user JWT and nkey seed) for a server using decentralized (operator/account JWT) auth. Give this or NATS_NKEY_SEED_FILE, not both. Unset: none.',
} as const;

/** NATS_JS_DOMAIN / --nats-js-domain: the JetStream domain of the streams and buckets a service uses; unset: its server's own. */
export const NATS_JS_DOMAIN_SETTING = {
  env: 'NATS_JS_DOMAIN',
  flag: '--nats-js-domain',
  optional: true,
  parse: 'string',
  doc: "JetStream domain of every stream and bucket this service reads and writes, when they live on another server than the one it connects to (e.g. a leaf cluster's domain `a` for a service on the hub). Unset: the connected server's own JetStream.",
} as const;

/** The connection settings every service declares: credentials (at most one) and the JetStream domain. */
export const NATS_CONNECTION_SETTINGS = {
  natsNkeySeedFile: NATS_NKEY_SEED_FILE_SETTING,
  natsCredsFile: NATS_CREDS_FILE_SETTING,
  natsJsDomain: NATS_JS_DOMAIN_SETTING,
} as const;

/** A parsed config's connection settings as connectNats options (nothing for what is unset). */
export function natsConnectionOf(config: { readonly natsNkeySeedFile?: string | undefined; readonly natsCredsFile?: string | undefined; readonly natsJsDomain?: string | undefined }): { nkeySeedFile?: string; credsFile?: string; jsDomain?: string } {
  return {
    ...(config.natsNkeySeedFile === undefined ? {} : { nkeySeedFile: config.natsNkeySeedFile }),
    ...(config.natsCredsFile === undefined ? {} : { credsFile: config.natsCredsFile }),
    ...(config.natsJsDomain === undefined ? {} : { jsDomain: config.natsJsDomain }),
  };
}
