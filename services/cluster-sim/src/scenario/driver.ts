// Runs a scenario against the store: builds the cluster (namespaces, nodes, services,
// deployments), starts the simulated controllers (kubelet/scheduler, replica controller,
// Endpoints controller), then plays the timeline and the churn on the injected clock.
import { buildKubernetesService, buildNamespace, buildNode, buildService, buildStaticEndpoints } from '../cluster/builders.ts';
import { EndpointsController } from '../cluster/endpoints-controller.ts';
import { PodIPAM } from '../cluster/ipam.ts';
import { KubeletSim } from '../cluster/kubelet.ts';
import { failedNode, recoveredNode } from '../cluster/node-actions.ts';
import { PodIndex } from '../cluster/pod-index.ts';
import { isTerminating, specOf } from '../cluster/pod-status.ts';
import { deploymentKey, ReplicaController } from '../cluster/replica-controller.ts';
import { intToIpv4, parseCidr4 } from '../ipv4.ts';
import { silentLog } from '../log.ts';
import type { Log } from '../log.ts';
import { createRandom } from '../random.ts';
import type { Random } from '../random.ts';
import type { ObjectStore } from '../store/object-store.ts';
import type { KubeObj } from '../store/types.ts';
import type { Clock, TimerHandle } from '../time/clock.ts';
import { rfc3339 } from '../time/timestamps.ts';
import type { NodeGroup, ObjectRef, Scenario, ServiceUpdate, TimelineAction } from './schema.ts';

export interface DriverOptions {
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly scenario: Scenario;
  readonly log?: Log;
  /** Overrides the scenario's seed. */
  readonly seed?: string;
  /** Readiness delay of pods the scenario did not create (e.g. from kubectl). Defaults to 1000. */
  readonly defaultReadinessDelayMs?: number;
  /** Batching delay of the Endpoints controller. Defaults to 0. */
  readonly endpointsDelayMs?: number;
  /** Told of every timeline action as it is applied (e.g. to count them). */
  readonly onAction?: (action: TimelineAction) => void;
}

export class ScenarioDriver {
  readonly scenario: Scenario;
  readonly index: PodIndex;
  readonly kubelet: KubeletSim;
  readonly replicas: ReplicaController;
  readonly endpoints: EndpointsController;
  readonly #store: ObjectStore;
  readonly #clock: Clock;
  readonly #log: Log;
  readonly #onAction: ((action: TimelineAction) => void) | undefined;
  readonly #random: Random;
  readonly #ipam: PodIPAM;
  readonly #timers = new Set<TimerHandle>();
  #nodeCount = 0;
  #churnTimer: TimerHandle | undefined;
  #churnRate = 0;
  #startedAt = 0;
  #started = false;
  #finished = false;

