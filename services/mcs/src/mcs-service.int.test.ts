// The multi-cluster service against real servers: a hub (domain hub) and a locked-down leaf
// (domain a) whose users are the generated role keys. mcs, connected as the mcs role, exports an
// annotated Service to the hub's bucket, keeps its heartbeat there and imports its own export —
// with nothing refused by the server. Without a reachable exports domain it still starts and
// serves its own cluster.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORT_ANNOTATION, derivedServiceName } from '@slicemesh/multicluster';
import type { LocalNatsCluster, NatsConnection } from '@slicemesh/nats';
import {
  DEFAULT_NAMES, DELETED, UPSERTED, changeEvent, connectNats, ensureKv, ensureStreams, exportKey, findNatsServerBinary, freeLocalPort, heartbeatKey, hintedKey, jetstream, jetstreamManager, kubeSubjectOf, kvGetJson, kvPutJson,
  exportStatusKey, openKv, serviceImportKey, publishAcked, roleCredentials, roleSeedFile, startLocalNatsCluster, svcKey, writeNatsAuth,
} from '@slicemesh/nats';
import { createLogger } from '@slicemesh/runtime';
import type { Service, ServiceExport } from '@slicemesh/model';
import { mcsConfigWith } from './config.ts';
import { startMcs } from './mcs-service.ts';

const CLUSTER = 'cluster-a';
const cart: Service = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'cart', namespace: 'shop', uid: 'u-cart', resourceVersion: '1', creationTimestamp: '2026-01-01T00:00:00Z', annotations: { [EXPORT_ANNOTATION]: 'true' } },
  spec: { type: 'ClusterIP', clusterIP: '10.96.0.9', selector: { app: 'cart' }, ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }] },
};

/** A logger whose lines the test reads. */
function capture(): { logger: ReturnType<typeof createLogger>; text: () => string } {
  let text = '';
  const destination = new Writable({ write: (c: Buffer, _e, cb) => ((text += c.toString()), cb()) });
  return { logger: createLogger({ service: 'mcs', level: 'info', destination }), text: () => text };
}

