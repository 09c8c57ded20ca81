// Reads a scenario from YAML text into a validated Scenario (see schema.ts), failing with
// the file and the field path on the first problem.
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { parseCidr4 } from '../ipv4.ts';
import { parseTimeline } from './parse-timeline.ts';
import { cpu, dnsName, duration, nodeGroup, objectRef, refKey } from './parse-fields.ts';
import { Reader, ScenarioError } from './reader.ts';
import { DEFAULT_CLUSTER } from './schema.ts';
import type {
  ClusterSettings, ContainerPortSpec, DeploymentSpec, Scenario, ServicePortSpec, ServiceSpec, StaticEndpointsSpec,
} from './schema.ts';

const PROTOCOLS = ['TCP', 'UDP', 'SCTP'] as const;

interface PodDefaults {
  readonly readinessDelayMs: number;
  readonly terminationGracePeriodSeconds: number;
  readonly cpuMillis: number;
}

function cluster(r: Reader, v: unknown): ClusterSettings {
  if (v === undefined || v === null) return DEFAULT_CLUSTER;
  const o = r.object(v, 'cluster', ['region', 'podCIDR', 'nodeCIDRPrefix', 'serviceCIDR', 'nodeIPCIDR', 'kubeletVersion', 'kubernetesService']);
  const cidr = (key: string, fallback: string): string => {
    const text = r.optString(o[key], `cluster.${key}`) ?? fallback;
    if (!parseCidr4(text)) r.fail(`cluster.${key}`, `must be an IPv4 CIDR like 10.0.0.0/16, got ${JSON.stringify(text)}`);
    return text;
  };
  const podCIDR = cidr('podCIDR', DEFAULT_CLUSTER.podCIDR);
  const nodeCIDRPrefix = o['nodeCIDRPrefix'] === undefined ? DEFAULT_CLUSTER.nodeCIDRPrefix : r.int(o['nodeCIDRPrefix'], 'cluster.nodeCIDRPrefix', parseCidr4(podCIDR)!.prefix, 30);
  return {
    region: r.optString(o['region'], 'cluster.region') ?? DEFAULT_CLUSTER.region,
    podCIDR,
    nodeCIDRPrefix,
    serviceCIDR: cidr('serviceCIDR', DEFAULT_CLUSTER.serviceCIDR),
    nodeIPCIDR: cidr('nodeIPCIDR', DEFAULT_CLUSTER.nodeIPCIDR),
    kubeletVersion: r.optString(o['kubeletVersion'], 'cluster.kubeletVersion') ?? DEFAULT_CLUSTER.kubeletVersion,
    kubernetesService: r.bool(o['kubernetesService'], 'cluster.kubernetesService', DEFAULT_CLUSTER.kubernetesService),
  };
}

function podDefaults(r: Reader, v: unknown): PodDefaults {
  const o = v === undefined || v === null ? {} : r.object(v, 'defaults', ['readinessDelay', 'readinessDelayMs', 'terminationGracePeriodSeconds', 'cpu']);
  return {
    readinessDelayMs: o['readinessDelayMs'] !== undefined ? r.int(o['readinessDelayMs'], 'defaults.readinessDelayMs', 0)
      : o['readinessDelay'] !== undefined ? duration(r, o['readinessDelay'], 'defaults.readinessDelay') : 1000,
    terminationGracePeriodSeconds: o['terminationGracePeriodSeconds'] === undefined ? 2 : r.int(o['terminationGracePeriodSeconds'], 'defaults.terminationGracePeriodSeconds', 0),
    cpuMillis: cpu(r, o['cpu'], 'defaults.cpu', 100),
  };
}

function containerPort(r: Reader, v: unknown, path: string): ContainerPortSpec {
  const o = r.object(v, path, ['name', 'containerPort', 'protocol']);
  const name = r.optString(o['name'], `${path}.name`);
  return { ...(name ? { name } : {}), containerPort: r.int(o['containerPort'], `${path}.containerPort`, 1, 65535), protocol: r.oneOf(o['protocol'], `${path}.protocol`, PROTOCOLS, 'TCP') };
}

interface InlineService {
  readonly raw: Readonly<Record<string, unknown>>;
  readonly path: string;
}

interface DeploymentGroup {
  readonly deployments: DeploymentSpec[];
  readonly services: InlineService[];
}

const SERVICE_FIELDS = ['name', 'namespace', 'type', 'deployment', 'selector', 'headless', 'ports', 'labels', 'annotations', 'trafficDistribution', 'internalTrafficPolicy', 'externalTrafficPolicy', 'publishNotReadyAddresses', 'endpoints'];