  constructor(options: DriverOptions) {
    const { store, clock, scenario } = options;
    const seed = options.seed ?? scenario.seed;
    this.scenario = scenario;
    this.#store = store;
    this.#clock = clock;
    this.#log = options.log ?? silentLog;
    this.#onAction = options.onAction;
    this.#random = createRandom(`${seed}/driver`);
    this.#ipam = new PodIPAM(scenario.cluster.podCIDR, scenario.cluster.nodeCIDRPrefix);
    this.index = new PodIndex(store);
    const defaultDelay = options.defaultReadinessDelayMs ?? 1000;
    this.kubelet = new KubeletSim({
      store, clock, index: this.index, ipam: this.#ipam, log: this.#log,
      // The replica controller is created next; until then no pod has a deployment delay.
      readinessDelayMs: (pod) => (this.replicas as ReplicaController | undefined)?.readinessDelayOf(pod) ?? defaultDelay,
    });
    this.replicas = new ReplicaController({ store, clock, index: this.index, random: this.#random, seed, log: this.#log, place: (pod) => this.kubelet.place(pod) });
    this.endpoints = new EndpointsController({ store, clock, index: this.index, log: this.#log, ...(options.endpointsDelayMs !== undefined ? { delayMs: options.endpointsDelayMs } : {}) });
  }

  /** True once `durationSeconds` has passed (churn stopped, no more steps). */
  get finished(): boolean {
    return this.#finished;
  }

  /** Milliseconds since start() on the driver's clock. */
  elapsedMs(): number {
    return this.#clock.now() - this.#startedAt;
  }

  /** Builds the cluster and schedules the timeline. Call once. */
  start(): void {
    if (this.#started) throw new Error('scenario driver already started');
    this.#started = true;
    this.#startedAt = this.#clock.now();
    const s = this.scenario;
    const namespaces = [...new Set([...s.deployments, ...s.services].map((o) => o.namespace))].sort();
    for (const ns of namespaces) if (!this.#store.get('Namespace', undefined, ns)) this.#store.create('Namespace', buildNamespace(ns));
    for (const group of s.nodes) this.#addNodes(group);
    if (s.cluster.kubernetesService) this.#createKubernetesService();
    for (const svc of s.services) {
      this.#store.create('Service', buildService(svc));
      const eps = buildStaticEndpoints(svc);
      if (eps) this.#store.create('Endpoints', eps);
    }
    for (const dep of s.deployments) this.replicas.add(dep);
    this.endpoints.flush();
    for (const step of s.timeline) {
      if (s.durationMs !== undefined && step.atMs > s.durationMs) continue;
      this.#after(step.atMs, () => this.apply(step));
    }
    this.setChurnRate(s.churn.podsPerSecond);
    if (s.durationMs !== undefined) this.#after(s.durationMs, () => this.#finish());
    this.#log('info', 'scenario started', { scenario: s.source, nodes: this.#store.count('Node'), services: this.#store.count('Service'), pods: this.#store.count('Pod') });
  }

  stop(): void {
    for (const t of this.#timers) this.#clock.clearTimer(t);
    this.#timers.clear();
    this.setChurnRate(0);
    this.replicas.stop();
    this.kubelet.stop();
    this.endpoints.stop();
    this.index.stop();
  }

  /** Performs one timeline action now. */
  apply(action: TimelineAction): void {
    this.#log('info', 'timeline action', { ...action, elapsedMs: this.elapsedMs() });
    this.#onAction?.(action);
    const at = rfc3339(this.#clock.now());
    switch (action.action) {
      case 'scale': return this.replicas.scale(action.deployment, action.replicas);
      case 'rollout': return this.replicas.rollout(action.deployment);
      case 'deletePod': return void this.replicas.deleteRandomPods(action.deployment, action.count);
      case 'churn': return this.setChurnRate(action.podsPerSecond);
      case 'addNodes': return this.#addNodes(action.group);
      case 'updateService': return this.#updateService(action.service, action.update);
      case 'removeNode':
        for (const name of action.nodes) if (this.#store.get('Node', undefined, name)) this.#store.delete('Node', undefined, name);
        return;
      case 'recoverNode':
        for (const name of action.nodes) this.#updateNode(name, (n) => recoveredNode(n, at));
        return;
      case 'failNode':
        for (const name of action.nodes) this.#updateNode(name, (n) => failedNode(n, action.status, at));
        if (action.evictAfterMs !== undefined) this.#after(this.elapsedMs() + action.evictAfterMs, () => this.#evict(action.nodes));
        return;
    }
  }

  /** Pod deletions per second from now on (0 stops churn). */
  setChurnRate(podsPerSecond: number): void {
    if (this.#churnTimer) {
      this.#clock.clearTimer(this.#churnTimer);
      this.#timers.delete(this.#churnTimer);
      this.#churnTimer = undefined;
    }
    this.#churnRate = this.#finished ? 0 : podsPerSecond;
    if (this.#churnRate > 0) this.#scheduleChurn();
  }

  #scheduleChurn(): void {
    const timer = this.#clock.setTimer(() => {
      this.#timers.delete(timer);
      this.#churnOnce();
      if (this.#churnRate > 0 && this.#churnTimer === timer) this.#scheduleChurn();
    }, 1000 / this.#churnRate);
    this.#churnTimer = timer;
    this.#timers.add(timer);
  }

  // Picks a deployment with probability proportional to its replicas, then one of its
  // active pods uniformly, and deletes it gracefully (the deployment replaces it).
  #churnOnce(): void {
    const refs = (this.scenario.churn.deployments.length > 0
      ? this.scenario.churn.deployments
      : this.replicas.keys().map((k) => ({ namespace: k.split('/')[0]!, name: k.split('/')[1]! })))
      .filter((r) => this.replicas.has(r));
    const weights = refs.map((r) => this.replicas.desiredReplicas(r));
    let pick = this.#random.int(weights.reduce((a, b) => a + b, 0));
    const ref = refs.find((_, i) => (pick -= weights[i]!) < 0);
    if (!ref) return;
    const pods = this.replicas.activePods(ref);
    if (pods.length === 0) return;
    const victim = pods[this.#random.int(pods.length)]!;
    this.#store.delete('Pod', victim.metadata.namespace, victim.metadata.name);
  }

  #finish(): void {
    this.#finished = true;
    this.setChurnRate(0);
    for (const t of this.#timers) this.#clock.clearTimer(t);
    this.#timers.clear();
    this.#log('info', 'scenario finished', { scenario: this.scenario.source, pods: this.#store.count('Pod') });
  }

  /** Runs `fn` at `atMs` after start (relative to the driver's start time). */
  #after(atMs: number, fn: () => void): void {
    const timer = this.#clock.setTimer(() => {
      this.#timers.delete(timer);
      try {
        fn();
      } catch (err) {
        this.#log('error', 'scenario step failed', { err: String(err) });
      }
    }, this.#startedAt + atMs - this.#clock.now());
    this.#timers.add(timer);
  }

  #addNodes(group: NodeGroup): void {
    const c = this.scenario.cluster;
    const nodeNet = parseCidr4(c.nodeIPCIDR)!;
    const at = rfc3339(this.#clock.now());
    for (const name of group.names) {
      const i = this.#nodeCount++;
      const internalIP = intToIpv4(nodeNet.base + 10 + i);
      this.#store.create('Node', buildNode({ name, group, region: c.region, internalIP, podCIDR: this.#ipam.cidrFor(name), kubeletVersion: c.kubeletVersion, at }));
    }
  }

  #createKubernetesService(): void {
    const c = this.scenario.cluster;
    const first = intToIpv4(parseCidr4(c.serviceCIDR)!.base + 1);
    const nodes = this.#store.list('Node');
    const cp = nodes.filter((n) => n.metadata.labels?.['node-role.kubernetes.io/control-plane'] !== undefined);
    const ips = (cp.length > 0 ? cp : nodes.slice(0, 1)).map((n) => {
      const addrs = ((n['status'] as Record<string, unknown>)['addresses'] as { type: string; address: string }[]) ?? [];
      return addrs.find((a) => a.type === 'InternalIP')?.address ?? '';
    }).filter((ip) => ip !== '');
    const [svc, eps] = buildKubernetesService(first, ips);
    if (!this.#store.get('Service', 'default', 'kubernetes')) this.#store.create('Service', svc);
    if (!this.#store.get('Endpoints', 'default', 'kubernetes')) this.#store.create('Endpoints', eps);
  }

  #updateNode(name: string, change: (node: KubeObj) => KubeObj): void {
    const node = this.#store.get('Node', undefined, name);
    if (!node) return this.#log('warn', 'timeline names a node that does not exist', { node: name });
    this.#store.update('Node', change(node));
  }

  #updateService(ref: ObjectRef, update: ServiceUpdate): void {
    const svc = this.#store.get('Service', ref.namespace, ref.name);
    if (!svc) return this.#log('warn', 'timeline names a service that does not exist', { service: deploymentKey(ref) });
    const annotations: Record<string, string> = { ...svc.metadata.annotations };
    for (const [k, v] of Object.entries(update.annotations ?? {})) {
      if (v === null) delete annotations[k];
      else annotations[k] = v;
    }
    const spec: Record<string, unknown> = { ...specOf(svc) };
    if (update.trafficDistribution === null) delete spec['trafficDistribution'];
    else if (update.trafficDistribution !== undefined) spec['trafficDistribution'] = update.trafficDistribution;
    if (update.internalTrafficPolicy) spec['internalTrafficPolicy'] = update.internalTrafficPolicy;
    if (update.externalTrafficPolicy) spec['externalTrafficPolicy'] = update.externalTrafficPolicy;
    if (update.publishNotReadyAddresses !== undefined) spec['publishNotReadyAddresses'] = update.publishNotReadyAddresses;
    const { annotations: _old, ...meta } = svc.metadata;
    this.#store.update('Service', { ...svc, metadata: Object.keys(annotations).length > 0 ? { ...meta, annotations } : meta, spec });
  }

  #evict(nodes: readonly string[]): void {
    for (const name of nodes) {
      for (const pod of this.index.onNode(name)) {
        if (!isTerminating(pod)) this.#store.delete('Pod', pod.metadata.namespace, pod.metadata.name);
      }
    }
  }
}
