// The fan-out section's cluster, fed into KUBE as the watcher feeds it: 1000 nodes in 3 zones
// plus a few unzoned ones, Services of 5 pods each, and pod Ready transitions. Every object is
// written as the API server would serve it, goes through the watcher's own toDomain (libs/kube)
// and eventFor (services/watcher: subject, envelope, Nats-Msg-Id `<cluster>/<uid>/<rv>`), and is
// published with publishAcked like the watcher's KUBE log: one version of an object in flight at
// a time, resourceVersions from one counter as an API server issues them.

import type { JetStreamClient } from '@slicemesh/nats';
import { publishAcked } from '@slicemesh/nats';
import type { WatchedKind } from '@slicemesh/contracts';
import { toDomain } from '@slicemesh/kube';
import { LABEL_ZONE } from '@slicemesh/model';
import { eventFor } from '@slicemesh/watcher';

export const FANOUT_ZONES = ['zone-a', 'zone-b', 'zone-c'] as const;
export const UNZONED_NODES = 6;
export const PODS_PER_SERVICE = 5;
export const NAMESPACES = 4;

/** One pod Ready transition as the generator made it: the pod's IP, its new Ready, and its lastTransitionTime (epoch ms). */
export interface Flip {
  readonly ip: string;
  readonly ready: boolean;
  readonly at: number;
  /** Resolves when KUBE acknowledged it; false when the publish failed. */
  readonly acked: Promise<boolean>;
}

interface PodState {
  readonly raw: Record<string, unknown>;
  readonly ip: string;
  ready: boolean;
}

const nsOf = (svc: number) => `bench-${svc % NAMESPACES}`;

export class FanoutCluster {
  readonly #js: JetStreamClient;
  readonly #cluster: string;
  readonly #layout: { partitions: number; prefix: string };
  readonly nodeCount: number;
  readonly serviceCount: number;
  readonly #pods: PodState[] = [];
  #rv = 1000;
  #next = 0;

  constructor(js: JetStreamClient, o: { cluster: string; partitions: number; prefix: string; nodes: number; services: number }) {
    this.#js = js;
    this.#cluster = o.cluster;
    this.#layout = { partitions: o.partitions, prefix: o.prefix };
    this.nodeCount = o.nodes;
    this.serviceCount = o.services;
  }

  /** The zone label of node `i` (undefined for the last UNZONED_NODES). */
  zoneOf(i: number): string | undefined {
    return i < this.nodeCount - UNZONED_NODES ? FANOUT_ZONES[i % FANOUT_ZONES.length] : undefined;
  }

  async #publish(kind: WatchedKind, raw: Record<string, unknown>, observedAt: number): Promise<void> {
    const msg = eventFor('Upserted.v1', toDomain(kind, raw), this.#cluster, observedAt, this.#layout);
    await publishAcked(this.#js, msg.subject, msg.event, { msgID: msg.msgID, timeoutMs: 10_000 });
  }

  /** Publishes every node, Service and (ready) pod, at most `window` in flight. */
  async seed(window = 256): Promise<number> {
    const created = '2026-01-01T00:00:00Z';
    const objects: [WatchedKind, Record<string, unknown>][] = [];
    for (let i = 0; i < this.nodeCount; i++) {
      const zone = this.zoneOf(i);
      objects.push(['Node', {
        apiVersion: 'v1', kind: 'Node',
        metadata: { name: `node-${i}`, uid: `uid-node-${i}`, resourceVersion: String(++this.#rv), creationTimestamp: created, labels: { 'kubernetes.io/hostname': `node-${i}`, ...(zone !== undefined ? { [LABEL_ZONE]: zone } : {}) } },
        status: { allocatable: { cpu: '8' }, conditions: [{ type: 'Ready', status: 'True' }], addresses: [{ type: 'InternalIP', address: `172.20.${i >> 8}.${i & 255}` }] },
      }]);
    }
    for (let s = 0; s < this.serviceCount; s++) {
      const ip = `10.96.${(s + 10) >> 8}.${(s + 10) & 255}`;
      objects.push(['Service', {
        apiVersion: 'v1', kind: 'Service',
        metadata: { name: `svc-${s}`, namespace: nsOf(s), uid: `uid-svc-${s}`, resourceVersion: String(++this.#rv), creationTimestamp: created },
        spec: {
          type: 'ClusterIP', selector: { app: `svc-${s}` }, clusterIP: ip, clusterIPs: [ip], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack',
          ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
          ...(s % 2 === 0 ? { trafficDistribution: 'PreferClose' } : {}),
        },
      }]);
      for (let e = 0; e < PODS_PER_SERVICE; e++) {
        const n = s * PODS_PER_SERVICE + e;
        const podIP = `10.${128 + (n >> 16)}.${(n >> 8) & 255}.${n & 255}`;
        const raw: Record<string, unknown> = {
          apiVersion: 'v1', kind: 'Pod',
          metadata: { name: `svc-${s}-${e}`, namespace: nsOf(s), uid: `uid-pod-${s}-${e}`, resourceVersion: String(++this.#rv), creationTimestamp: created, labels: { app: `svc-${s}` } },
          spec: { nodeName: `node-${(s * 7 + e * 13) % this.nodeCount}`, containers: [{ name: 'main', ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }] }] },
          status: { phase: 'Running', podIP, podIPs: [{ ip: podIP }], conditions: conditions(true, created) },
        };
        this.#pods.push({ raw, ip: podIP, ready: true });
        objects.push(['Pod', raw]);
      }
    }
    const inflight = new Set<Promise<void>>();
    for (const [kind, raw] of objects) {
      while (inflight.size >= window) await Promise.race(inflight);
      const p = this.#publish(kind, raw, Date.now()).finally(() => inflight.delete(p));
      inflight.add(p);
    }
    await Promise.all(inflight);
    return objects.length;
  }

  /**
   * Flips the next pod's Ready condition (lastTransitionTime = now, millisecond precision) and
   * publishes the new version. Pods are taken in a stride that visits every pod before any twice,
   * so one pod never has two versions in flight.
   */
  flip(): Flip {
    const pod = this.#pods[(this.#next++ * 7919) % this.#pods.length];
    if (pod === undefined) throw new Error('seed() first');
    pod.ready = !pod.ready;
    const at = Date.now();
    const raw = pod.raw as { metadata: Record<string, unknown>; status: Record<string, unknown> };
    raw.metadata = { ...raw.metadata, resourceVersion: String(++this.#rv) };
    raw.status = { ...raw.status, conditions: conditions(pod.ready, new Date(at).toISOString()) };
    const acked = this.#publish('Pod', { ...raw }, at).then(() => true, () => false);
    return { ip: pod.ip, ready: pod.ready, at, acked };
  }
}

function conditions(ready: boolean, at: string) {
  const status = ready ? 'True' : 'False';
  return [
    { type: 'Initialized', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' },
    { type: 'ContainersReady', status, lastTransitionTime: at },
    { type: 'Ready', status, lastTransitionTime: at },
  ];
}