async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(findNatsServerBinary() === undefined)('mcs on a locked-down leaf of a hub', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcs-int-'));
  let hub: LocalNatsCluster;
  let leaf: LocalNatsCluster;
  let admin: NatsConnection;
  let keys: string;

  beforeAll(async () => {
    const leafPort = await freeLocalPort();
    hub = await startLocalNatsCluster({ size: 1, dir: join(dir, 'hub'), namePrefix: 'hub', config: `jetstream { domain: hub }\nleafnodes { listen: "127.0.0.1:${leafPort}" }` });
    const auth = writeNatsAuth({ dir: join(dir, 'keys'), scope: { cluster: CLUSTER, exports: { domain: 'hub' } } });
    keys = auth.dir;
    leaf = await startLocalNatsCluster({
      size: 1,
      dir: join(dir, 'leaf'),
      namePrefix: 'leaf',
      authorization: { block: readFileSync(auth.authConf, 'utf8'), seedFile: roleSeedFile(keys, 'admin') },
      config: `jetstream { domain: a }\nleafnodes { remotes: [ { url: "nats-leaf://127.0.0.1:${leafPort}" } ] }`,
    });
    // What the other services of the cluster would have made: the streams, the buckets, a Service and its slice.
    admin = await connectNats({ url: leaf.url, name: 'admin', ...roleCredentials(keys, 'admin') });
    await ensureStreams(await jetstreamManager(admin), DEFAULT_NAMES);
    for (const b of [DEFAULT_NAMES.svc, DEFAULT_NAMES.views, DEFAULT_NAMES.hinted]) await ensureKv(admin, b);
    await publishAcked(jetstream(admin), kubeSubjectOf(CLUSTER, cart, { partitions: 1 }), changeEvent(UPSERTED, CLUSTER, cart, new Date().toISOString()), { msgID: 'cart-1' });
    await kvPutJson(await openKv(admin, DEFAULT_NAMES.hinted), hintedKey({ cluster: CLUSTER, namespace: 'shop', service: 'cart', slice: 'cart-x' }), {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'cart-x', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'cart' } },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints: [{ addresses: ['10.244.1.2'], conditions: { ready: true, serving: true, terminating: false } }],
    });
  }, 60_000);

  afterAll(async () => {
    await admin?.close();
    await leaf?.stop();
    await hub?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('exports the annotated Service and its heartbeat to the hub, imports it, and the server refuses nothing it does', async () => {
    const log = capture();
    const mcs = startMcs(mcsConfigWith({ cluster: CLUSTER, natsUrl: leaf.url, natsNkeySeedFile: roleSeedFile(keys, 'mcs'), exportsDomain: 'hub', heartbeat: 500, ttl: 2000, healthPort: 0 }), { logger: log.logger });
    try {
      await mcs.ready;
      const central = await connectNats({ url: hub.url, name: 'hub-reader' });
      try {
        const exportsKv = await until('the exports bucket on the hub', () => openKv(central, 'exports'));
        const record = await until('the export of shop/cart', () => kvGetJson(exportsKv, exportKey({ namespace: 'shop', name: 'cart', cluster: CLUSTER })));
        expect(record).toMatchObject({ cluster: CLUSTER, namespace: 'shop', name: 'cart', type: 'ClusterSetIP', slices: [{ name: 'cart-x' }] });
        expect(await until('the heartbeat', () => kvGetJson(exportsKv, heartbeatKey(CLUSTER)))).toMatchObject({ cluster: CLUSTER });
      } finally {
        await central.close();
      }
      const svc = await openKv(admin, DEFAULT_NAMES.svc);
      const derived = await until('the derived Service in the leaf', () => kvGetJson(svc, svcKey({ cluster: CLUSTER, namespace: 'shop', name: derivedServiceName('shop', 'cart') })));
      expect(derived).toMatchObject({ spec: { clusterIP: expect.stringMatching(/^243\.0\./) as unknown as string } });
      expect(mcs.lastImports()?.imports).toMatchObject([{ name: 'cart', clusters: [CLUSTER], source: 'local' }]);
      // Its ServiceImport, for the publisher to write: at the derived Service's ClusterSet IP.
      const imports = await openKv(admin, 'serviceimports');
      expect(await until('the ServiceImport of shop/cart', () => kvGetJson(imports, serviceImportKey({ cluster: CLUSTER, namespace: 'shop', name: 'cart' })))).toEqual({
        v: 1,
        namespace: 'shop',
        name: 'cart',
        spec: { ips: [(derived as Service).spec.clusterIP], type: 'ClusterSetIP', ports: [{ name: 'http', protocol: 'TCP', port: 80 }], sessionAffinity: 'None' },
        status: { clusters: [{ cluster: CLUSTER }] },
      });
    } finally {
      await mcs.close();
    }
    // Closing included: nothing it did, to the end, was refused.
    expect(log.text()).not.toMatch(/Permissions Violation|Authorization Violation/);
  });

  it('exports a Service with a ServiceExport from its creationTimestamp, and withdraws it when the ServiceExport or the Service goes', async () => {
    const orders: Service = { ...cart, metadata: { name: 'orders', namespace: 'shop', uid: 'u-orders', resourceVersion: '2', creationTimestamp: '2026-01-02T00:00:00Z' } };
    const ordersExport: ServiceExport = {
      apiVersion: 'multicluster.x-k8s.io/v1alpha1',
      kind: 'ServiceExport',
      metadata: { name: 'orders', namespace: 'shop', uid: 'u-orders-export', resourceVersion: '3', creationTimestamp: '2026-01-05T00:00:00Z' },
    };
    const js = jetstream(admin);
    const publish = (type: typeof UPSERTED | typeof DELETED, o: Service | ServiceExport, id: string) =>
      publishAcked(js, kubeSubjectOf(CLUSTER, o, { partitions: 1 }), changeEvent(type, CLUSTER, o, new Date().toISOString()), { msgID: id });
    await publish(UPSERTED, orders, 'orders-1');
    await publish(UPSERTED, ordersExport, 'orders-export-1');
    const mcs = startMcs(mcsConfigWith({ cluster: CLUSTER, natsUrl: leaf.url, natsNkeySeedFile: roleSeedFile(keys, 'mcs'), exportsDomain: 'hub', heartbeat: 500, ttl: 2000, healthPort: 0 }), { logger: capture().logger });
    const central = await connectNats({ url: hub.url, name: 'hub-reader' });
    try {
      await mcs.ready;
      const exportsKv = await until('the exports bucket on the hub', () => openKv(central, 'exports'));
      const key = exportKey({ namespace: 'shop', name: 'orders', cluster: CLUSTER });
      expect(await until('the export of shop/orders', () => kvGetJson(exportsKv, key))).toMatchObject({ name: 'orders', exportedAt: '2026-01-05T00:00:00Z' });
      const imports = await openKv(admin, 'serviceimports');
      expect(await until('the ServiceImport of shop/orders', () => kvGetJson(imports, serviceImportKey({ cluster: CLUSTER, namespace: 'shop', name: 'orders' })))).toMatchObject({ status: { clusters: [{ cluster: CLUSTER }] } });
      // Its ServiceExport's status, for the publisher to write: valid, no conflict.
      const status = await openKv(admin, 'exportstatus');
      const statusKey = exportStatusKey({ cluster: CLUSTER, namespace: 'shop', name: 'orders' });
      expect(await until('the ServiceExport status', () => kvGetJson(status, statusKey))).toMatchObject({
        conditions: [{ type: 'Valid', status: 'True', reason: 'Exported' }, { type: 'Conflict', status: 'False', reason: 'NoConflicts' }],
      });
      await publish(DELETED, orders, 'orders-0/deleted');
      expect(await until('invalid without its Service', async () => {
        const s = (await kvGetJson(status, statusKey)) as { conditions: { reason: string }[] } | undefined;
        return s?.conditions[0]?.reason === 'NoService' ? s : undefined;
      })).toMatchObject({ conditions: [{ type: 'Valid', status: 'False', reason: 'NoService' }] });
      await publish(UPSERTED, { ...orders, metadata: { ...orders.metadata, resourceVersion: '4' } }, 'orders-4');
      await until('the export back with its Service', () => kvGetJson(exportsKv, key));
      await publish(DELETED, ordersExport, 'orders-export-1/deleted');
      await until('the export withdrawn with its ServiceExport', async () => ((await kvGetJson(exportsKv, key)) === undefined ? true : undefined));
      await publish(UPSERTED, { ...ordersExport, metadata: { ...ordersExport.metadata, uid: 'u-orders-export-2', resourceVersion: '5' } }, 'orders-export-2');
      await until('exported again', () => kvGetJson(exportsKv, key));
      await publish(DELETED, orders, 'orders-1/deleted');
      await until('the export withdrawn with its Service', async () => ((await kvGetJson(exportsKv, key)) === undefined ? true : undefined));
      // Its import is gone with it: the ServiceImport's entry is deleted.
      await until('the ServiceImport of shop/orders deleted', async () => ((await kvGetJson(imports, serviceImportKey({ cluster: CLUSTER, namespace: 'shop', name: 'orders' }))) === undefined ? true : undefined));
    } finally {
      await central.close();
      await mcs.close();
    }
  });

  it("starts without a reachable exports domain and still serves its own cluster's imports", async () => {
    const log = capture();
    const mcs = startMcs(mcsConfigWith({ cluster: CLUSTER, natsUrl: leaf.url, natsNkeySeedFile: roleSeedFile(keys, 'mcs'), exportsDomain: 'nowhere', heartbeat: 500, ttl: 2000, healthPort: 0 }), { logger: log.logger });
    try {
      await mcs.ready;
      expect(mcs.readiness()).toEqual({ ready: true });
      expect(mcs.lastImports()?.imports).toMatchObject([{ name: 'cart', source: 'local' }]);
      expect(log.text()).toMatch(/the exports bucket is out of reach/);
    } finally {
      await mcs.close();
    }
  });
});
