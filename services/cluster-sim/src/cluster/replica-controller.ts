// Deployments as the simulator runs them (there are no Deployment or ReplicaSet objects in
// the API, only their pods): keeps `replicas` pods per deployment and rolls out new
// revisions with maxSurge/maxUnavailable, counting only non-terminating pods (so a deleted
// pod is replaced at once, while the old one drains).
import { LABEL_POD_TEMPLATE_HASH, buildPod } from './builders.ts';
import type { Log } from '../log.ts';
import { deterministicUid, nameSuffix, stableSuffix } from '../random.ts';
import type { Random } from '../random.ts';
import type { DeploymentSpec, ObjectRef } from '../scenario/schema.ts';
import type { ObjectStore } from '../store/object-store.ts';
import type { KubeObj } from '../store/types.ts';
import type { Clock } from '../time/clock.ts';
import { DeferredQueue } from './deferred-queue.ts';
import { ownerKeyOf } from './placement.ts';
import type { PodIndex } from './pod-index.ts';
import { isPodReady, isTerminal, isTerminating, nodeNameOf } from './pod-status.ts';

export interface ReplicaControllerOptions {
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly index: PodIndex;
  readonly random: Random;
  readonly seed: string;
  readonly log: Log;
  /** Binds and starts a new pod when a node fits (the scheduler); returns it unbound otherwise. */
  readonly place: (pod: KubeObj) => KubeObj;
}

interface DeploymentState {
  readonly spec: DeploymentSpec;
  replicas: number;
  revision: number;
  /** ReplicaSet name of every revision so far, newest last. */
  readonly replicaSets: string[];
}

export function deploymentKey(ref: ObjectRef): string {
  return `${ref.namespace}/${ref.name}`;
}

/** Scale-down order: unscheduled, then not ready, then ready; newest first within each. */
export function victimOrder(a: KubeObj, b: KubeObj): number {
  const rank = (p: KubeObj) => (!nodeNameOf(p) ? 0 : !isPodReady(p) ? 1 : 2);
  return rank(a) - rank(b)
    || (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '')
    || b.metadata.name.localeCompare(a.metadata.name);
}

export class ReplicaController {
  readonly #o: ReplicaControllerOptions;
  readonly #deployments = new Map<string, DeploymentState>();
  // `<namespace>/<replicaset>` -> deployment key
  readonly #owners = new Map<string, string>();
  readonly #queue: DeferredQueue;

  constructor(options: ReplicaControllerOptions) {
    this.#o = options;
    this.#queue = new DeferredQueue(options.clock, (key) => this.reconcile(key), 0, (key, err) => options.log('warn', 'reconcile failed', { deployment: key, err: String(err) }));
    options.index.subscribe((e) => {
      const dep = this.#owners.get(ownerKeyOf(e.object));
      if (dep) this.#queue.add(dep);
    });
  }

  stop(): void {
    this.#queue.stop();
  }

  add(spec: DeploymentSpec): void {
    const key = deploymentKey(spec);
    const state: DeploymentState = { spec, replicas: spec.replicas, revision: 0, replicaSets: [] };
    this.#deployments.set(key, state);
    this.#newRevision(key, state);
    this.reconcile(key);
  }

  has(ref: ObjectRef): boolean {
    return this.#deployments.has(deploymentKey(ref));
  }

