// Keeps an Endpoints object per Service with a selector, as kube-controller-manager does:
// store events mark services dirty (a pod event marks the services whose selector matched
// the pod before or after), and a deferred sync writes only real changes. Selectorless
// services keep whatever Endpoints their owner writes.
import { LABEL_HEADLESS } from '@slicemesh/model';
import type { Log } from '../log.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { jsonEqual, keyOf } from '../store/types.ts';
import type { KubeObj, StoreEvent } from '../store/types.ts';
import type { Clock } from '../time/clock.ts';
import { rfc3339 } from '../time/timestamps.ts';
import { DeferredQueue } from './deferred-queue.ts';
import { ANNOTATION_OVER_CAPACITY, desiredEndpoints } from './endpoints-desired.ts';
import type { PodIndex } from './pod-index.ts';
import { specOf } from './pod-status.ts';

export const ANNOTATION_LAST_CHANGE = 'endpoints.kubernetes.io/last-change-trigger-time';

export interface EndpointsControllerOptions {
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly index: PodIndex;
  readonly log: Log;
  /** Batching delay between a change and the Endpoints write. Defaults to 0 (next tick). */
  readonly delayMs?: number;
}

type Selector = Readonly<Record<string, string>>;

function selectorOf(service: KubeObj): Selector | undefined {
  const sel = specOf(service)['selector'] as Selector | undefined | null;
  return sel && Object.keys(sel).length > 0 ? sel : undefined;
}

function matches(selector: Selector, labels: Readonly<Record<string, string>> | undefined): boolean {
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

export class EndpointsController {
  readonly #o: EndpointsControllerOptions;
  // namespace -> service name -> selector
  readonly #selectors = new Map<string, Map<string, Selector>>();
  readonly #queue: DeferredQueue;
  readonly #unwatch: () => void;

  constructor(options: EndpointsControllerOptions) {
    this.#o = options;
    this.#queue = new DeferredQueue(options.clock, (key) => this.sync(key), options.delayMs ?? 0, (key, err) => options.log('warn', 'endpoints sync failed', { service: key, err: String(err) }));
    for (const svc of options.store.list('Service')) this.#onService({ type: 'ADDED', kind: 'Service', rv: 0, object: svc });
    this.#unwatch = options.store.watch('Service', { onEvent: (e) => this.#onService(e) });
    options.index.subscribe((e) => this.#onPod(e));
  }

  stop(): void {
    this.#unwatch();
    this.#queue.stop();
  }

  /** Writes pending changes now. */
  flush(): void {
    this.#queue.flush();
  }

  #onService(event: StoreEvent): void {
    const svc = event.object;
    const ns = svc.metadata.namespace!;
    let byName = this.#selectors.get(ns);
    if (!byName) this.#selectors.set(ns, (byName = new Map()));
    const selector = selectorOf(svc);
    if (event.type === 'DELETED' || !selector) byName.delete(svc.metadata.name);
    else byName.set(svc.metadata.name, selector);
    this.#queue.add(keyOf(svc));
  }

  #onPod(event: StoreEvent): void {
    const ns = event.object.metadata.namespace!;
    const services = this.#selectors.get(ns);
    if (!services) return;
    for (const [name, selector] of services) {
      if (matches(selector, event.object.metadata.labels) || (event.previous && matches(selector, event.previous.metadata.labels))) {
        this.#queue.add(`${ns}/${name}`);
      }
    }
  }

  /** Reconciles the Endpoints of service `namespace/name`. */
  sync(key: string): void {
    const [ns, name] = key.split('/') as [string, string];
    const { store } = this.#o;
    const svc = store.get('Service', ns, name);
    const current = store.get('Endpoints', ns, name);
    if (!svc) {
      if (current) store.delete('Endpoints', ns, name);
      return;
    }
    const selector = selectorOf(svc);
    if (!selector) return;
    const { subsets, truncated } = desiredEndpoints(svc, this.#o.index.matching(ns, selector));
    const labels: Record<string, string> = { ...svc.metadata.labels };
    if (specOf(svc)['clusterIP'] === 'None') labels[LABEL_HEADLESS] = '';
    const annotations: Record<string, string> = {};
    if (truncated) annotations[ANNOTATION_OVER_CAPACITY] = 'truncated';
    const currentAnnotations = { ...current?.metadata.annotations };
    delete currentAnnotations[ANNOTATION_LAST_CHANGE];
    if (current && jsonEqual(current['subsets'] ?? [], subsets) && jsonEqual(current.metadata.labels ?? {}, labels) && jsonEqual(currentAnnotations, annotations)) return;
    annotations[ANNOTATION_LAST_CHANGE] = rfc3339(this.#o.clock.now());
    const meta = { name, namespace: ns, ...(Object.keys(labels).length > 0 ? { labels } : {}), annotations };
    if (current) store.update('Endpoints', { ...current, metadata: { ...current.metadata, ...meta, ...(Object.keys(labels).length > 0 ? {} : { labels: undefined }) }, subsets });
    else store.create('Endpoints', { apiVersion: 'v1', kind: 'Endpoints', metadata: meta, subsets });
  }
}
