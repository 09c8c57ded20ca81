// A small recorded history with known events, for tests of the log commands (unit tests over a
// memory log, integration tests that publish it to a real KUBE stream): three zones, a Service
// with topology-mode Auto whose pods come, become Ready, terminate and go, a node that moves
// zone, and a Service with internalTrafficPolicy: Local.

import type { KubeChangeType, WatchedObject } from '@slicemesh/contracts';
import { DELETED, UPSERTED, changeEvent, kubeSubjectOf } from '@slicemesh/contracts';
import type { Node, Pod, Service } from '@slicemesh/model';
import { ANNOTATION_TOPOLOGY_MODE } from '@slicemesh/model';
import { makeNode, makePod, makeService } from '@slicemesh/testing';
import type { LogEvent } from '../src/source.ts';

export interface ScenarioStep {
  readonly type: KubeChangeType;
  readonly object: WatchedObject;
}

let rv = 0;
const v = <T extends WatchedObject>(o: T): T => ({ ...o, metadata: { ...o.metadata, resourceVersion: String(++rv) } });

const node = (name: string, zone: string): Node => makeNode(name, { zone, cpu: '4' });
const pod = (name: string, n: number, nodeName: string, o: { ready?: boolean; terminating?: boolean; app?: string } = {}): Pod =>
  makePod(name, { namespace: 'shop', labels: { app: o.app ?? 'web' }, ips: [`10.1.0.${n}`], nodeName, ready: o.ready ?? true, terminating: o.terminating ?? false });
const web: Service = makeService('web', { namespace: 'shop', clusterIP: '10.96.0.10', annotations: { [ANNOTATION_TOPOLOGY_MODE]: 'Auto' } });
const api: Service = makeService('api', { namespace: 'shop', clusterIP: '10.96.0.11', selector: { app: 'api' }, spec: { internalTrafficPolicy: 'Local' } });

/**
 * The steps, in log order (sequence = index + 1):
 *  1-3 nodes worker-a-1 (zone-a), worker-b-1 (zone-b), worker-c-1 (zone-c)
 *  4 Service shop/web (Auto)      5-10 pods web-1..web-6 Ready, two per node
 *  11 web-7 created NotReady on worker-b-1   12 web-7 became Ready
 *  13 node worker-a-1 moved to zone-c        14 web-1 started terminating   15 web-1 deleted
 *  16 Service shop/api (internalTrafficPolicy: Local)   17-18 pods api-1 (worker-a-1), api-2 (worker-b-1)
 */
export function scenarioSteps(): ScenarioStep[] {
  rv = 0;
  const up = (o: WatchedObject): ScenarioStep => ({ type: UPSERTED, object: v(o) });
  const nodes = ['a', 'b', 'c'].map((z) => node(`worker-${z}-1`, `zone-${z}`));
  const where = ['worker-a-1', 'worker-b-1', 'worker-c-1'];
  return [
    ...nodes.map(up),
    up(web),
    ...[1, 2, 3, 4, 5, 6].map((n) => up(pod(`web-${n}`, n, where[(n - 1) % 3] as string))),
    up(pod('web-7', 7, 'worker-b-1', { ready: false })),
    up(pod('web-7', 7, 'worker-b-1')),
    up(node('worker-a-1', 'zone-c')),
    up(pod('web-1', 1, 'worker-a-1', { ready: false, terminating: true })),
    { type: DELETED, object: v(pod('web-1', 1, 'worker-a-1', { ready: false, terminating: true })) },
    up(api),
    up(pod('api-1', 21, 'worker-a-1', { app: 'api' })),
    up(pod('api-2', 22, 'worker-b-1', { app: 'api' })),
  ];
}

export const SCENARIO_T0 = Date.parse('2026-11-26T10:00:00Z');

/** The time of step `i` (0-based): one minute apart. */
export const scenarioTime = (i: number): string => new Date(SCENARIO_T0 + i * 60_000).toISOString();

/** The subject and KUBE body of each step, as the watcher publishes them. */
export function scenarioMessages(cluster: string, prefix = '', partitions = 2): { readonly subject: string; readonly body: unknown; readonly msgID: string }[] {
  return scenarioSteps().map((s, i) => ({
    subject: kubeSubjectOf(cluster, s.object, { prefix, partitions }),
    body: changeEvent(s.type, cluster, s.object, scenarioTime(i)),
    msgID: `${cluster}/${s.object.metadata.uid ?? ''}/${s.object.metadata.resourceVersion ?? ''}${s.type === DELETED ? '/deleted' : ''}`,
  }));
}

/** The scenario as LogEvents with sequences 1.. and one-minute times. */
export function scenarioEvents(cluster: string, prefix = ''): LogEvent[] {
  return scenarioMessages(cluster, prefix).map((m, i) => ({ seq: i + 1, time: scenarioTime(i), subject: m.subject, data: JSON.parse(JSON.stringify(m.body)) as unknown }));
}
