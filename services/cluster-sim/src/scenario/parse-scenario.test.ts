import { describe, expect, it } from 'vitest';
import { DEFAULT_SCENARIO_FILE, LARGE_SCENARIO_FILE, STATIC_SCENARIO_FILE } from '../start.ts';
import { loadScenario, parseScenario } from './parse-scenario.ts';
import { ScenarioError } from './reader.ts';

describe('shipped scenarios', () => {
  it('default.yaml: 3 zones, 9 nodes (one control plane), every service feature, a short timeline', () => {
    const s = loadScenario(DEFAULT_SCENARIO_FILE);
    expect(s.zones).toEqual(['zone-a', 'zone-b', 'zone-c']);
    expect(s.nodes.flatMap((g) => g.names)).toHaveLength(9);
    expect(s.nodes.filter((g) => g.controlPlane).flatMap((g) => g.names)).toEqual(['control-plane-1']);
    const svc = (name: string) => s.services.find((x) => x.name === name)!;
    expect(svc('web').annotations).toEqual({ 'service.kubernetes.io/topology-mode': 'Auto' });
    expect(svc('api').trafficDistribution).toBe('PreferClose');
    expect(svc('logs').internalTrafficPolicy).toBe('Local');
    expect([svc('edge').type, svc('edge').externalTrafficPolicy]).toEqual(['NodePort', 'Local']);
    expect([svc('cache').headless, svc('cache').publishNotReadyAddresses]).toEqual([true, true]);
    expect([svc('legacy-db').selector, svc('legacy-db').endpoints?.addresses.length]).toEqual([null, 2]);
    expect(new Set(s.timeline.map((t) => t.action))).toEqual(new Set(['rollout', 'scale', 'failNode', 'recoverNode', 'updateService', 'deletePod']));
    expect(s.churn.podsPerSecond).toBeGreaterThan(0);
  });

  it('static.yaml: 3 zones, 7 nodes, 4 services, and nothing that happens by itself', () => {
    const s = loadScenario(STATIC_SCENARIO_FILE);
    expect(s.zones).toEqual(['zone-a', 'zone-b', 'zone-c']);
    expect(s.nodes.flatMap((g) => g.names)).toHaveLength(7);
    expect(s.services.map((x) => x.name)).toEqual(['web', 'api', 'cache', 'legacy-db']);
    expect([s.timeline, s.churn.podsPerSecond, s.durationMs]).toEqual([[], 0, undefined]);
  });

  it('large.yaml: 500 nodes, 200 services, 20000 pods', () => {
    const s = loadScenario(LARGE_SCENARIO_FILE);
    expect(s.nodes.flatMap((g) => g.names)).toHaveLength(500);
    expect(s.services).toHaveLength(200);
    expect(s.deployments.reduce((n, d) => n + d.replicas, 0)).toBe(20_000);
    expect(new Set(s.deployments.map((d) => d.labels['app'])).size).toBe(200);
  });
});

describe('parseScenario defaults', () => {
  it('fills defaults: namespace, labels, ports protocol, strategy, cluster settings', () => {
    const s = parseScenario(`
zones: [a]
nodes: [{namePrefix: n, count: 2, zone: a}]
deployments: [{name: web, containerPorts: [{name: http, containerPort: 80}]}]
services: [{name: web, deployment: web, ports: [{port: 80, targetPort: http}]}]
`);
    expect(s.nodes[0]).toMatchObject({ names: ['n-1', 'n-2'], zone: 'a', cpuMillis: 4000, ready: true, controlPlane: false });
    expect(s.deployments[0]).toMatchObject({ namespace: 'default', replicas: 1, labels: { app: 'web' }, maxSurge: 1, maxUnavailable: 0, readinessDelayMs: 1000, terminationGracePeriodSeconds: 2, cpuMillis: 100 });
    expect(s.services[0]).toMatchObject({ namespace: 'default', type: 'ClusterIP', selector: { app: 'web' }, ports: [{ port: 80, targetPort: 'http', protocol: 'TCP' }] });
    expect([s.seed, s.durationMs, s.cluster.podCIDR, s.timeline]).toEqual(['slicemesh', undefined, '10.244.0.0/14', []]);
  });

  it('a deployment group expands to count deployments each with its own service and app label', () => {
    const s = parseScenario(`
deployments: [{namePrefix: app, count: 3, labels: {tier: x}, service: {ports: [{port: 80}]}}]
`);
    expect(s.deployments.map((d) => [d.name, d.labels])).toEqual([['app-1', { tier: 'x', app: 'app-1' }], ['app-2', { tier: 'x', app: 'app-2' }], ['app-3', { tier: 'x', app: 'app-3' }]]);
    expect(s.services.map((x) => [x.name, x.selector])).toEqual([['app-1', { tier: 'x', app: 'app-1' }], ['app-2', { tier: 'x', app: 'app-2' }], ['app-3', { tier: 'x', app: 'app-3' }]]);
  });

  it('timeline steps are sorted by time and zones expand to the nodes present then', () => {
    const s = parseScenario(`
zones: [a, b]
nodes: [{name: n1, zone: a}, {name: n2, zone: b}]
timeline:
  - {at: 20s, action: failNode, zone: a}
  - {at: 5s, action: addNodes, group: {namePrefix: extra, count: 2, zone: a}}
  - {at: 1m, action: churn, podsPerSecond: 2}
`);
    expect(s.timeline.map((t) => [t.atMs, t.action])).toEqual([[5000, 'addNodes'], [20000, 'failNode'], [60000, 'churn']]);
    expect(s.timeline[1]).toMatchObject({ nodes: ['n1', 'extra-1', 'extra-2'], status: 'Unknown' });
  });
});

