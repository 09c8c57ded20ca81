// Topology section: hints for 10k services on a 5000-node 3-zone cluster; zone views for a
// 100k-endpoint service; bytes an agent receives for one endpoint change, with and without
// zone scoping.

import type { Endpoint, EndpointSlice, Node, Service } from '@slicemesh/model';
import { ANNOTATION_TOPOLOGY_MODE, LABEL_MANAGED_BY, LABEL_SERVICE_NAME, LABEL_ZONE, MANAGED_BY_CONTROLLER } from '@slicemesh/model';
import { diffZoneViews, UNZONED_VIEW, zoneViews } from '@slicemesh/proxy-state';
import { planServiceObjects } from '@slicemesh/core';
import { hintCluster } from '@slicemesh/core';
import { makeBenchPod, makeBenchService, makeNodes } from './cluster-gen.ts';
import { fmtBytes, fmtMs, median, printTable, sampleMemory, time } from './harness.ts';

const AUTO = { [ANNOTATION_TOPOLOGY_MODE]: 'Auto' };

function sliceFor(svc: Service, index: number, endpoints: Endpoint[]): EndpointSlice {
  return {
    kind: 'EndpointSlice',
    apiVersion: 'discovery.k8s.io/v1',
    metadata: {
      name: `${svc.metadata.name}-${index}`,
      namespace: svc.metadata.namespace,
      labels: { [LABEL_SERVICE_NAME]: svc.metadata.name, [LABEL_MANAGED_BY]: MANAGED_BY_CONTROLLER },
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints,
  };
}

function zoneOf(nodes: readonly Node[], i: number): { nodeName: string; zone: string } {
  const node = nodes[i % nodes.length];
  return { nodeName: node?.metadata.name ?? 'node-0', zone: node?.metadata.labels?.[LABEL_ZONE] ?? 'zone-a' };
}

function hintsFor10kServices(rows: [string, string, string?][], quick: boolean): void {
  const nodes = makeNodes(5000);
  const services: Service[] = [];
  const slices: EndpointSlice[] = [];
  const count = quick ? 1000 : 10_000;
  const perService = 30;
  for (let s = 0; s < count; s++) {
    const svc = makeBenchService(`svc-${s}`, { annotations: AUTO });
    services.push(svc);
    const eps: Endpoint[] = [];
    for (let e = 0; e < perService; e++) {
      const n = s * perService + e;
      const { nodeName, zone } = zoneOf(nodes, n * 7 + s);
      eps.push({ addresses: [`10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`], conditions: { ready: true, serving: true, terminating: false }, nodeName, zone });
    }
    slices.push(sliceFor(svc, 0, eps));
  }
  sampleMemory();
  const r = median(3, () => hintCluster({ nodes, slices, services }));
  const enabled = r.value.decisions.filter((d) => d.enabled).length;
  rows.push([`hints: ${count / 1000}k services x ${perService} endpoints, 5000 nodes, 3 zones`, fmtMs(r.ms), `${enabled}/${r.value.decisions.length} services hinted`]);
  sampleMemory();
}

function viewsFor100k(rows: [string, string, string?][], quick: boolean): void {
  const size = quick ? 10_000 : 100_000;
  const nodeList = makeNodes(300);
  const nodes = new Map(nodeList.map((n) => [n.metadata.name, n]));
  const service = makeBenchService('big', { annotations: AUTO });
  let pods = Array.from({ length: size }, (_, i) => makeBenchPod('big', i, nodeList.length));
  const sliced = planServiceObjects({ service, pods, nodes, existingSlices: [], triggerTime: null }).plan.create;
  const hinted = hintCluster({ nodes: nodeList, slices: sliced, services: [service] }).slices;
  const views = median(3, () => zoneViews({ services: [service], slices: hinted, nodes: nodeList }));
  const perZone = [...views.value.byZone.entries()]
    .map(([z, es]) => `${z === UNZONED_VIEW ? 'unzoned' : z}: ${es.reduce((n, e) => n + e.slice.endpoints.length, 0)}`)
    .join(', ');
  rows.push([`zone views of a ${size / 1000}k-endpoint service`, fmtMs(views.ms), `${views.value.entries.size} entries; endpoints per view ${perZone}`]);
  sampleMemory();

  // One endpoint change: a pod turns unready. Unscoped, an agent receives every changed slice
  // whole; scoped, it receives only the view entries of its zone that changed.
  pods = pods.slice();
  const victim = size >> 1;
  pods[victim] = makeBenchPod('big', victim, nodeList.length, 0, false);
  const resliced = planServiceObjects({ service, pods, nodes, existingSlices: sliced, triggerTime: null }).plan;
  const changedNames = new Set(resliced.update.map((s) => s.metadata.name));
  const after = hinted.map((s) => resliced.update.find((u) => u.metadata.name === s.metadata.name) ?? s);
  const rehinted = hintCluster({ nodes: nodeList, slices: after, services: [service] }).slices;
  const t = time(() => diffZoneViews(views.value, zoneViews({ services: [service], slices: rehinted, nodes: nodeList })));
  const unscoped = rehinted.filter((s) => changedNames.has(s.metadata.name)).reduce((n, s) => n + Buffer.byteLength(JSON.stringify(s)), 0);
  const byZone = new Map<string, number>();
  for (const op of t.value) {
    const zone = op.op === 'put' ? op.entry.zone : op.zone;
    const bytes = op.op === 'put' ? Buffer.byteLength(JSON.stringify(op.entry.slice)) : 0;
    byZone.set(zone, (byZone.get(zone) ?? 0) + bytes);
  }
  const zones = views.value.zones.filter((z) => z !== UNZONED_VIEW);
  const scoped = zones.map((z) => byZone.get(z) ?? 0);
  const avg = scoped.reduce((a, b) => a + b, 0) / Math.max(1, zones.length);
  rows.push([`one endpoint change: view diff`, fmtMs(t.ms), `${t.value.length} view ops across all zones`]);
  rows.push([`bytes per agent, unscoped (whole changed slice)`, fmtBytes(unscoped), `${changedNames.size} slice(s)`]);
  rows.push([
    `bytes per agent, zone-scoped (avg over zones)`,
    fmtBytes(Math.round(avg)),
    zones.map((z, i) => `${z}: ${fmtBytes(scoped[i] ?? 0)}`).join(', ') + `; unzoned nodes: ${fmtBytes(byZone.get(UNZONED_VIEW) ?? 0)}`,
  ]);
}

export function runTopologyBench(opts: { quick: boolean }): void {
  const rows: [string, string, string?][] = [];
  hintsFor10kServices(rows, opts.quick);
  viewsFor100k(rows, opts.quick);
  printTable('topology', rows);
}
