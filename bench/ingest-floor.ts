// The least a watcher and slicer that keep our log's shape (each change its own message on its
// object's subject, read by a durable with explicit acks) can do with the backbone burst's
// events on this machine, run by the backbone bench as child processes beside the in-process
// cluster-sim, with the pipeline stopped:
//
//   node bench/ingest-floor.ts watch   <api-url>            watch Pods and Endpoints, parse each event
//   node bench/ingest-floor.ts publish <api-url> <subject>  the same, and publish each event's bytes to
//                                                           <subject>.<kind>.<namespace>.<name>, 256 in flight
//   node bench/ingest-floor.ts consume <stream> <durable>   pull the stream through a durable with explicit
//                                                           acks, parse each message, ack each one
//
// No trimming, no store, no reconcile: a watch role reads the raw lines over plain HTTP and
// publishes them as they came, a consumer keeps nothing. So its rate is an upper bound for what
// the real watcher → KUBE → slicer path can reach here, and its latency a lower bound.
//
// Protocol with the bench: the child prints `ready` once its watches (or its consumer) are open. A round ends once it has seen PODS Pod events (env, default 5000) and
// nothing more for QUIET_MS (default 500); it then prints one JSON line { events, last: epoch ms
// of the round's last event, cpuMs: its CPU so far, pods: { "<ns>/<name>": epoch ms it was seen } }
// and starts the next round, until ROUNDS (default 1) rounds are done; then it exits. The bench
// runs two, the first to warm the child's code.

import { request } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import type { JetStreamClient } from '@slicemesh/nats';
import { connectNats, jetstream, jetstreamManager } from '@slicemesh/nats';

type Role = 'watch' | 'publish' | 'consume';
const ROLES: readonly Role[] = ['watch', 'publish', 'consume'];
const [role, arg1, arg2] = process.argv.slice(2) as [Role, string | undefined, string | undefined];
if (!ROLES.includes(role) || arg1 === undefined || (role !== 'watch' && arg2 === undefined)) {
  process.stderr.write('usage: node bench/ingest-floor.ts watch <api-url> | publish <api-url> <subject> | consume <stream> <durable>\n');
  process.exit(2);
}
const expectedPods = Number(process.env['PODS'] ?? 5000);
const rounds = Number(process.env['ROUNDS'] ?? 1);
const quietMs = Number(process.env['QUIET_MS'] ?? 500);
const natsUrl = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const WINDOW = 256;

const now = (): number => performance.timeOrigin + performance.now();
const cpuMs = (): number => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};
const seen = new Map<string, number>();
let events = 0;
let lastAt = 0;
let finished: () => void = () => {};
let done = new Promise<void>((resolve) => (finished = resolve));

/** Counts one event; a Pod's time is kept by name (each pod changes once in the burst). */
function record(text: string): { kind: string; namespace: string; name: string } {
  const ev = JSON.parse(text) as { object?: { kind?: string; metadata?: { namespace?: string; name?: string } } };
  const kind = ev.object?.kind ?? 'Unknown';
  const namespace = ev.object?.metadata?.namespace ?? '';
  const name = ev.object?.metadata?.name ?? '';
  events++;
  lastAt = now();
  if (kind === 'Pod') seen.set(`${namespace}/${name}`, lastAt);
  return { kind, namespace, name };
}

// Done once every pod was seen and the stream has been quiet for a while (the Endpoints
// controller's last writes follow the pods').
const quietCheck = setInterval(() => {
  if (seen.size >= expectedPods && now() - lastAt >= quietMs) finished();
}, 50);

function get(url: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: 'application/json' } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`GET ${url}: HTTP ${res.statusCode}`));
      else resolve(res);
    });
    req.on('error', reject);
    req.end();
  });
}

async function readJson(url: string): Promise<unknown> {
  const res = await get(url);
  let body = '';
  for await (const chunk of res) body += String(chunk);
  return JSON.parse(body);
}

/** Opens a watch of `resource` from its current version; returns its newline-delimited events. */
async function openWatch(api: string, resource: string): Promise<IncomingMessage> {
  const list = (await readJson(`${api}/api/v1/${resource}?limit=1`)) as { metadata?: { resourceVersion?: string } };
  const rv = list.metadata?.resourceVersion;
  if (rv === undefined) throw new Error(`${resource}: the list has no resourceVersion`);
  return get(`${api}/api/v1/${resource}?watch=true&resourceVersion=${encodeURIComponent(rv)}`);
}

/** Splits a watch body into lines; `onLine` may return a promise, awaited before reading on. */
async function eachLine(res: IncomingMessage, onLine: (line: string) => void | Promise<void>): Promise<void> {
  let rest = '';
  for await (const chunk of res) {
    rest += String(chunk);
    let nl: number;
    while ((nl = rest.indexOf('\n')) >= 0) {
      const line = rest.slice(0, nl);
      rest = rest.slice(nl + 1);
      if (line.length > 0) await onLine(line);
    }
  }
}

async function watchRole(api: string, subject: string | undefined): Promise<() => Promise<void>> {
  const nc = subject === undefined ? undefined : await connectNats({ url: natsUrl, name: 'ingest-floor-publish' });
  const js: JetStreamClient | undefined = nc === undefined ? undefined : jetstream(nc);
  const encoder = new TextEncoder();
  const inFlight: Promise<unknown>[] = [];
  const watches = await Promise.all(['pods', 'endpoints'].map((r) => openWatch(api, r)));
  const onLine = async (line: string): Promise<void> => {
    const { kind, namespace, name } = record(line);
    if (js === undefined) return;
    inFlight.push(js.publish(`${subject}.${kind}.${namespace}.${name}`, encoder.encode(line)));
    if (inFlight.length >= WINDOW) await inFlight.shift();
  };
  const reading = watches.map((w) => eachLine(w, onLine));
  for (const r of reading) r.catch((err: unknown) => fail(err));
  return async () => {
    await Promise.all(inFlight);
    for (const w of watches) w.destroy();
    await nc?.close();
  };
}

async function consumeRole(stream: string, durable: string): Promise<() => Promise<void>> {
  const nc = await connectNats({ url: natsUrl, name: 'ingest-floor-consume' });
  const jsm = await jetstreamManager(nc);
  await jsm.consumers.add(stream, { durable_name: durable, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All, max_ack_pending: 10_000 });
  const consumer = await jetstream(nc).consumers.get(stream, durable);
  const messages = await consumer.consume({ max_messages: 1000 });
  const decoder = new TextDecoder();
  void (async () => {
    for await (const m of messages) {
      record(decoder.decode(m.data));
      m.ack();
    }
  })().catch((err: unknown) => fail(err));
  return async () => {
    await messages.close();
    await nc.close();
  };
}

let closing = false;
function fail(err: unknown): void {
  if (closing) return; // the reads end with an error when close() destroys them
  process.stderr.write(`ingest-floor ${role}: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}

try {
  const close = role === 'consume' ? await consumeRole(arg1, arg2 ?? '') : await watchRole(arg1, role === 'publish' ? arg2 : undefined);
  process.stdout.write('ready\n');
  for (let round = 1; round <= rounds; round++) {
    await done;
    const report = JSON.stringify({ events, last: lastAt, cpuMs: cpuMs(), pods: Object.fromEntries(seen) });
    if (round === rounds) {
      clearInterval(quietCheck);
      closing = true;
      await close();
    } else {
      // The next round starts only after the bench has this round's reports, so nothing of it is lost here.
      seen.clear();
      events = 0;
      done = new Promise<void>((resolve) => (finished = resolve));
    }
    process.stdout.write(`${report}\n`);
  }
} catch (err) {
  fail(err);
}