  keys(): string[] {
    return [...this.#deployments.keys()];
  }

  desiredReplicas(ref: ObjectRef): number {
    return this.#state(ref).replicas;
  }

  scale(ref: ObjectRef, replicas: number): void {
    const state = this.#state(ref);
    state.replicas = replicas;
    this.reconcile(deploymentKey(ref));
  }

  /** Starts a rolling update to a new pod template revision. */
  rollout(ref: ObjectRef): void {
    const key = deploymentKey(ref);
    this.#newRevision(key, this.#state(ref));
    this.reconcile(key);
  }

  /** The deployment's pods that are not terminating or finished. */
  activePods(ref: ObjectRef): KubeObj[] {
    const state = this.#state(ref);
    return state.replicaSets
      .flatMap((rs) => this.#o.index.ofOwner(`${ref.namespace}/${rs}`))
      .filter((p) => !isTerminating(p) && !isTerminal(p))
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  }

  /** Gracefully deletes up to `count` random active pods; returns their names. */
  deleteRandomPods(ref: ObjectRef, count: number): string[] {
    const pods = this.activePods(ref);
    const gone: string[] = [];
    for (let i = 0; i < count && pods.length > 0; i++) {
      const [pod] = pods.splice(this.#o.random.int(pods.length), 1);
      this.#o.store.delete('Pod', pod!.metadata.namespace, pod!.metadata.name);
      gone.push(pod!.metadata.name);
    }
    return gone;
  }

  /** Brings one deployment's pods toward its spec (see the file comment). */
  reconcile(key: string): void {
    const state = this.#deployments.get(key);
    if (!state) return;
    const { spec } = state;
    const current = state.replicaSets[state.replicaSets.length - 1]!;
    const active = this.activePods(spec);
    let fresh = active.filter((p) => ownerKeyOf(p) === `${spec.namespace}/${current}`);
    let old = active.filter((p) => ownerKeyOf(p) !== `${spec.namespace}/${current}`);
    const want = state.replicas;

    // Old pods that are not ready contribute nothing: remove them first.
    for (const pod of old.filter((p) => !isPodReady(p))) this.#delete(pod);
    old = old.filter(isPodReady);

    if (fresh.length > want) {
      const victims = new Set([...fresh].sort(victimOrder).slice(0, fresh.length - want));
      for (const pod of victims) this.#delete(pod);
      fresh = fresh.filter((p) => !victims.has(p));
    }
    const maxTotal = want + spec.maxSurge;
    const toCreate = Math.max(0, Math.min(want - fresh.length, maxTotal - fresh.length - old.length));
    for (let i = 0; i < toCreate; i++) this.#create(state, current);

    // Scale the old revision down only as far as availability allows.
    const minAvailable = want - spec.maxUnavailable;
    const readyNow = fresh.filter(isPodReady).length + old.length;
    const removable = Math.min(old.length, Math.max(0, readyNow - minAvailable));
    for (const pod of [...old].sort(victimOrder).slice(0, removable)) this.#delete(pod);
  }

  #state(ref: ObjectRef): DeploymentState {
    const state = this.#deployments.get(deploymentKey(ref));
    if (!state) throw new Error(`no deployment ${deploymentKey(ref)}`);
    return state;
  }

  #newRevision(key: string, state: DeploymentState): void {
    state.revision++;
    const rs = `${state.spec.name}-${stableSuffix(`${this.#o.seed}/${key}/${state.revision}`, 10)}`;
    state.replicaSets.push(rs);
    this.#owners.set(`${state.spec.namespace}/${rs}`, key);
  }

  #create(state: DeploymentState, rs: string): void {
    const { spec } = state;
    const hash = rs.slice(spec.name.length + 1);
    let name: string;
    do name = `${rs}-${nameSuffix(this.#o.random)}`;
    while (this.#o.store.get('Pod', spec.namespace, name));
    const pod = buildPod({
      name,
      namespace: spec.namespace,
      labels: { ...spec.labels, [LABEL_POD_TEMPLATE_HASH]: hash },
      owner: { name: rs, uid: deterministicUid(this.#o.seed, 'ReplicaSet', spec.namespace, rs) },
      containerPorts: spec.containerPorts,
      cpuMillis: spec.cpuMillis,
      zones: spec.zones,
      nodeSelector: spec.nodeSelector,
      terminationGracePeriodSeconds: spec.terminationGracePeriodSeconds,
    });
    this.#o.store.create('Pod', this.#o.place(pod));
  }

  #delete(pod: KubeObj): void {
    this.#o.store.delete('Pod', pod.metadata.namespace, pod.metadata.name);
  }

  /** Readiness delay of a pod owned by one of our deployments, if it is. */
  readinessDelayOf(pod: KubeObj): number | undefined {
    const key = this.#owners.get(ownerKeyOf(pod));
    return key ? this.#deployments.get(key)?.spec.readinessDelayMs : undefined;
  }
}
