// The simulated scheduler + kubelets + node lifecycle controller. From store events it:
// - binds and starts pods that have no node yet (placement.ts), giving them an IP;
// - turns a started pod Ready after its readiness delay (if its node is Ready);
// - marks the pods of a node that stops being Ready as not ready, and readies them again
//   (after the delay) when it recovers;
// - removes a terminating pod once its grace period has passed, but only while its node is
//   Ready (a dead kubelet cannot confirm the kill, so such pods stay Terminating);
// - force-deletes the pods of a deleted node.
import type { Log } from '../log.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { keyOf } from '../store/types.ts';
import type { KubeObj, StoreEvent } from '../store/types.ts';
import type { Clock, TimerHandle } from '../time/clock.ts';
import { parseTimestamp, rfc3339 } from '../time/timestamps.ts';
import { DeferredQueue } from './deferred-queue.ts';
import type { PodIPAM } from './ipam.ts';
import { chooseNode } from './placement.ts';
import type { PodIndex } from './pod-index.ts';
import { bindAndStart, internalIPOf } from './pod-start.ts';
import { isNodeReady, isPodReady, isTerminating, nodeNameOf, podIP, podPhase, withPodReadiness } from './pod-status.ts';

export interface KubeletOptions {
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly index: PodIndex;
  readonly ipam: PodIPAM;
  readonly log: Log;
  /** How long a started pod takes to become Ready. */
  readonly readinessDelayMs: (pod: KubeObj) => number;
}

export class KubeletSim {
  readonly #o: KubeletOptions;
  readonly #readiness = new Map<string, { uid: string; timer: TimerHandle }>();
  readonly #finalizers = new Map<string, { uid: string; marker: string; timer: TimerHandle }>();
  readonly #pending = new Set<string>();
  readonly #work: DeferredQueue;
  readonly #unwatchNodes: () => void;
  #cursor = 0;
  // Nodes in name order, rebuilt lazily after a node event (placement reads it per pod).
  #nodes: KubeObj[] | undefined;