const DEPLOYMENT_FIELDS = ['name', 'namePrefix', 'count', 'namespace', 'replicas', 'labels', 'containerPorts', 'zones', 'nodeSelector', 'cpu', 'readinessDelay', 'readinessDelayMs', 'terminationGracePeriodSeconds', 'strategy', 'service'];

/**
 * One `deployments:` entry: a single deployment (`name`) or `count` alike ones named
 * `namePrefix-1..count`, each optionally with a same-named Service (`service:`).
 */
function deploymentGroup(r: Reader, v: unknown, path: string, zones: readonly string[], d: PodDefaults): DeploymentGroup {
  const o = r.object(v, path, DEPLOYMENT_FIELDS);
  let names: string[];
  if (o['name'] !== undefined) {
    if (o['namePrefix'] !== undefined || o['count'] !== undefined) r.fail(`${path}.name`, 'give either name, or namePrefix and count');
    names = [dnsName(r, o['name'], `${path}.name`, 'label')];
  } else {
    const prefix = r.string(o['namePrefix'] ?? r.fail(path, 'needs name or namePrefix'), `${path}.namePrefix`);
    names = Array.from({ length: r.int(o['count'] ?? 1, `${path}.count`, 1, 100_000) }, (_, i) => `${prefix}-${i + 1}`);
    dnsName(r, names[names.length - 1], `${path}.namePrefix`, 'dns1035');
  }
  const deployments = names.map((name) => deployment(r, o, path, name, names.length > 1, zones, d));
  const services = o['service'] === undefined ? [] : names.map((name, i) => {
    const raw = r.object(o['service'], `${path}.service`, SERVICE_FIELDS.filter((f) => !['name', 'namespace', 'deployment', 'selector'].includes(f)));
    return { raw: { ...raw, name, namespace: deployments[i]!.namespace, deployment: name }, path: `${path}.service` };
  });
  return { deployments, services };
}

function deployment(r: Reader, o: Readonly<Record<string, unknown>>, path: string, name: string, grouped: boolean, zones: readonly string[], d: PodDefaults): DeploymentSpec {
  const given = r.stringMap(o['labels'], `${path}.labels`);
  const labels = grouped ? { ...given, app: name } : given;
  const depZones = r.list(o['zones'], `${path}.zones`).map((z, i) => {
    const zone = r.string(z, `${path}.zones[${i}]`);
    if (!zones.includes(zone)) r.fail(`${path}.zones[${i}]`, `unknown zone ${JSON.stringify(zone)}`);
    return zone;
  });
  const strategy = o['strategy'] === undefined ? {} : r.object(o['strategy'], `${path}.strategy`, ['maxSurge', 'maxUnavailable']);
  const maxSurge = strategy['maxSurge'] === undefined ? 1 : r.int(strategy['maxSurge'], `${path}.strategy.maxSurge`, 0);
  const maxUnavailable = strategy['maxUnavailable'] === undefined ? 0 : r.int(strategy['maxUnavailable'], `${path}.strategy.maxUnavailable`, 0);
  if (maxSurge === 0 && maxUnavailable === 0) r.fail(`${path}.strategy`, 'maxSurge and maxUnavailable may not both be 0');
  return {
    name,
    namespace: o['namespace'] === undefined ? 'default' : dnsName(r, o['namespace'], `${path}.namespace`, 'label'),
    replicas: r.int(o['replicas'] ?? 1, `${path}.replicas`, 0, 100_000),
    labels: Object.keys(labels).length > 0 ? labels : { app: name },
    containerPorts: r.list(o['containerPorts'], `${path}.containerPorts`).map((p, i) => containerPort(r, p, `${path}.containerPorts[${i}]`)),
    zones: depZones,
    nodeSelector: r.stringMap(o['nodeSelector'], `${path}.nodeSelector`),
    cpuMillis: cpu(r, o['cpu'], `${path}.cpu`, d.cpuMillis),
    readinessDelayMs: o['readinessDelayMs'] !== undefined ? r.int(o['readinessDelayMs'], `${path}.readinessDelayMs`, 0)
      : o['readinessDelay'] !== undefined ? duration(r, o['readinessDelay'], `${path}.readinessDelay`) : d.readinessDelayMs,
    terminationGracePeriodSeconds: o['terminationGracePeriodSeconds'] === undefined ? d.terminationGracePeriodSeconds : r.int(o['terminationGracePeriodSeconds'], `${path}.terminationGracePeriodSeconds`, 0),
    maxSurge,
    maxUnavailable,
  };
}

