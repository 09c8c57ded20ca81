// NATS locked down, for real: a nats-server 2.9 of its own with the authorization block of
// auth-config.ts (nkey users in the default account, JetStream on), the streams and buckets
// declared as the services declare them, then per role what it needs works and what it must not
// do is refused with a permissions violation.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { hintedKey, kubeNodeSubject, kubeObjectSubject, kvFeedSubjectPrefix, serviceImportFilter, serviceImportKey, slicesSubject, svcClusterFilter, svcKey, viewKey, zoneViewsFilter } from '@slicemesh/contracts';
import { generateRoleNkeys, renderAuthorization } from './auth-config.ts';
import type { RoleNkey } from './auth-config.ts';
import { connectNats } from './connect.ts';
import { consumeLoop, ensureDurable, pendingCount } from './consume.ts';
import type { ConsumedMessage } from './consume.ts';
import { NatsAuthorizationError } from './errors.ts';
import { followSubject } from './follow-subject.ts';
import { kvPutJson, kvWatchJson, openKv } from './kv.ts';
import { kvFeedWatchJson } from './kv-feed.ts';
import type { KvChange } from './kv.ts';
import { forEachLastPerSubject, purgeBelow } from './log-retention.ts';
import { findNatsServerBinary, freeLocalPort } from './local-cluster.ts';
import type { NatsRole } from './permissions.ts';
import { publishAcked } from './publish.ts';
import { DEFAULT_NAMES, ensureKv, ensureStreams } from './streams.ts';

const CLUSTER = 'c1';
const NAMES = DEFAULT_NAMES;
const binary = findNatsServerBinary();
const SKIPPED = binary === undefined ? 'SKIPPED: nats-server is not installed (looked on PATH, /usr/sbin, /usr/local/bin, /usr/bin)' : undefined;

/** Rejects unless `p` fails with the server's permissions violation (anywhere in the cause chain). */
async function expectDenied(p: Promise<unknown>): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'the call succeeded').toBeDefined();
  const chain: string[] = [];
  for (let e: unknown = err; e !== undefined && chain.length < 5; e = e instanceof Error ? e.cause : undefined) chain.push(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  expect(chain.join(' <- ')).toMatch(/permissions violation/i);
}

/** Runs a durable until its first message, acks it and stops; resolves with that message. */
async function firstAcked(nc: NatsConnection, stream: string, durable: string): Promise<ConsumedMessage> {
  const stop = new AbortController();
  let first: ConsumedMessage | undefined;
  await consumeLoop(
    jetstream(nc),
    stream,
    durable,
    (m) => {
      first ??= m;
      stop.abort();
      return Promise.resolve('ack');
    },
    { signal: stop.signal },
  );
  if (first === undefined) throw new Error(`nothing consumed from ${stream}/${durable}`);
  return first;
}

/** The first `n` changes of a KV watch, then the watch stops. */
async function firstChanges(it: AsyncGenerator<KvChange>, n: number): Promise<KvChange[]> {
  const out: KvChange[] = [];
  for await (const c of it) {
    out.push(c);
    if (out.length >= n) break;
  }
  return out;
}

