// NATS server lists: one parser for every NATS_URL setting and for connectNats.
//
// A list is comma-separated, as the NATS tools take it: `nats://host:port`, `tls://host:port`
// or a bare `host:port` (or `host`: port 4222), each possibly with credentials
// (`nats://user:pass@host:4222`). The client connects to one and reconnects across all of them
// (and across servers the cluster announces), so credentials and TLS given on one apply to the
// connection wherever it goes.

const SCHEMES = new Set(['nats:', 'tls:']);
const EXPECTED = 'expected nats://host:port, tls://host:port or host:port, comma-separated';

/**
 * The list with passwords and tokens masked (`nats://user:secret@h` → `nats://user:***@h`,
 * `nats://tok@h` → `nats://***@h`): an error or a log line may name a server, never a secret.
 */
export function redactNatsUrl(text: string): string {
  return text
    .split(',')
    .map((entry) => {
      const m = /^(\s*(?:[A-Za-z][A-Za-z0-9+.-]*:\/\/)?)([^@/]*)@(.*)$/s.exec(entry);
      if (m === null) return entry;
      const [, head, info, rest] = m as unknown as [string, string, string, string];
      const colon = info.indexOf(':');
      return `${head}${colon < 0 ? '***' : `${info.slice(0, colon)}:***`}@${rest}`;
    })
    .join(',');
}

/**
 * The servers of a comma-separated list, trimmed, in order (empty entries between commas are
 * skipped). Throws an Error naming the first bad entry:
 * `NATS_URL entry 2 "foo bar" is not a NATS URL (expected nats://host:port, …)`.
 * `setting` names the list in that message (default `NATS_URL`).
 */
export function parseNatsServers(text: string, setting = 'NATS_URL'): string[] {
  const entries = text.split(',').map((s) => s.trim());
  const servers: string[] = [];
  entries.forEach((entry, i) => {
    if (entry === '') return;
    const why = badNatsServer(entry);
    if (why !== undefined) throw new Error(`${setting} entry ${i + 1} ${JSON.stringify(redactNatsUrl(entry))} is not a NATS URL (${why})`);
    servers.push(entry);
  });
  if (servers.length === 0) throw new Error(`${setting} names no server (${EXPECTED})`);
  return servers;
}

/** `parse` of a NATS_URL setting: the list checked, given back comma-joined (the value services pass on). */
export function parseNatsUrlSetting(text: string): string {
  return parseNatsServers(text).join(',');
}

function badNatsServer(entry: string): string | undefined {
  if (/\s/.test(entry)) return `contains white space; ${EXPECTED}`;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(entry);
  if (scheme !== null && !SCHEMES.has(`${scheme[1]!.toLowerCase()}:`)) return `scheme ${scheme[1]}:// is not nats:// or tls://`;
  let url: URL;
  try {
    url = new URL(scheme === null ? `nats://${entry}` : entry);
  } catch {
    return EXPECTED;
  }
  if (url.hostname === '') return `no host; ${EXPECTED}`;
  if (url.pathname !== '' && url.pathname !== '/') return `a server address has no path (${url.pathname}); ${EXPECTED}`;
  if (url.search !== '' || url.hash !== '') return `a server address has no query or fragment; ${EXPECTED}`;
  if (url.port !== '' && Number(url.port) === 0) return `port 0; ${EXPECTED}`;
  return undefined;
}

/** What the client is given for a server list: addresses, and the credentials and TLS of the list. */
export interface NatsServerOptions {
  /** `host:port` of each server (scheme and credentials removed: the client reads neither). */
  readonly servers: string[];
  readonly user?: string;
  readonly pass?: string;
  /** A URL with a user and no password (`nats://s3cret@host`) carries a token. */
  readonly token?: string;
  /** Set (to `{}`: TLS required) when any entry is tls://. */
  readonly tls?: Record<string, never>;
}

/**
 * Client options for a list (parseNatsServers' result). The NATS client ignores credentials in
 * a server URL and chooses TLS from the server's INFO; here the credentials of the list are
 * passed as user/pass (or token) for every server, and a tls:// entry makes TLS required for
 * all. Entries must not carry different credentials (an Error says which differs).
 */
export function natsServerOptions(entries: readonly string[], setting = 'NATS_URL'): NatsServerOptions {
  const servers: string[] = [];
  let creds: { user: string; pass: string | undefined; from: number } | undefined;
  let tls = false;
  entries.forEach((entry, i) => {
    const hasScheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(entry);
    const url = new URL(hasScheme ? entry : `nats://${entry}`);
    if (url.protocol === 'tls:') tls = true;
    servers.push(url.port === '' ? `${url.hostname}:4222` : `${url.hostname}:${url.port}`);
    if (url.username === '' && url.password === '') return;
    const user = decodeURIComponent(url.username);
    const pass = url.password === '' && !/:@/.test(entry) ? undefined : decodeURIComponent(url.password);
    if (creds === undefined) creds = { user, pass, from: i + 1 };
    else if (creds.user !== user || creds.pass !== pass) {
      throw new Error(`${setting} entry ${i + 1} has other credentials than entry ${creds.from}: give the same user and password (or none) on every server`);
    }
  });
  const auth: { user?: string; pass?: string; token?: string } = {};
  const c = creds as { user: string; pass: string | undefined } | undefined;
  if (c !== undefined) {
    if (c.pass === undefined) auth.token = c.user;
    else {
      auth.user = c.user;
      auth.pass = c.pass;
    }
  }
  return { servers, ...auth, ...(tls ? { tls: {} } : {}) };
}