function servicePort(r: Reader, v: unknown, path: string): ServicePortSpec {
  const o = r.object(v, path, ['name', 'port', 'targetPort', 'protocol', 'nodePort']);
  const name = r.optString(o['name'], `${path}.name`);
  const target = o['targetPort'];
  if (target !== undefined && typeof target !== 'string' && (typeof target !== 'number' || !Number.isInteger(target) || target < 1 || target > 65535)) {
    r.fail(`${path}.targetPort`, 'must be a port number or a container port name');
  }
  return {
    ...(name ? { name } : {}),
    port: r.int(o['port'], `${path}.port`, 1, 65535),
    ...(target !== undefined ? { targetPort: target as number | string } : {}),
    protocol: r.oneOf(o['protocol'], `${path}.protocol`, PROTOCOLS, 'TCP'),
    ...(o['nodePort'] !== undefined ? { nodePort: r.int(o['nodePort'], `${path}.nodePort`, 30000, 32767) } : {}),
  };
}

function staticEndpoints(r: Reader, v: unknown, path: string): StaticEndpointsSpec {
  const o = r.object(v, path, ['addresses', 'ports']);
  return {
    addresses: r.list(o['addresses'], `${path}.addresses`).map((a, i) => {
      const at = `${path}.addresses[${i}]`;
      const x = r.object(a, at, ['ip', 'nodeName', 'ready']);
      const nodeName = r.optString(x['nodeName'], `${at}.nodeName`);
      return { ip: r.string(x['ip'], `${at}.ip`), ...(nodeName ? { nodeName } : {}), ready: r.bool(x['ready'], `${at}.ready`, true) };
    }),
    ports: r.list(o['ports'], `${path}.ports`).map((p, i) => {
      const at = `${path}.ports[${i}]`;
      const x = r.object(p, at, ['name', 'port', 'protocol']);
      const name = r.optString(x['name'], `${at}.name`);
      return { ...(name ? { name } : {}), port: r.int(x['port'], `${at}.port`, 1, 65535), protocol: r.oneOf(x['protocol'], `${at}.protocol`, PROTOCOLS, 'TCP') };
    }),
  };
}

function service(r: Reader, v: unknown, path: string, deployments: ReadonlyMap<string, DeploymentSpec>): ServiceSpec {
  const o = r.object(v, path, SERVICE_FIELDS);
  const name = dnsName(r, o['name'], `${path}.name`, 'dns1035');
  const namespace = o['namespace'] === undefined ? 'default' : dnsName(r, o['namespace'], `${path}.namespace`, 'label');
  let selector: Readonly<Record<string, string>> | null = null;
  if (o['deployment'] !== undefined) {
    if (o['selector'] !== undefined) r.fail(`${path}.selector`, 'give either deployment or selector, not both');
    const ref = objectRef(r, o['deployment'], namespace, `${path}.deployment`);
    const dep = deployments.get(refKey(ref));
    if (!dep) r.fail(`${path}.deployment`, `no deployment ${refKey(ref)} in this scenario`);
    if (ref.namespace !== namespace) r.fail(`${path}.deployment`, 'a service selects pods of its own namespace only');
    selector = dep.labels;
  } else if (o['selector'] !== undefined && o['selector'] !== null) {
    selector = r.stringMap(o['selector'], `${path}.selector`);
  }
  if (o['endpoints'] !== undefined && selector) r.fail(`${path}.endpoints`, 'static endpoints are only for selectorless services');
  const type = r.oneOf(o['type'], `${path}.type`, ['ClusterIP', 'NodePort', 'LoadBalancer'] as const, 'ClusterIP');
  const headless = r.bool(o['headless'], `${path}.headless`, false);
  if (headless && type !== 'ClusterIP') r.fail(`${path}.headless`, 'only a ClusterIP service can be headless');
  const ports = r.list(o['ports'], `${path}.ports`).map((p, i) => servicePort(r, p, `${path}.ports[${i}]`));
  if (ports.length > 1) ports.forEach((p, i) => p.name || r.fail(`${path}.ports[${i}].name`, 'every port of a multi-port service needs a name'));
  const itp = o['internalTrafficPolicy'] === undefined ? undefined : r.oneOf(o['internalTrafficPolicy'], `${path}.internalTrafficPolicy`, ['Cluster', 'Local'] as const);
  const etp = o['externalTrafficPolicy'] === undefined ? undefined : r.oneOf(o['externalTrafficPolicy'], `${path}.externalTrafficPolicy`, ['Cluster', 'Local'] as const);
  if (etp && type === 'ClusterIP') r.fail(`${path}.externalTrafficPolicy`, 'only NodePort and LoadBalancer services have an external traffic policy');
  const td = r.optString(o['trafficDistribution'], `${path}.trafficDistribution`);
  return {
    name,
    namespace,
    type,
    selector,
    ports,
    headless,
    labels: r.stringMap(o['labels'], `${path}.labels`),
    annotations: r.stringMap(o['annotations'], `${path}.annotations`),
    ...(td ? { trafficDistribution: td } : {}),
    ...(itp ? { internalTrafficPolicy: itp } : {}),
    ...(etp ? { externalTrafficPolicy: etp } : {}),
    publishNotReadyAddresses: r.bool(o['publishNotReadyAddresses'], `${path}.publishNotReadyAddresses`, false),
    ...(o['endpoints'] !== undefined ? { endpoints: staticEndpoints(r, o['endpoints'], `${path}.endpoints`) } : {}),
  };
}