describe.skipIf(SKIPPED !== undefined)(SKIPPED ?? 'NATS locked down: per-role nkey users on nats-server', () => {
  let dir: string;
  let server: ChildProcess;
  let url: string;
  let keys: Map<NatsRole, RoleNkey>;
  const seedFiles = new Map<NatsRole, string>();
  const open: NatsConnection[] = [];

  const as = async (role: NatsRole): Promise<NatsConnection> => {
    const nc = await connectNats({ url, name: `auth-test-${role}`, timeoutMs: 2000, nkeySeedFile: seedFiles.get(role) as string, role });
    open.push(nc);
    return nc;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nats-auth-'));
    const roles: NatsRole[] = ['admin', 'watcher', 'slicer', 'hints', 'publisher', 'agent', 'mcs'];
    keys = new Map(generateRoleNkeys(roles).map((k) => [k.role, k]));
    for (const k of keys.values()) {
      const file = join(dir, `${k.role}.seed`);
      writeFileSync(file, `${k.seed}\n`, { mode: 0o600 });
      seedFiles.set(k.role, file);
    }
    const port = await freeLocalPort();
    url = `nats://127.0.0.1:${port}`;
    const conf = join(dir, 'nats.conf');
    writeFileSync(conf, `listen: "127.0.0.1:${port}"\njetstream { store_dir: ${JSON.stringify(join(dir, 'js'))} }\n${renderAuthorization([...keys.values()], { cluster: CLUSTER })}`);
    server = spawn(binary as string, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    server.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
    // The server's first moments: retry the admin until it answers (or report what it said).
    const until = Date.now() + 10_000;
    for (;;) {
      try {
        const admin = await as('admin');
        await ensureStreams(await jetstreamManager(admin), NAMES);
        for (const bucket of [NAMES.svc, NAMES.views, NAMES.hinted]) await ensureKv(admin, bucket);
        break;
      } catch (err) {
        if (Date.now() > until || server.exitCode !== null) throw new Error(`nats-server did not start with the rendered config: ${stderr || String(err)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }, 20_000);

  afterAll(async () => {
    await Promise.all(open.map((nc) => nc.close().catch(() => undefined)));
    if (server !== undefined && server.exitCode === null) {
      const exited = new Promise((r) => server.once('exit', r));
      server.kill('SIGTERM');
      await exited;
    }
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const node = kubeNodeSubject({ cluster: CLUSTER, name: 'n1' });
  const web = kubeObjectSubject({ cluster: CLUSTER, partition: 0, kind: 'Service', namespace: 'default', name: 'web' });
  const view = viewKey({ cluster: CLUSTER, zone: 'zone-a', namespace: 'default', service: 'web', slice: 'web-1' });

  it('the watcher declares the streams it uses, publishes its cluster\'s objects and reads back the last message per subject', async () => {
    const nc = await as('watcher');
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    await ensureStreams(jsm, NAMES);
    await publishAcked(js, web, { v: 1 }, { msgID: 'web-1' });
    await publishAcked(js, web, { v: 2 }, { msgID: 'web-2' });
    await publishAcked(js, node, { node: 'n1', v: 1 }, { msgID: 'n1-1' });
    const last = new Map<string, unknown>();
    await forEachLastPerSubject(jsm, js, NAMES.kube, `kube.${CLUSTER}.>`, { headersOnly: false }, (m) => void last.set(m.subject, JSON.parse(new TextDecoder().decode(m.data)) as unknown));
    expect(last).toEqual(new Map<string, unknown>([[web, { v: 2 }], [node, { node: 'n1', v: 1 }]]));
  });

  it('the watcher may not write views nor publish another cluster\'s objects', async () => {
    const nc = await as('watcher');
    // It cannot even open the bucket; the put itself (what kv.put sends: a JetStream publish
    // to $KV.<bucket>.<key>) is refused too.
    await expectDenied(openKv(nc, NAMES.views));
    await expectDenied(publishAcked(jetstream(nc), `$KV.${NAMES.views}.${view}`, { forged: true }, { msgID: 'watcher-view', retries: 0 }));
    await expectDenied(publishAcked(jetstream(nc), kubeNodeSubject({ cluster: 'c2', name: 'n1' }), {}, { msgID: 'other', retries: 0 }));
  });

  it('hints declares its buckets and puts service specs and views; the slicer publishes slices but no node', async () => {
    const hints = await as('hints');
    const views = await ensureKv(hints, NAMES.views);
    const svc = await ensureKv(hints, NAMES.svc);
    await kvPutJson(svc, svcKey({ cluster: CLUSTER, namespace: 'default', name: 'web' }), { spec: 'web' });
    await kvPutJson(views, view, { slice: 'web-1', zone: 'zone-a' });
    await kvPutJson(views, viewKey({ cluster: CLUSTER, zone: 'zone-b', namespace: 'default', service: 'web', slice: 'web-1' }), { slice: 'web-1', zone: 'zone-b' });
    const slicer = jetstream(await as('slicer'));
    await publishAcked(slicer, slicesSubject({ cluster: CLUSTER, partition: 0, namespace: 'default', service: 'web' }), { upserts: [] }, { msgID: 's-1' });
    await expectDenied(publishAcked(slicer, node, { forged: true }, { msgID: 'slicer-node', retries: 0 }));
  });

  it('the slicer and the publisher consume and ack with their durables', async () => {
    const slicer = await as('slicer');
    const slicerJsm = await jetstreamManager(slicer);
    await ensureDurable(slicerJsm, NAMES.kube, { durable: 'slicer-c1-p0', filterSubject: `kube.${CLUSTER}.0.>` });
    expect((await firstAcked(slicer, NAMES.kube, 'slicer-c1-p0')).subject).toBe(web);
    // Compaction: the slicer purges a subject below its last message (web's first version).
    const lastWeb = await slicerJsm.streams.getMessage(NAMES.kube, { last_by_subj: web });
    expect(await purgeBelow(slicerJsm, NAMES.kube, web, lastWeb?.seq ?? 0)).toBe(1);
    const publisher = await as('publisher');
    const publisherJsm = await jetstreamManager(publisher);
    await ensureDurable(publisherJsm, `KV_${NAMES.hinted}`, { durable: 'publisher-c1', filterSubject: `$KV.${NAMES.hinted}.${CLUSTER}.>` });
    await kvPutJson(await openKv(await as('hints'), NAMES.hinted), hintedKey({ cluster: CLUSTER, namespace: 'default', service: 'web', slice: 'web-1' }), { hinted: true });
    expect((await firstAcked(publisher, `KV_${NAMES.hinted}`, 'publisher-c1')).data).toEqual({ hinted: true });
    // The ack was taken: nothing left pending.
    await expect.poll(() => pendingCount(publisherJsm, `KV_${NAMES.hinted}`, 'publisher-c1')).toBe(0);
    // The publisher writes nothing to NATS.
    await expectDenied(kvPutJson(await openKv(publisher, NAMES.hinted), hintedKey({ cluster: CLUSTER, namespace: 'default', service: 'web', slice: 'web-1' }), { forged: true }));
  });

  it('mcs declares the serviceimports bucket and writes its cluster\'s ServiceImports; the publisher watches them and writes none', async () => {
    const mcs = await as('mcs');
    const mcsKv = await ensureKv(mcs, 'serviceimports');
    const key = serviceImportKey({ cluster: CLUSTER, namespace: 'shop', name: 'cart' });
    await kvPutJson(mcsKv, key, { imported: true });
    await expectDenied(kvPutJson(mcsKv, serviceImportKey({ cluster: 'c2', namespace: 'shop', name: 'cart' }), { forged: true }));
    const publisher = await as('publisher');
    const publisherKv = await openKv(publisher, 'serviceimports');
    const seen = await firstChanges(kvWatchJson(publisherKv, { key: serviceImportFilter(CLUSTER) }), 1);
    expect(seen.map((c) => [c.key, c.value])).toEqual([[key, { imported: true }]]);
    await expectDenied(kvPutJson(publisherKv, key, { forged: true }));
  });

  it('an agent watches its zone\'s views and the service specs and follows its node in KUBE', async () => {
    const nc = await as('agent');
    const stop = new AbortController();
    try {
      const views = await firstChanges(kvWatchJson(await openKv(nc, NAMES.views), { key: zoneViewsFilter(CLUSTER, 'zone-a'), signal: stop.signal }), 1);
      expect(views.map((c) => [c.key, c.value])).toEqual([[view, { slice: 'web-1', zone: 'zone-a' }]]);
      const specs = await firstChanges(kvWatchJson(await openKv(nc, NAMES.svc), { key: svcClusterFilter(CLUSTER), signal: stop.signal }), 1);
      expect(specs.map((c) => c.value)).toEqual([{ spec: 'web' }]);
      const followed: unknown[] = [];
      for await (const m of followSubject(nc, { stream: NAMES.kube, subject: node, signal: stop.signal })) {
        followed.push(m.data);
        break;
      }
      expect(followed).toEqual([{ node: 'n1', v: 1 }]);
    } finally {
      stop.abort();
    }
    // followSubject's consumer delete was refused (the server expires it): the connection lives on.
    expect((await jetstreamManager(nc)).streams).toBeDefined();
    await openKv(nc, NAMES.svc);
  });

  it('an agent reads its zone\'s views through the shared feed: sets it up, subscribes, gets the changes', async () => {
    const nc = await as('agent');
    const stop = new AbortController();
    let initialDone = false;
    const seen: unknown[] = [];
    const watching = (async () => {
      const feed = kvFeedWatchJson(nc, await openKv(nc, NAMES.views), { key: zoneViewsFilter(CLUSTER, 'zone-a'), subjectPrefix: kvFeedSubjectPrefix(NAMES.views, CLUSTER), signal: stop.signal, onInitialDone: () => (initialDone = true) });
      for await (const c of feed) seen.push(c.value);
    })();
    const until = async (done: () => boolean) => {
      for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 25));
    };
    await until(() => initialDone);
    expect(seen).toEqual([{ slice: 'web-1', zone: 'zone-a' }]);
    // The hints service writes; the agent hears of it through the feed.
    const hints = await as('hints');
    await kvPutJson(await openKv(hints, NAMES.views), view, { slice: 'web-1', zone: 'zone-a', v: 2 });
    await until(() => seen.length === 2);
    expect(seen.at(-1)).toEqual({ slice: 'web-1', zone: 'zone-a', v: 2 });
    stop.abort();
    await watching;
    await kvPutJson(await openKv(hints, NAMES.views), view, { slice: 'web-1', zone: 'zone-a' });
  });

  it('an agent may not publish to KUBE, write views or specs, purge or change streams, nor read other subjects', async () => {
    const nc = await as('agent');
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    await expectDenied(publishAcked(js, node, { forged: true }, { msgID: 'agent-node', retries: 0 }));
    await expectDenied(kvPutJson(await openKv(nc, NAMES.views), view, { forged: true }));
    await expectDenied(kvPutJson(await openKv(nc, NAMES.svc), svcKey({ cluster: CLUSTER, namespace: 'default', name: 'web' }), { forged: true }));
    await expectDenied(jsm.streams.purge(NAMES.kube));
    await expectDenied(jsm.streams.update(`KV_${NAMES.views}`, { subjects: [`$KV.${NAMES.views}.>`, 'agent.>'] }));
    await expectDenied(jsm.streams.delete(NAMES.kube));
    await expectDenied(jsm.consumers.add(NAMES.kube, { filter_subject: `kube.${CLUSTER}.>` }));
    await expectDenied(jsm.consumers.add(NAMES.kube, { name: 'snoop', filter_subject: `kube.${CLUSTER}.0.>` }));
    // None of it landed: the node's and the view's last values are still those written above.
    const admin = await as('admin');
    const adminJsm = await jetstreamManager(admin);
    expect((await adminJsm.streams.getMessage(NAMES.kube, { last_by_subj: node }))?.json()).toEqual({ node: 'n1', v: 1 });
    expect((await (await openKv(admin, NAMES.views)).get(view))?.json()).toEqual({ slice: 'web-1', zone: 'zone-a' });
    // web's two versions and the node's, less the one the slicer purged.
    expect((await adminJsm.streams.info(NAMES.kube)).state.messages).toBe(2);
  });

  it('an agent may not subscribe to the logs, the buckets, another role\'s inbox, nor feeds of another cluster or bucket', async () => {
    const nc = await as('agent');
    for (const subject of ['kube.>', `$KV.${NAMES.views}.>`, '_INBOX.>', '_INBOX_slicer.>', `${kvFeedSubjectPrefix(NAMES.views, 'other-cluster')}.>`, `${kvFeedSubjectPrefix(NAMES.hinted, CLUSTER)}.>`]) {
      // The server refuses the subscription asynchronously; the client closes it with that error.
      const closed = await nc.subscribe(subject).closed;
      expect(String(closed), subject).toMatch(/permissions violation for subscription/i);
    }
    // Its own inbox is fine: a request and its reply.
    expect((await jetstreamManager(nc)).streams).toBeDefined();
  });

  it('refuses a connection without credentials, and one with a key the server does not know', async () => {
    const anonymous = await connectNats({ url, name: 'auth-test-anonymous', timeoutMs: 2000 }).catch((e: unknown) => e);
    expect(anonymous).toBeInstanceOf(NatsAuthorizationError);
    expect((anonymous as Error).message).toMatch(/Authorization Violation.*NATS_NKEY_SEED_FILE/);
    const [stranger] = generateRoleNkeys(['agent']);
    const file = join(dir, 'stranger.seed');
    writeFileSync(file, stranger!.seed);
    const refused = await connectNats({ url, name: 'auth-test-stranger', timeoutMs: 2000, nkeySeedFile: file }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(NatsAuthorizationError);
    expect((refused as Error).message).toContain(`NATS_NKEY_SEED_FILE ${file}`);
    expect((refused as Error).message).not.toContain(stranger!.seed);
  });
});
