// Hostile input at every entrance, while a churning scenario runs: objects a broken or malicious
// API server could serve (through a rewriting proxy), rogue messages in KUBE (a misbehaving
// publisher, e.g. a leaf cluster), and a rogue SLICES message. None crashes a service, none
// yields a slice or view, each lands in the DLQ stream with its reason, and the valid objects —
// hostile-looking but legal names included — still converge to the offline answer.

import { describe, expect, it } from 'vitest';
import { parseScenario, startClusterSim } from '@slicemesh/cluster-sim';
import type { ClusterSim, KubeObj } from '@slicemesh/cluster-sim';
import type { KubeChangeEvent } from '@slicemesh/kube';
import { startApiProxy } from '@slicemesh/kube/testing';
import { dlqSubject, kubeObjectSubject, partitionOf, publishAcked, slicesSubject } from '@slicemesh/nats';
import { expectLiveEqualsOffline, readDeadLetters, readStreamOf, scenarioFinished, startFixture } from './support/fixture.ts';
import { proxiedRunSlots } from './support/proxied-run.ts';
import { churnScenario } from './support/scenarios.ts';

const run = proxiedRunSlots();

const CLUSTER = 'local';
const PARTITIONS = 2;
const isHostile = (name: string): boolean => name.startsWith('hostile-');

type Kind = 'Service' | 'Pod' | 'Node' | 'Endpoints';
interface Served {
  readonly kind: Kind;
  /** What the proxy serves instead of the valid object. */
  readonly rewrite: (o: Record<string, unknown>) => unknown;
  /** Text identifying the rejected object inside the dead letter's raw body. */
  readonly marker: string;
  readonly field: string;
  readonly reason: RegExp;
}

const withMeta = (o: Record<string, unknown>, meta: Record<string, unknown>): unknown => ({ ...o, metadata: { ...(o['metadata'] as object), ...meta } });
const longName = `${'n'.repeat(62)}.`.repeat(4) + 'n'.repeat(2); // 254 characters
// Valid piece by piece, ~800 KB in all: over the watcher's 512 KiB object limit.
const bigPorts = Array.from({ length: 12_000 }, (_, i) => ({ name: `port-${i}`, port: i + 1, protocol: 'TCP', targetPort: i + 1 }));

// Each exists validly in the simulator as `hostile-<n>`; the proxy shows the watcher this instead.
const SERVED: Record<string, Served> = {
  'hostile-dot': { kind: 'Service', rewrite: (o) => withMeta(o, { name: 'my.svc' }), marker: '"my.svc"', field: 'metadata.name', reason: /DNS-1035/ },
  'hostile-star': { kind: 'Service', rewrite: (o) => withMeta(o, { name: 'web-*' }), marker: '"web-*"', field: 'metadata.name', reason: /DNS-1035/ },
  'hostile-gt': { kind: 'Pod', rewrite: (o) => withMeta(o, { name: 'a>b' }), marker: '"a>b"', field: 'metadata.name', reason: /DNS-1123/ },
  'hostile-space': { kind: 'Node', rewrite: (o) => withMeta(o, { name: 'node 1' }), marker: '"node 1"', field: 'metadata.name', reason: /DNS-1123/ },
  'hostile-unicode': { kind: 'Pod', rewrite: (o) => withMeta(o, { name: 'pöd-ünï' }), marker: '"pöd-ünï"', field: 'metadata.name', reason: /DNS-1123/ },
  'hostile-long': { kind: 'Node', rewrite: (o) => withMeta(o, { name: longName }), marker: `"${longName}"`, field: 'metadata.name', reason: /at most 253/ },
  'hostile-ip': { kind: 'Pod', rewrite: (o) => ({ ...o, status: { ...(o['status'] as object), podIP: '10.0.0.256', podIPs: [{ ip: '10.0.0.256' }] } }), marker: '"hostile-ip"', field: 'status.podIP', reason: /valid IP/ },
  'hostile-notes': { kind: 'Service', rewrite: (o) => withMeta(o, { annotations: { blob: 'x'.repeat(300_000) } }), marker: '"hostile-notes"', field: 'metadata.annotations', reason: /total size/ },
  'hostile-big': { kind: 'Service', rewrite: (o) => ({ ...o, spec: { ...(o['spec'] as object), ports: bigPorts } }), marker: '"hostile-big"', field: '<object>', reason: /byte limit/ },
  'hostile-spec': { kind: 'Service', rewrite: (o) => ({ ...o, spec: 'not an object' }), marker: '"hostile-spec"', field: 'spec', reason: /must be an object/ },
  'hostile-nameless': { kind: 'Pod', rewrite: (o) => ({ ...o, metadata: { namespace: 'shop', uid: 'nameless-uid' } }), marker: '"nameless-uid"', field: 'metadata', reason: /metadata\.name/ },
};