describe('parseScenario errors name the file and the field', () => {
  const cases: readonly { name: string; yaml: string; message: string }[] = [
    { name: 'unknown top-level field', yaml: 'zone: [a]', message: 'x.yaml: zone: unknown field' },
    { name: 'node in an unknown zone', yaml: 'zones: [a]\nnodes: [{name: n, zone: b}]', message: 'x.yaml: nodes[0].zone: unknown zone "b"' },
    { name: 'negative replicas', yaml: 'deployments: [{name: w, replicas: -1}]', message: 'x.yaml: deployments[0].replicas: must be an integer between 0 and 100000, got -1' },
    { name: 'service of a missing deployment', yaml: 'services: [{name: s, deployment: nope}]', message: 'x.yaml: services[0].deployment: no deployment default/nope in this scenario' },
    { name: 'duplicate node names', yaml: 'nodes: [{name: n}, {namePrefix: n, count: 1}, {name: n-1}]', message: 'x.yaml: nodes[2]: duplicate node n-1' },
    { name: 'bad duration', yaml: 'deployments: [{name: w}]\ntimeline: [{at: soon, action: rollout, deployment: w}]', message: 'x.yaml: timeline[0].at: must be a duration' },
    { name: 'unknown action', yaml: 'timeline: [{at: 1s, action: explode}]', message: 'x.yaml: timeline[0].action: must be one of' },
    { name: 'failNode of an unknown node', yaml: 'timeline: [{at: 1s, action: failNode, node: ghost}]', message: 'x.yaml: timeline[0].node: no node "ghost" at this point' },
    { name: 'failNode of a node removed earlier', yaml: 'nodes: [{name: n}]\ntimeline: [{at: 1s, action: removeNode, node: n}, {at: 2s, action: failNode, node: n}]', message: 'x.yaml: timeline[1].node: no node "n" at this point' },
    { name: 'multi-port service with an unnamed port', yaml: 'services: [{name: s, ports: [{port: 1}, {port: 2, name: b}]}]', message: 'x.yaml: services[0].ports[0].name: every port' },
    { name: 'externalTrafficPolicy on ClusterIP', yaml: 'services: [{name: s, externalTrafficPolicy: Local}]', message: 'x.yaml: services[0].externalTrafficPolicy: only NodePort and LoadBalancer' },
    { name: 'static endpoints with a selector', yaml: 'services: [{name: s, selector: {a: b}, endpoints: {addresses: []}}]', message: 'x.yaml: services[0].endpoints: static endpoints are only for selectorless services' },
    { name: 'invalid service name', yaml: 'services: [{name: 1web}]', message: 'x.yaml: services[0].name: a DNS-1035 label' },
    { name: 'bad CPU', yaml: 'nodes: [{name: n, cpu: lots}]', message: 'x.yaml: nodes[0].cpu: must be a CPU quantity' },
    { name: 'strategy that cannot progress', yaml: 'deployments: [{name: w, strategy: {maxSurge: 0, maxUnavailable: 0}}]', message: 'x.yaml: deployments[0].strategy: maxSurge and maxUnavailable may not both be 0' },
    { name: 'invalid YAML', yaml: 'zones: [a', message: 'x.yaml: (top level): not valid YAML' },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      let err: unknown;
      try {
        parseScenario(tc.yaml, 'x.yaml');
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ScenarioError);
      expect((err as Error).message).toContain(tc.message);
    });
  }

  it('a missing file is a ScenarioError naming it', () => {
    expect(() => loadScenario('/nonexistent/s.yaml')).toThrow('/nonexistent/s.yaml: (top level): cannot read');
  });
});
