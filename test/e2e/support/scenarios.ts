// Scenarios the e2e tests play: small, three balanced zones, every traffic feature, churn.
// The zones stay balanced at the end (same CPU per zone, replicas a multiple of three or spread
// by the scheduler), so topology hints never need the order-dependent redistribution step.

/**
 * ~30 s of cluster time: rollout, scale up and down, a node failing and recovering, a node
 * added and removed again, pod deletions, and 1 pod/s of churn until `durationSeconds`.
 */
export function churnScenario(opts: { readonly seed: string; readonly durationSeconds?: number; readonly churnPerSecond?: number }): string {
  return `
seed: ${opts.seed}
durationSeconds: ${opts.durationSeconds ?? 30}
cluster: {region: e2e}
zones: [zone-a, zone-b, zone-c]
nodes:
  - {namePrefix: a, count: 2, zone: zone-a, cpu: 4}
  - {namePrefix: b, count: 2, zone: zone-b, cpu: 4}
  - {namePrefix: c, count: 2, zone: zone-c, cpu: 4}
defaults: {readinessDelay: 500ms, terminationGracePeriodSeconds: 1, cpu: 100m}
deployments:
  - {name: web, namespace: shop, replicas: 6, containerPorts: [{name: http, containerPort: 8080}]}
  - {name: api, namespace: shop, replicas: 4, containerPorts: [{name: grpc, containerPort: 9090}, {name: metrics, containerPort: 9100}]}
  - {name: logs, namespace: infra, replicas: 3, containerPorts: [{name: syslog, containerPort: 5514, protocol: UDP}]}
  - {name: cache, namespace: infra, replicas: 2, containerPorts: [{name: redis, containerPort: 6379}]}
  - {name: edge, namespace: infra, replicas: 2, zones: [zone-a], containerPorts: [{name: https, containerPort: 8443}]}
services:
  - {name: web, namespace: shop, deployment: web, annotations: {service.kubernetes.io/topology-mode: Auto}, ports: [{name: http, port: 80, targetPort: http}]}
  - name: api
    namespace: shop
    deployment: api
    trafficDistribution: PreferClose
    ports: [{name: grpc, port: 9090, targetPort: grpc}, {name: metrics, port: 9100, targetPort: metrics}]
  - {name: logs, namespace: infra, deployment: logs, internalTrafficPolicy: Local, ports: [{name: syslog, port: 514, targetPort: syslog, protocol: UDP}]}
  - {name: cache, namespace: infra, deployment: cache, headless: true, publishNotReadyAddresses: true, ports: [{name: redis, port: 6379, targetPort: redis}]}
  - {name: edge, namespace: infra, deployment: edge, type: NodePort, externalTrafficPolicy: Local, ports: [{name: https, port: 443, targetPort: https, nodePort: 30443}]}
  - name: legacy-db
    namespace: shop
    ports: [{name: pg, port: 5432}]
    endpoints:
      addresses: [{ip: 192.168.10.5}, {ip: 192.168.10.6, ready: false}]
      ports: [{name: pg, port: 5432}]
churn: {podsPerSecond: ${opts.churnPerSecond ?? 1}, deployments: [shop/web, shop/api, infra/logs]}
timeline:
  - {at: 3s, action: rollout, deployment: shop/web}
  - {at: 6s, action: scale, deployment: shop/api, replicas: 7}
  - {at: 8s, action: failNode, node: b-1}
  - {at: 12s, action: recoverNode, node: b-1}
  - {at: 14s, action: addNodes, group: {namePrefix: extra, count: 1, zone: zone-c, cpu: 4}}
  - {at: 17s, action: deletePod, deployment: infra/cache, count: 1}
  - {at: 20s, action: removeNode, node: extra-1}
  - {at: 22s, action: scale, deployment: shop/api, replicas: 3}
  - {at: 24s, action: updateService, service: shop/api, trafficDistribution: PreferSameZone}
`;
}

/** A small quiet cluster (no churn): two zones, a hinted service, a Local one, a mirrored one. */
export function quietScenario(seed: string): string {
  return `
seed: ${seed}
zones: [zone-a, zone-b]
nodes:
  - {namePrefix: a, count: 2, zone: zone-a, cpu: 4}
  - {namePrefix: b, count: 2, zone: zone-b, cpu: 4}
defaults: {readinessDelay: 0s, terminationGracePeriodSeconds: 0, cpu: 100m}
deployments:
  - {name: web, namespace: shop, replicas: 4, containerPorts: [{name: http, containerPort: 8080}]}
  - {name: logs, namespace: infra, replicas: 2, containerPorts: [{name: syslog, containerPort: 5514, protocol: UDP}]}
services:
  - {name: web, namespace: shop, deployment: web, trafficDistribution: PreferClose, ports: [{name: http, port: 80, targetPort: http}]}
  - {name: logs, namespace: infra, deployment: logs, internalTrafficPolicy: Local, ports: [{name: syslog, port: 514, targetPort: syslog, protocol: UDP}]}
  - name: legacy-db
    namespace: shop
    ports: [{name: pg, port: 5432}]
    endpoints: {addresses: [{ip: 192.168.10.5}], ports: [{name: pg, port: 5432}]}
`;
}