function createValid(name: string, kind: Kind): void {
  const s = run.sim as ClusterSim;
  const meta = { name, namespace: 'shop', labels: { app: 'hostile' } };
  if (kind === 'Service') s.store.create('Service', { apiVersion: 'v1', kind, metadata: meta, spec: { ports: [{ port: 80 }] } } as KubeObj);
  else if (kind === 'Node') s.store.create('Node', { apiVersion: 'v1', kind, metadata: { name }, spec: { unschedulable: true }, status: {} } as KubeObj);
  else s.store.create('Pod', { apiVersion: 'v1', kind, metadata: meta, spec: { containers: [{ name: 'c' }] } } as KubeObj);
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('hostile input', () => {
  it('every hostile object or message is dead-lettered with its reason, none becomes a slice, the services keep running and the rest converges', async () => {
    const sim = (run.sim = await startClusterSim({ scenario: parseScenario(churnScenario({ seed: 'e2e-hostile', durationSeconds: 18 }), 'e2e-hostile'), speed: 3 }));
    const proxy = (run.proxy = await startApiProxy(sim.url));
    proxy.mutate = (o) => {
      const name = (o['metadata'] as { name?: string } | undefined)?.name ?? '';
      const h = SERVED[name];
      return h !== undefined && h.kind === o['kind'] ? h.rewrite(o) : o;
    };
    const names = Object.keys(SERVED);
    const half = Math.ceil(names.length / 2);
    for (const n of names.slice(0, half)) createValid(n, SERVED[n]!.kind); // in the initial lists

    // Hostile-looking but legal, so they must flow through: a 253-character dotted pod name
    // behind its own Service, and a dotted node name (not ready: it must not move the hints).
    const legalLong = `${'p'.repeat(62)}.`.repeat(4) + 'p';
    sim.store.create('Service', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'longname', namespace: 'shop' }, spec: { selector: { app: 'longname' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } } as KubeObj);
    sim.store.create('Pod', {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: legalLong, namespace: 'shop', labels: { app: 'longname' } },
      spec: { containers: [{ name: 'c', ports: [{ containerPort: 8080 }] }] },
    } as KubeObj);
    sim.store.create('Node', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'edge.node.1', labels: { 'topology.kubernetes.io/zone': 'zone-a' } }, spec: { unschedulable: true }, status: {} } as KubeObj);

    const f = (run.f = await startFixture({ sim, kubeServer: proxy.url, agents: 'zone', partitions: PARTITIONS }));
    const { stack } = f;
    await stack.ready;
    for (const n of names.slice(half)) createValid(n, SERVED[n]!.kind); // through the watches

    // Rogue messages straight into KUBE and SLICES, as a misbehaving publisher would send them.
    const opts = { prefix: stack.run.names.prefix };
    const js = f.js.js;
    const shopPart = partitionOf('shop', PARTITIONS);
    const podSubject = (name: string, partition = shopPart): string => kubeObjectSubject({ cluster: CLUSTER, partition, kind: 'Pod', namespace: 'shop', name }, opts);
    const pod = (name: string, status: object): object => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'shop', uid: `uid-${name}`, resourceVersion: '1' }, spec: { containers: [{ name: 'c' }] }, status });
    const envelope = (kind: string, object: object, type = 'Upserted.v1'): object => ({ type, cluster: CLUSTER, kind, object, observedAt: new Date().toISOString() });
    await js.publish(podSubject('rogue-json'), '{"type": "Upserted.v1", ', { msgID: 'rogue-json' });
    await publishAcked(js, podSubject('rogue-ip'), envelope('Pod', pod('rogue-ip', { podIP: '999.1.1.1', podIPs: [{ ip: '999.1.1.1' }] })), { msgID: 'rogue-ip' });
    await publishAcked(js, podSubject('rogue-part', (shopPart + 1) % PARTITIONS), envelope('Pod', pod('rogue-part', {})), { msgID: 'rogue-part' });
    await publishAcked(js, podSubject('rogue-type'), envelope('Pod', pod('rogue-type', {}), 'Exploded.v1'), { msgID: 'rogue-type' });
    const svcSubject = kubeObjectSubject({ cluster: CLUSTER, partition: shopPart, kind: 'Service', namespace: 'shop', name: 'rogue-svc' }, opts);
    await publishAcked(js, svcSubject, envelope('Service', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'rogue-svc', namespace: 'shop', uid: 'u-rs', resourceVersion: '1' }, spec: 'nope' }), { msgID: 'rogue-svc' });
    await publishAcked(js, slicesSubject({ cluster: CLUSTER, partition: shopPart, namespace: 'shop', service: 'rogue-slices' }, opts), {
      type: 'SliceChanged.v1', cluster: CLUSTER, namespace: 'shop', service: 'rogue-slices', deletes: [], kubeSeq: { from: 1, to: 1, nodesTo: 1 }, reconcileID: 'rogue',
      upserts: [{ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'rogue-slices-x', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'rogue-slices' } }, addressType: 'IPv4', endpoints: [{ addresses: ['not-an-ip'] }], ports: [] }],
    }, { msgID: 'rogue-slices' });

    await pause(500);
    await scenarioFinished(sim);
    const expected = await expectLiveEqualsOffline(f, isHostile);
    expect([...expected.slices.values()].some((s) => s.includes(legalLong))).toBe(true);

    const letters = await readDeadLetters(f);
    const at = (source: string): string => dlqSubject(CLUSTER, source, opts);
    for (const [name, h] of Object.entries(SERVED)) {
      const letter = letters.find((l) => l.subject === at('watcher') && l.body.object.includes(h.marker));
      expect(letter, name).toBeDefined();
      expect(letter?.body.field, name).toBe(h.field);
      expect(letter?.body.reason, name).toMatch(h.reason);
    }
    const rogue: [string, string, string | undefined, RegExp][] = [
      ['slicer', podSubject('rogue-json'), undefined, /not JSON/],
      ['slicer', podSubject('rogue-ip'), 'object.status.podIP', /IP/],
      ['slicer', podSubject('rogue-part', (shopPart + 1) % PARTITIONS), 'subject', /partition/],
      ['slicer', podSubject('rogue-type'), 'type', /Upserted\.v1 or Deleted\.v1/],
      ['slicer', svcSubject, 'object.spec', /object/],
      ['hints', svcSubject, undefined, /spec/],
      ['hints', slicesSubject({ cluster: CLUSTER, partition: shopPart, namespace: 'shop', service: 'rogue-slices' }, opts), undefined, /IP|address/],
    ];
    for (const [source, subject, field, reason] of rogue) {
      const letter = letters.find((l) => l.subject === at(source) && l.body.subject === subject);
      expect(letter, `${source} ${subject}`).toBeDefined();
      if (field !== undefined) expect(letter?.body.field, `${source} ${subject}`).toBe(field);
      expect(`${letter?.body.field ?? ''} ${letter?.body.reason}`, `${source} ${subject}`).toMatch(reason);
    }
    // Each rejection stored once, whatever the redeliveries.
    const ids = letters.map((l) => l.msgID);
    expect(ids.length).toBe(new Set(ids).size);

    // Nothing hostile reached KUBE through the watcher, Postgres or the views.
    const kube = await readStreamOf<KubeChangeEvent>(f, stack.run.names.kube);
    const markers = Object.values(SERVED).map((h) => h.marker);
    expect(kube.filter((m) => m.msgID.startsWith(`${CLUSTER}/`) && markers.some((x) => JSON.stringify(m.body).includes(x)))).toEqual([]);
    const rows = await stack.db.selectFrom('endpoint_slices').select(['namespace', 'name', 'service']).execute();
    expect(rows.filter((r) => r.service.startsWith('rogue') || isHostile(r.service))).toEqual([]);
    for (const c of stack.components()) expect(c.isReady(), c.name).toBe(true);
  });
});
