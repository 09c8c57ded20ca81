// The campaign's cluster: three balanced zones (the same CPU per zone, replicas multiples of
// three, so topology hints never depend on the order of changes), several namespaces spread over
// the KUBE partitions, every traffic feature, and heavy pod churn on most Deployments.

export interface ChaosScenarioOptions {
  readonly seed: string;
  readonly durationSeconds: number;
  /** Pods replaced per second of cluster time. */
  readonly podsPerSecond: number;
}

export function chaosScenario(o: ChaosScenarioOptions): string {
  return `
seed: ${o.seed}
durationSeconds: ${o.durationSeconds}
cluster: {region: chaos}
zones: [zone-a, zone-b, zone-c]
nodes:
  - {namePrefix: a, count: 2, zone: zone-a, cpu: 8}
  - {namePrefix: b, count: 2, zone: zone-b, cpu: 8}
  - {namePrefix: c, count: 2, zone: zone-c, cpu: 8}
defaults: {readinessDelay: 300ms, terminationGracePeriodSeconds: 1, cpu: 50m}
deployments:
  - {name: web, namespace: shop, replicas: 12, containerPorts: [{name: http, containerPort: 8080}]}
  - {name: api, namespace: shop, replicas: 9, containerPorts: [{name: grpc, containerPort: 9090}, {name: metrics, containerPort: 9100}]}
  - {name: cart, namespace: orders, replicas: 9, containerPorts: [{name: http, containerPort: 8080}]}
  - {name: pay, namespace: payments, replicas: 6, containerPorts: [{name: https, containerPort: 8443}]}
  - {name: logs, namespace: infra, replicas: 6, containerPorts: [{name: syslog, containerPort: 5514, protocol: UDP}]}
  - {name: cache, namespace: infra, replicas: 3, containerPorts: [{name: redis, containerPort: 6379}]}
  - {name: search, namespace: catalog, replicas: 6, containerPorts: [{name: http, containerPort: 9200}]}
services:
  - {name: web, namespace: shop, deployment: web, annotations: {service.kubernetes.io/topology-mode: Auto}, ports: [{name: http, port: 80, targetPort: http}]}
  - {name: api, namespace: shop, deployment: api, trafficDistribution: PreferClose, ports: [{name: grpc, port: 9090, targetPort: grpc}, {name: metrics, port: 9100, targetPort: metrics}]}
  - {name: cart, namespace: orders, deployment: cart, trafficDistribution: PreferSameZone, ports: [{name: http, port: 80, targetPort: http}]}
  - {name: pay, namespace: payments, deployment: pay, ports: [{name: https, port: 443, targetPort: https}]}
  - {name: logs, namespace: infra, deployment: logs, internalTrafficPolicy: Local, ports: [{name: syslog, port: 514, targetPort: syslog, protocol: UDP}]}
  - {name: cache, namespace: infra, deployment: cache, headless: true, publishNotReadyAddresses: true, ports: [{name: redis, port: 6379, targetPort: redis}]}
  - {name: search, namespace: catalog, deployment: search, type: NodePort, externalTrafficPolicy: Local, ports: [{name: http, port: 80, targetPort: http, nodePort: 30920}]}
  - name: legacy-db
    namespace: shop
    ports: [{name: pg, port: 5432}]
    endpoints:
      addresses: [{ip: 192.168.10.5}, {ip: 192.168.10.6, ready: false}]
      ports: [{name: pg, port: 5432}]
churn: {podsPerSecond: ${o.podsPerSecond}, deployments: [shop/web, shop/api, orders/cart, payments/pay, infra/logs, catalog/search]}
timeline:
  - {at: 5s, action: rollout, deployment: shop/web}
  - {at: 10s, action: scale, deployment: orders/cart, replicas: 12}
  - {at: 20s, action: failNode, node: b-1}
  - {at: 30s, action: recoverNode, node: b-1}
  - {at: 40s, action: updateService, service: shop/api, trafficDistribution: PreferSameZone}
  - {at: 50s, action: scale, deployment: orders/cart, replicas: 9}
`;
}
