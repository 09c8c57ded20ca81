// Connecting to NATS: fail fast and clearly on the first attempt, reconnect forever afterwards.

import { AuthorizationError, connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { CREDS_FILE_ENV, NKEY_SEED_FILE_ENV, natsAuthenticator } from './credentials.ts';
import { NatsAuthorizationError, NatsUnreachableError } from './errors.ts';
import { setJetStreamDomain } from './js-domain.ts';
import { roleInboxPrefix } from './permissions.ts';
import type { NatsRole } from './permissions.ts';
import { natsServerOptions, parseNatsServers, redactNatsUrl } from './servers.ts';

/** How to start the local server (TOOLCHAIN.md), quoted in the unreachable error. */
export const NATS_START_HINT =
  'start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log';

/** A connection status change, reported to `log` (the library never logs by itself). */
export interface NatsStatusEvent {
  /** The client's status type: 'disconnect', 'reconnect', 'reconnecting', 'error', 'close', ... */
  readonly type: string;
  /** Server address or error text, when the event has one. */
  readonly detail?: string;
}

export interface ConnectNatsOptions {
  /**
   * Server URL(s), comma-separated, e.g. 'nats://127.0.0.1:4222' (see parseNatsServers);
   * credentials in a URL and tls:// apply to every server of the list.
   */
  readonly url: string;
  /** Connection name shown by the server (e.g. 'watcher-c1'). */
  readonly name: string;
  /** Receives status changes until the connection closes. Defaults to none. */
  readonly log?: (event: NatsStatusEvent) => void;
  /** Timeout of the first connection attempt, ms. Defaults to 5000. */
  readonly timeoutMs?: number;
  /** Wait between reconnect attempts, ms. Defaults to 1000. */
  readonly reconnectWaitMs?: number;
  /**
   * A file holding this role's nkey seed (NATS_NKEY_SEED_FILE, see auth-config.ts). Read once,
   * before connecting; NatsCredentialsError when missing, unreadable or not a user seed.
   */
  readonly nkeySeedFile?: string;
  /** A .creds file (user JWT and seed; NATS_CREDS_FILE), for servers using decentralized auth. At most one of the two. */
  readonly credsFile?: string;
  /**
   * The role this process connects as (permissions.ts): its replies then arrive on the role's
   * own inbox prefix, the only inbox its permissions let it subscribe to. Harmless on a server
   * without permissions; unset: the client's shared `_INBOX`.
   */
  readonly role?: NatsRole;
  /** JetStream domain of everything this connection's JetStream contexts address (js-domain.ts); unset: the server's own. */
  readonly jsDomain?: string;
}

/**
 * Connects once; if that fails, throws NatsUnreachableError ("NATS not reachable at <url>:
 * <reason> — start it with: <command>"). Once connected, the client reconnects forever and
 * buffers publishes while disconnected; JetStream acks time out meanwhile (see publishAcked).
 */
export async function connectNats(opts: ConnectNatsOptions): Promise<NatsConnection> {
  // Throws, naming the bad entry, before any attempt; the client reconnects across all of them.
  const server = natsServerOptions(parseNatsServers(opts.url));
  // Throws NatsCredentialsError (naming the setting and the file) before any attempt.
  const authenticator = natsAuthenticator(opts);
  let nc: NatsConnection;
  try {
    nc = await connect({
      ...server,
      name: opts.name,
      timeout: opts.timeoutMs ?? 5000,
      maxReconnectAttempts: -1,
      reconnectTimeWait: opts.reconnectWaitMs ?? 1000,
      // The client otherwise builds two Error objects (with stack traces) per request, for
      // every JetStream publish and KV put: measured at ~7% of a busy watcher's CPU. Our errors
      // carry the subject and reason without them.
      noAsyncTraces: true,
      ...(authenticator === undefined ? {} : { authenticator }),
      ...(opts.role === undefined ? {} : { inboxPrefix: roleInboxPrefix(opts.role) }),
    });
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    // Reachable, but the credentials (or their absence) were refused: starting it is no help.
    if (err instanceof AuthorizationError) throw new NatsAuthorizationError(redactNatsUrl(opts.url), reason, credentialsNamed(opts), { cause: err });
    throw new NatsUnreachableError(redactNatsUrl(opts.url), reason, NATS_START_HINT, { cause: err });
  }
  if (opts.jsDomain !== undefined) setJetStreamDomain(nc, opts.jsDomain);
  const log = opts.log;
  if (log) void forwardStatus(nc, log);
  return nc;
}

/** The credentials setting and file in use, for an error (never the secret itself). */
function credentialsNamed(opts: ConnectNatsOptions): string | undefined {
  if (opts.nkeySeedFile !== undefined) return `${NKEY_SEED_FILE_ENV} ${opts.nkeySeedFile}`;
  if (opts.credsFile !== undefined) return `${CREDS_FILE_ENV} ${opts.credsFile}`;
  return undefined;
}

async function forwardStatus(nc: NatsConnection, log: (event: NatsStatusEvent) => void): Promise<void> {
  for await (const s of nc.status()) {
    if (s.type === 'ping') continue; // routine keep-alive, not a change
    const detail = 'server' in s ? s.server : 'error' in s ? s.error.message : undefined;
    log(detail === undefined ? { type: s.type } : { type: s.type, detail });
  }
}