function unique<T>(r: Reader, items: readonly T[], keyOf: (t: T) => readonly string[], path: string, what: string): void {
  const seen = new Set<string>();
  items.forEach((item, i) => {
    for (const key of keyOf(item)) {
      if (seen.has(key)) r.fail(`${path}[${i}]`, `duplicate ${what} ${key}`);
      seen.add(key);
    }
  });
}

/** Validates a parsed YAML document. `source` names it in errors. */
export function scenarioFromData(data: unknown, source: string): Scenario {
  const r = new Reader(source);
  const o = r.object(data ?? {}, '', ['seed', 'durationSeconds', 'cluster', 'defaults', 'zones', 'nodes', 'deployments', 'services', 'churn', 'timeline']);
  const zones = r.list(o['zones'], 'zones').map((z, i) => dnsName(r, z, `zones[${i}]`));
  if (new Set(zones).size !== zones.length) r.fail('zones', 'zones must be unique');
  const defaults = podDefaults(r, o['defaults']);
  const nodes = r.list(o['nodes'], 'nodes').map((n, i) => nodeGroup(r, n, `nodes[${i}]`, zones));
  unique(r, nodes, (g) => g.names, 'nodes', 'node');
  const groups = r.list(o['deployments'], 'deployments').map((d, i) => deploymentGroup(r, d, `deployments[${i}]`, zones, defaults));
  const deployments = groups.flatMap((g) => g.deployments);
  unique(r, deployments, (d) => [refKey(d)], 'deployments', 'deployment');
  const byKey = new Map(deployments.map((d) => [refKey(d), d]));
  const services = [
    ...groups.flatMap((g) => g.services.map((s) => service(r, s.raw, s.path, byKey))),
    ...r.list(o['services'], 'services').map((s, i) => service(r, s, `services[${i}]`, byKey)),
  ];
  unique(r, services, (s) => [refKey(s)], 'services', 'service');
  const churnRaw = o['churn'] === undefined ? {} : r.object(o['churn'], 'churn', ['podsPerSecond', 'deployments']);
  const churnDeployments = r.list(churnRaw['deployments'], 'churn.deployments').map((d, i) => {
    const ref = objectRef(r, d, undefined, `churn.deployments[${i}]`);
    if (!byKey.has(refKey(ref))) r.fail(`churn.deployments[${i}]`, `no deployment ${refKey(ref)} in this scenario`);
    return ref;
  });
  const seed = o['seed'] === undefined ? 'slicemesh' : r.string(o['seed'], 'seed');
  const scenario: Omit<Scenario, 'timeline'> = {
    source,
    seed,
    ...(o['durationSeconds'] !== undefined ? { durationMs: Math.round(r.number(o['durationSeconds'], 'durationSeconds', 0) * 1000) } : {}),
    cluster: cluster(r, o['cluster']),
    zones,
    nodes,
    deployments,
    services,
    churn: { podsPerSecond: churnRaw['podsPerSecond'] === undefined ? 0 : r.number(churnRaw['podsPerSecond'], 'churn.podsPerSecond', 0), deployments: churnDeployments },
  };
  return { ...scenario, timeline: parseTimeline(r, r.list(o['timeline'], 'timeline'), scenario) };
}

/** Parses scenario YAML text. */
export function parseScenario(text: string, source = '<inline>'): Scenario {
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (err) {
    throw new ScenarioError(source, '', `not valid YAML: ${(err as Error).message}`);
  }
  return scenarioFromData(data, source);
}

/** Reads and parses a scenario file. */
export function loadScenario(file: string): Scenario {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ScenarioError(file, '', `cannot read: ${(err as Error).message}`);
  }
  return parseScenario(text, file);
}