  constructor(options: KubeletOptions) {
    this.#o = options;
    this.#work = new DeferredQueue(options.clock, (key) => this.#do(key), 0, (key, err) => options.log('warn', 'kubelet work failed', { key, err: String(err) }));
    options.index.subscribe((e) => this.#onPod(e));
    this.#unwatchNodes = options.store.watch('Node', { onEvent: (e) => this.#onNode(e) });
    for (const pod of options.index.all()) this.#observe(pod);
  }

  stop(): void {
    this.#unwatchNodes();
    this.#work.stop();
    for (const t of [...this.#readiness.values(), ...this.#finalizers.values()]) this.#o.clock.clearTimer(t.timer);
    this.#readiness.clear();
    this.#finalizers.clear();
  }

  /** Binds and starts `pod` if some node fits (returns it unchanged otherwise). */
  place(pod: KubeObj): KubeObj {
    this.#nodes ??= this.#o.store.list('Node');
    const choice = chooseNode(pod, this.#nodes, this.#o.index, this.#cursor);
    if (!choice) return pod;
    const node = choice.node.metadata.name;
    const ip = this.#o.ipam.allocate(node);
    if (!ip) return pod;
    this.#cursor = choice.cursor;
    return bindAndStart(pod, node, internalIPOf(choice.node), ip, rfc3339(this.#o.clock.now()));
  }

  /** Settles deferred work now (bootstrap uses it to start without waiting a tick). */
  flush(): void {
    this.#work.flush();
  }

  #node(name: string | undefined): KubeObj | undefined {
    return name ? this.#o.store.get('Node', undefined, name) : undefined;
  }

  #onPod(event: StoreEvent): void {
    const pod = event.object;
    const key = keyOf(pod);
    if (event.type === 'DELETED') {
      this.#cancel(this.#readiness, key);
      this.#cancel(this.#finalizers, key);
      this.#pending.delete(key);
      const node = nodeNameOf(pod);
      const ip = podIP(pod);
      if (node && ip) this.#o.ipam.release(node, ip);
      return;
    }
    this.#observe(pod);
  }

  #observe(pod: KubeObj): void {
    const key = keyOf(pod);
    const node = nodeNameOf(pod);
    if (node && podIP(pod)) this.#o.ipam.claim(node, podIP(pod)!);
    if (isTerminating(pod)) {
      this.#pending.delete(key);
      this.#cancel(this.#readiness, key);
      this.#armFinalizer(pod);
      return;
    }
    if (!node) {
      this.#pending.add(key);
      this.#work.add('schedule');
      return;
    }
    if (!podIP(pod) && podPhase(pod) === 'Pending') {
      this.#work.add(`start:${key}`);
      return;
    }
    if (!isPodReady(pod) && !this.#readiness.has(key) && this.#nodeReady(node)) this.#armReadiness(pod);
  }

  #nodeReady(name: string): boolean {
    const node = this.#node(name);
    return node !== undefined && isNodeReady(node);
  }

  #onNode(event: StoreEvent): void {
    this.#nodes = undefined;
    const name = event.object.metadata.name;
    if (event.type === 'DELETED') {
      this.#work.add(`evict:${name}`);
      return;
    }
    const ready = isNodeReady(event.object);
    const wasReady = event.previous ? isNodeReady(event.previous) : false;
    if (wasReady && !ready) this.#work.add(`notready:${name}`);
    if (ready && (!wasReady || event.type === 'ADDED')) {
      for (const pod of this.#o.index.onNode(name)) this.#observe(pod);
      this.#work.add(`finalize:${name}`);
    }
    if (this.#pending.size > 0) this.#work.add('schedule');
  }

  #do(key: string): void {
    const [what, arg = ''] = splitOnce(key);
    if (what === 'schedule') return this.#schedulePending();
    if (what === 'start') return this.#startBound(arg);
    if (what === 'notready') return this.#markNodePodsNotReady(arg);
    if (what === 'finalize') return this.#finalizeExpired(arg);
    if (what === 'evict') return this.#evictDeletedNode(arg);
  }

  #schedulePending(): void {
    for (const key of [...this.#pending]) {
      const pod = this.#o.index.get(key);
      if (!pod || nodeNameOf(pod) || isTerminating(pod)) {
        this.#pending.delete(key);
        continue;
      }
      const placed = this.place(pod);
      if (placed === pod) continue;
      this.#pending.delete(key);
      this.#o.store.update('Pod', placed);
    }
  }

  #startBound(key: string): void {
    const pod = this.#o.index.get(key);
    const nodeName = pod ? nodeNameOf(pod) : undefined;
    const node = this.#node(nodeName);
    if (!pod || !nodeName || !node || podIP(pod) || isTerminating(pod) || !isNodeReady(node)) return;
    const ip = this.#o.ipam.allocate(nodeName);
    if (!ip) return;
    this.#o.store.update('Pod', bindAndStart(pod, nodeName, internalIPOf(node), ip, rfc3339(this.#o.clock.now())));
  }

  #markNodePodsNotReady(name: string): void {
    const node = this.#node(name);
    if (!node || isNodeReady(node)) return;
    const at = rfc3339(this.#o.clock.now());
    for (const pod of this.#o.index.onNode(name)) {
      this.#cancel(this.#readiness, keyOf(pod));
      if (isPodReady(pod)) this.#o.store.update('Pod', withPodReadiness(pod, false, at));
    }
  }

  #finalizeExpired(name: string): void {
    const now = this.#o.clock.now();
    for (const pod of this.#o.index.onNode(name)) {
      const deadline = parseTimestamp(pod.metadata.deletionTimestamp);
      if (deadline !== undefined && deadline <= now) this.#remove(pod);
    }
  }

  #evictDeletedNode(name: string): void {
    if (this.#node(name)) return;
    for (const pod of this.#o.index.onNode(name)) this.#remove(pod);
  }

  #remove(pod: KubeObj): void {
    const { namespace, name, uid } = pod.metadata;
    if (this.#o.store.get('Pod', namespace, name)?.metadata.uid !== uid) return;
    this.#o.store.delete('Pod', namespace, name, { gracePeriodSeconds: 0, preconditions: { uid: uid! } });
  }

  #armReadiness(pod: KubeObj): void {
    const key = keyOf(pod);
    const uid = pod.metadata.uid!;
    const timer = this.#o.clock.setTimer(() => {
      this.#readiness.delete(key);
      const current = this.#o.index.get(key);
      if (!current || current.metadata.uid !== uid || isTerminating(current) || isPodReady(current)) return;
      if (!this.#nodeReady(nodeNameOf(current) ?? '')) return;
      this.#o.store.update('Pod', withPodReadiness(current, true, rfc3339(this.#o.clock.now())));
    }, this.#o.readinessDelayMs(pod));
    this.#readiness.set(key, { uid, timer });
  }

  // The deadline is measured from when the deletion was seen (the object's timestamp only
  // has whole seconds); a re-observation re-arms only if the deletion itself changed.
  #armFinalizer(pod: KubeObj): void {
    const key = keyOf(pod);
    const uid = pod.metadata.uid!;
    const marker = pod.metadata.deletionTimestamp ?? '';
    const existing = this.#finalizers.get(key);
    if (existing && existing.uid === uid && existing.marker === marker) return;
    if (existing) this.#o.clock.clearTimer(existing.timer);
    const grace = pod.metadata.deletionGracePeriodSeconds;
    const delay = grace !== undefined ? grace * 1000 : (parseTimestamp(marker) ?? this.#o.clock.now()) - this.#o.clock.now();
    const timer = this.#o.clock.setTimer(() => {
      this.#finalizers.delete(key);
      const current = this.#o.index.get(key);
      if (!current || current.metadata.uid !== uid) return;
      // Without a Ready node nobody confirms the kill; recovery finalizes it (#finalizeExpired).
      if (!this.#nodeReady(nodeNameOf(current) ?? '')) return;
      this.#remove(current);
    }, delay);
    this.#finalizers.set(key, { uid, marker, timer });
  }

  #cancel(map: Map<string, { timer: TimerHandle }>, key: string): void {
    const entry = map.get(key);
    if (!entry) return;
    this.#o.clock.clearTimer(entry.timer);
    map.delete(key);
  }
}

function splitOnce(key: string): [string, string?] {
  const i = key.indexOf(':');
  return i < 0 ? [key] : [key.slice(0, i), key.slice(i + 1)];
}
