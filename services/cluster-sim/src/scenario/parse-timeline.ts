// The `timeline:` section: steps at relative times, each one action, with every reference
// (deployment, service, node or zone) checked against the cluster as it stands at that point.
import { duration, NODE_FIELDS, nodeGroup, objectRef, refKey } from './parse-fields.ts';
import type { Reader } from './reader.ts';
import type { NodeGroup, Scenario, ServiceUpdate, TimelineAction, TimelineStep } from './schema.ts';

const ACTIONS = ['scale', 'rollout', 'failNode', 'recoverNode', 'deletePod', 'churn', 'updateService', 'addNodes', 'removeNode'] as const;

interface NodeInfo {
  readonly zone?: string;
}

function nodeTargets(r: Reader, o: Readonly<Record<string, unknown>>, path: string, nodes: ReadonlyMap<string, NodeInfo>): string[] {
  const given = ['node', 'nodes', 'zone'].filter((k) => o[k] !== undefined);
  if (given.length !== 1) r.fail(path, 'needs exactly one of node, nodes or zone');
  let names: string[];
  if (o['zone'] !== undefined) {
    const zone = r.string(o['zone'], `${path}.zone`);
    names = [...nodes].filter(([, n]) => n.zone === zone).map(([name]) => name);
    if (names.length === 0) r.fail(`${path}.zone`, `no nodes in zone ${JSON.stringify(zone)} at this point`);
    return names;
  }
  names = o['node'] !== undefined ? [r.string(o['node'], `${path}.node`)] : r.list(o['nodes'], `${path}.nodes`).map((n, i) => r.string(n, `${path}.nodes[${i}]`));
  names.forEach((n, i) => nodes.has(n) || r.fail(o['node'] !== undefined ? `${path}.node` : `${path}.nodes[${i}]`, `no node ${JSON.stringify(n)} at this point`));
  return names;
}

function serviceUpdate(r: Reader, o: Readonly<Record<string, unknown>>, path: string): ServiceUpdate {
  const out: { -readonly [K in keyof ServiceUpdate]: ServiceUpdate[K] } = {};
  if (o['annotations'] !== undefined) {
    const a = o['annotations'];
    if (a === null || typeof a !== 'object' || Array.isArray(a)) r.fail(`${path}.annotations`, 'must be a mapping (null values remove an annotation)');
    out.annotations = Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v === null ? null : String(v)]));
  }
  if (o['trafficDistribution'] !== undefined) out.trafficDistribution = o['trafficDistribution'] === null ? null : r.string(o['trafficDistribution'], `${path}.trafficDistribution`);
  if (o['internalTrafficPolicy'] !== undefined) out.internalTrafficPolicy = r.oneOf(o['internalTrafficPolicy'], `${path}.internalTrafficPolicy`, ['Cluster', 'Local'] as const);
  if (o['externalTrafficPolicy'] !== undefined) out.externalTrafficPolicy = r.oneOf(o['externalTrafficPolicy'], `${path}.externalTrafficPolicy`, ['Cluster', 'Local'] as const);
  if (o['publishNotReadyAddresses'] !== undefined) out.publishNotReadyAddresses = r.bool(o['publishNotReadyAddresses'], `${path}.publishNotReadyAddresses`, false);
  if (Object.keys(out).length === 0) r.fail(path, 'updateService needs at least one of annotations, trafficDistribution, internalTrafficPolicy, externalTrafficPolicy, publishNotReadyAddresses');
  return out;
}

export function parseTimeline(r: Reader, raw: readonly unknown[], scenario: Omit<Scenario, 'timeline'>): TimelineStep[] {
  const deployments = new Set(scenario.deployments.map(refKey));
  const services = new Set(scenario.services.map(refKey));
  // Steps are validated in time order so node references see earlier addNodes/removeNode.
  const entries = raw.map((v, i) => {
    const path = `timeline[${i}]`;
    const o = r.object(v, path, ['at', 'action', 'deployment', 'namespace', 'replicas', 'count', 'node', 'nodes', 'zone', 'status', 'evictAfter', 'podsPerSecond', 'service', 'annotations', 'trafficDistribution', 'internalTrafficPolicy', 'externalTrafficPolicy', 'publishNotReadyAddresses', 'group']);
    return { o, path, atMs: duration(r, o['at'] ?? r.fail(`${path}.at`, 'required'), `${path}.at`), index: i };
  });
  entries.sort((a, b) => a.atMs - b.atMs || a.index - b.index);
  const nodes = new Map<string, NodeInfo>();
  for (const g of scenario.nodes) for (const n of g.names) nodes.set(n, g.zone !== undefined ? { zone: g.zone } : {});

  const steps = entries.map(({ o, path, atMs }): TimelineStep => {
    const action = r.oneOf(o['action'], `${path}.action`, ACTIONS);
    const deployment = () => {
      const ref = objectRef(r, o['deployment'] ?? r.fail(`${path}.deployment`, 'required'), o['namespace'], `${path}.deployment`);
      if (!deployments.has(refKey(ref))) r.fail(`${path}.deployment`, `no deployment ${refKey(ref)} in this scenario`);
      return ref;
    };
    let step: TimelineAction;
    switch (action) {
      case 'scale': step = { action, deployment: deployment(), replicas: r.int(o['replicas'], `${path}.replicas`, 0, 100_000) }; break;
      case 'rollout': step = { action, deployment: deployment() }; break;
      case 'deletePod': step = { action, deployment: deployment(), count: r.int(o['count'] ?? 1, `${path}.count`, 1) }; break;
      case 'churn': step = { action, podsPerSecond: r.number(o['podsPerSecond'], `${path}.podsPerSecond`, 0) }; break;
      case 'failNode': {
        const status = r.oneOf(o['status'], `${path}.status`, ['False', 'Unknown'] as const, 'Unknown');
        const evict = o['evictAfter'] === undefined ? undefined : duration(r, o['evictAfter'], `${path}.evictAfter`);
        step = { action, nodes: nodeTargets(r, o, path, nodes), status, ...(evict !== undefined ? { evictAfterMs: evict } : {}) };
        break;
      }
      case 'recoverNode': step = { action, nodes: nodeTargets(r, o, path, nodes) }; break;
      case 'removeNode': {
        const names = nodeTargets(r, o, path, nodes);
        for (const n of names) nodes.delete(n);
        step = { action, nodes: names };
        break;
      }
      case 'addNodes': {
        const group: NodeGroup = nodeGroup(r, o['group'] ?? r.fail(`${path}.group`, `required: a node group (${NODE_FIELDS.join(', ')})`), `${path}.group`, scenario.zones);
        group.names.forEach((n) => nodes.has(n) && r.fail(`${path}.group`, `node ${n} already exists at this point`));
        for (const n of group.names) nodes.set(n, group.zone !== undefined ? { zone: group.zone } : {});
        step = { action, group };
        break;
      }
      case 'updateService': {
        const ref = objectRef(r, o['service'] ?? r.fail(`${path}.service`, 'required'), o['namespace'], `${path}.service`);
        if (!services.has(refKey(ref))) r.fail(`${path}.service`, `no service ${refKey(ref)} in this scenario`);
        step = { action, service: ref, update: serviceUpdate(r, o, path) };
        break;
      }
    }
    return { ...step, atMs };
  });
  return steps;
}
