// What a delivery costs an agent of the fan-out bench when it arrives alone, against many at
// once, with and without our shared feed: many agents in this one process, each with its own
// NATS connection, receive the same messages (view-like JSON, 1.2 KB) and parse each one.
//
//   bash scripts/with-node.sh node bench/fanout-trickle.ts bulk      plain NATS, every message published at once
//   bash scripts/with-node.sh node bench/fanout-trickle.ts trickle   plain NATS, one message at a time (a flush after each)
//   bash scripts/with-node.sh node bench/fanout-trickle.ts feed      kvFeedWatchJson on a zone filter, one put at a time
//   bash scripts/with-node.sh node bench/fanout-trickle.ts callback  the same feed's deliveries taken in each agent's
//                                                                    subscription callback, with only what the feed must do
//
// Prints this process's CPU per delivery. AGENTS (default 200) and MESSAGES (default 1000) set
// the sizes; NATS_URL the server. The figures in docs/operations.md (fan-out) came from it.
// (A feed fed all at once is not offered: plain NATS drops a slow subscriber's messages and the
// feed then reads the bucket again, so the deliveries would not add up.)

import type { KV, NatsConnection } from '@slicemesh/nats';
import { connectNats, ensureKv, feedAddress, feedPositionOf, kvFeedSubjectPrefix, kvFeedWatchJson, openKv, viewKey, zoneViewsFilter } from '@slicemesh/nats';

type Mode = 'bulk' | 'trickle' | 'feed' | 'callback';
const MODES: readonly Mode[] = ['bulk', 'trickle', 'feed', 'callback'];
const mode = process.argv[2] as Mode;
if (!MODES.includes(mode)) {
  process.stderr.write(`usage: node bench/fanout-trickle.ts ${MODES.join('|')}\n`);
  process.exit(2);
}
const url = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const agents = Number(process.env['AGENTS'] ?? 200);
const messages = Number(process.env['MESSAGES'] ?? 1000);
const CLUSTER = 'trickle';
const ZONE = 'zone-a';
const SUBJECT = `trickle.${process.pid}`;

/** A zone view of a five-endpoint slice, varying with `i` as a burst's writes do. */
function view(i: number): string {
  const svc = `svc-${i % 300}`;
  return JSON.stringify({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${svc}-abcde`, namespace: 'bench', labels: { 'kubernetes.io/service-name': svc }, annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': new Date(1e12 + i * 1000).toISOString() } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: Array.from({ length: 5 }, (_, e) => ({ addresses: [`10.64.${i % 250}.${e}`], conditions: { ready: (i + e) % 2 === 0, serving: true, terminating: false }, nodeName: `node-${e}`, zone: ZONE, hints: { forZones: [{ name: ZONE }] } })),
  });
}

const admin = await connectNats({ url, name: 'trickle-publisher' });
const bucket = `trickle_${process.pid}`;
const kv: KV | undefined = mode === 'feed' || mode === 'callback' ? await ensureKv(admin, bucket) : undefined;
const conns: NatsConnection[] = [];
for (let a = 0; a < agents; a++) conns.push(await connectNats({ url, name: `trickle-agent-${a}` }));

const received = new Array<number>(agents).fill(0);
let complete = 0;
let allIn: () => void = () => {};
const allReceived = new Promise<void>((resolve) => (allIn = resolve));
const count = (a: number): void => {
  if (++received[a]! === messages && ++complete === agents) allIn();
};
const stop = new AbortController();

// The feed's settings, given explicitly: the callback mode names the same feed (feedAddress).
const HEARTBEAT_MS = 2000;
const INACTIVE_MS = 300_000;
const feedOptions = (signal: AbortSignal, onInitialDone: () => void) => ({ key: zoneViewsFilter(CLUSTER, ZONE), subjectPrefix: kvFeedSubjectPrefix(bucket, CLUSTER), heartbeatMs: HEARTBEAT_MS, inactiveMs: INACTIVE_MS, signal, onInitialDone });

if (kv !== undefined && mode === 'callback') {
  // One watcher creates the feed's consumer (feedOptions' settings name it); then every
  // agent takes the feed's deliveries in its subscription's callback: the position from the
  // reply, the key from the subject, the parse — what the feed must do, without its iteration.
  const first = new AbortController();
  const opened = await openKv(conns[0]!, bucket);
  await new Promise<void>((resolve) => {
    void (async () => {
      for await (const _ of kvFeedWatchJson(conns[0]!, opened, feedOptions(first.signal, resolve))) void _;
    })();
  });
  const feed = feedAddress(`KV_${bucket}`, `$KV.${bucket}.${zoneViewsFilter(CLUSTER, ZONE)}`, kvFeedSubjectPrefix(bucket, CLUSTER), HEARTBEAT_MS, INACTIVE_MS);
  const keyPrefix = `$KV.${bucket}.`;
  for (const [a, nc] of conns.entries()) {
    const state = new Map<string, unknown>();
    const revisions = new Map<string, number>();
    nc.subscribe(feed.subject, {
      callback: (err, m) => {
        if (err !== null) return;
        const at = m.subject.startsWith(keyPrefix) ? feedPositionOf(m.reply) : null;
        if (at === null) return; // a heartbeat
        const key = m.subject.slice(keyPrefix.length);
        revisions.set(key, at.streamSeq);
        state.set(key, m.json());
        count(a);
      },
    });
  }
  await Promise.all(conns.map((nc) => nc.flush()));
  first.abort();
} else if (kv !== undefined) {
  // As the bench's lightweight agents do: the zone's feed, each value kept in the agent's map.
  let ready = 0;
  let allReady: () => void = () => {};
  const readyAll = new Promise<void>((resolve) => (allReady = resolve));
  for (const [a, nc] of conns.entries()) {
    const mine = await openKv(nc, bucket);
    void (async () => {
      const state = new Map<string, unknown>();
      let initial = true;
      const onInitialDone = () => {
        initial = false;
        if (++ready === agents) allReady();
      };
      for await (const c of kvFeedWatchJson(nc, mine, feedOptions(stop.signal, onInitialDone))) {
        if (c.op === 'PUT') state.set(c.key, c.value);
        else state.delete(c.key);
        if (!initial) count(a);
      }
    })();
  }
  await readyAll;
} else {
  for (const [a, nc] of conns.entries()) {
    const state = new Map<string, unknown>();
    nc.subscribe(SUBJECT, {
      callback: (err, m) => {
        if (err !== null) return;
        const v = m.json<{ metadata: { name: string } }>();
        state.set(v.metadata.name, v);
        count(a);
      },
    });
  }
  await Promise.all(conns.map((nc) => nc.flush()));
}

const cpu0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < messages; i++) {
  if (kv !== undefined) await kv.put(viewKey({ cluster: CLUSTER, zone: ZONE, namespace: 'bench', service: `svc-${i % 300}`, slice: `svc-${i % 300}-abcde` }), view(i));
  else {
    admin.publish(SUBJECT, view(i));
    if (mode === 'trickle') await admin.flush();
  }
}
await allReceived;
const cpu = process.cpuUsage(cpu0);
const wallMs = performance.now() - t0;
const deliveries = agents * messages;
process.stdout.write(`${mode}: ${agents} agents × ${messages} messages of ${view(1).length} B = ${deliveries} deliveries in ${wallMs.toFixed(0)} ms; CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms = ${((cpu.user + cpu.system) / deliveries).toFixed(1)} µs per delivery (publisher included)\n`);
stop.abort();
if (kv !== undefined) await kv.destroy().catch(() => false);
await Promise.all([...conns, admin].map((nc) => nc.close()));
