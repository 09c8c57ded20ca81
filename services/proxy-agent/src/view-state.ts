// What the agent knows: service specs from the svc bucket and its zone's view slices from the
// views bucket, plus the diff-shaped trackers (habit 2) that say which services changed since
// the last sync and drop no-ops, so an event that changes nothing never wakes the runner.

import type { EndpointSlice, IPFamily, Service } from '@slicemesh/model';
import { ANNOTATION_TRIGGER_TIME } from '@slicemesh/model';
import type { KvChange } from '@slicemesh/nats';
import { parseServiceSpec, parseZoneView } from '@slicemesh/contracts';
import { EndpointSliceCache, ServiceChangeTracker } from '@slicemesh/proxy-state';

/**
 * What one KV entry did. 'changed': a sync is needed (for services, as upstream, "some
 * change is pending", so a no-op beside a pending change still says so); 'unchanged': a
 * no-op the runner must not hear about; 'rejected': an invalid entry, ignored.
 */
export type IngestOutcome =
  | { readonly kind: 'changed'; readonly service: string }
  | { readonly kind: 'unchanged'; readonly service: string | null }
  | { readonly kind: 'rejected'; readonly reason: string };

/** The pending changes a sync consumes. */
export interface Checkout {
  /** `<ns>/<name>` of every service whose spec or endpoints changed, sorted. */
  readonly changedServices: ReadonlySet<string>;
  readonly serviceChanges: number;
  readonly endpointChanges: number;
  /** Per changed service, the trigger times (ms) of the slice updates that changed it. */
  readonly triggerTimes: ReadonlyMap<string, readonly number[]>;
}

export interface ViewStateOptions {
  readonly cluster: string;
  /** The one view this agent reads (a zone, or UNZONED_VIEW). */
  readonly view: string;
  readonly nodeName: string;
  readonly family: IPFamily;
  /** Dual stack: the other family is programmed too, so its service ports and slices are changes as well. */
  readonly secondaryFamily?: IPFamily;
}

interface ViewEntry {
  readonly service: string;
  readonly slice: EndpointSlice;
}

const serviceKeyOf = (ns: string, name: string): string => `${ns}/${name}`;

/** Trigger time of a slice in ms, or null without a parseable annotation. */
export function triggerTimeOf(slice: EndpointSlice): number | null {
  const text = slice.metadata.annotations?.[ANNOTATION_TRIGGER_TIME];
  if (text === undefined) return null;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : null;
}

export class ViewState {
  readonly #opts: ViewStateOptions;
  /** The view the entries belong to: the options' until replaceViews moves it. */
  #view: string;
  readonly #services = new Map<string, Service>();
  readonly #svcKeys = new Map<string, string>(); // KV key -> <ns>/<name>
  readonly #views = new Map<string, ViewEntry>(); // KV key -> slice
  readonly #slices = new Map<string, Map<string, EndpointSlice>>(); // <ns>/<svc> -> KV key -> slice
  readonly #serviceTracker: ServiceChangeTracker;
  readonly #sliceCache: EndpointSliceCache;
  /** Dual stack: the same for the secondary family (null on a single-family node). */
  readonly #secondary: { readonly tracker: ServiceChangeTracker; readonly cache: EndpointSliceCache } | null;
  #triggerTimes = new Map<string, number[]>();
  #serviceChanges = 0;
  #endpointChanges = 0;

  constructor(opts: ViewStateOptions) {
    this.#opts = opts;
    this.#view = opts.view;
    this.#serviceTracker = new ServiceChangeTracker(opts.family);
    this.#sliceCache = new EndpointSliceCache({ nodeName: opts.nodeName, family: opts.family });
    const f2 = opts.secondaryFamily;
    this.#secondary = f2 === undefined || f2 === opts.family ? null : { tracker: new ServiceChangeTracker(f2), cache: new EndpointSliceCache({ nodeName: opts.nodeName, family: f2 }) };
  }

  /** Applies one entry of the svc bucket. */
  applyService(change: KvChange): IngestOutcome {
    if (change.op !== 'PUT') return this.#deleteService(change.key);
    if (change.parseError !== undefined) return { kind: 'rejected', reason: `svc ${change.key}: not JSON: ${change.parseError}` };
    const parsed = parseServiceSpec(change.key, change.value, this.#opts.cluster);
    if (!parsed.ok) return { kind: 'rejected', reason: parsed.rejection.reason };
    const { addr, service } = parsed.value;
    const key = serviceKeyOf(addr.namespace, addr.name);
    const previous = this.#services.get(key) ?? null;
    this.#services.set(key, service);
    this.#svcKeys.set(change.key, key);
    return this.#serviceOutcome(previous, service, key);
  }

  #deleteService(kvKey: string): IngestOutcome {
    const key = this.#svcKeys.get(kvKey);
    if (key === undefined) return { kind: 'unchanged', service: null };
    const previous = this.#services.get(key) ?? null;
    this.#svcKeys.delete(kvKey);
    this.#services.delete(key);
    return this.#serviceOutcome(previous, null, key);
  }

  #serviceOutcome(previous: Service | null, current: Service | null, key: string): IngestOutcome {
    // As upstream: the tracker drops a change that ends where it began (or touches no port
    // this family programs) and answers whether anything is pending at all.
    const second = this.#secondary?.tracker.update(previous, current) ?? false;
    if (!this.#serviceTracker.update(previous, current) && !second) return { kind: 'unchanged', service: key };
    this.#serviceChanges++;
    return { kind: 'changed', service: key };
  }

  /** Applies one entry of the views bucket. */
  applyView(change: KvChange): IngestOutcome {
    if (change.op !== 'PUT') return this.#deleteView(change.key);
    if (change.parseError !== undefined) return { kind: 'rejected', reason: `view ${change.key}: not JSON: ${change.parseError}` };
    const parsed = parseZoneView(change.key, change.value, { cluster: this.#opts.cluster, zone: this.#view });
    if (!parsed.ok) return { kind: 'rejected', reason: parsed.rejection.reason };
    const { addr, slice } = parsed.value;
    const key = serviceKeyOf(addr.namespace, addr.service);
    this.#views.set(change.key, { service: key, slice });
    let group = this.#slices.get(key);
    if (!group) this.#slices.set(key, (group = new Map()));
    group.set(change.key, slice);
    // The cache drops updates equal to what it holds, and slices of another family.
    const second = this.#secondary?.cache.update(slice) ?? false;
    if (!this.#sliceCache.update(slice) && !second) return { kind: 'unchanged', service: key };
    this.#endpointChanges++;
    const t = triggerTimeOf(slice);
    if (t !== null) {
      const list = this.#triggerTimes.get(key);
      if (list) list.push(t);
      else this.#triggerTimes.set(key, [t]);
    }
    return { kind: 'changed', service: key };
  }

  #deleteView(kvKey: string): IngestOutcome {
    const old = this.#views.get(kvKey);
    if (old === undefined) return { kind: 'unchanged', service: null };
    this.#views.delete(kvKey);
    const group = this.#slices.get(old.service);
    group?.delete(kvKey);
    if (group?.size === 0) this.#slices.delete(old.service);
    const second = this.#secondary?.cache.delete(old.slice) ?? false;
    if (!this.#sliceCache.delete(old.slice) && !second) return { kind: 'unchanged', service: old.service };
    this.#endpointChanges++;
    return { kind: 'changed', service: old.service };
  }

  /**
   * Drops the entries of one bucket whose KV keys are not in `keys` (after a watch restarted,
   * its initial set is the whole truth: keys purged meanwhile never arrive as deletes).
   * Returns the outcomes of the drops.
   */
  retainOnly(bucket: 'svc' | 'views', keys: ReadonlySet<string>): IngestOutcome[] {
    const known = bucket === 'svc' ? [...this.#svcKeys.keys()] : [...this.#views.keys()];
    const out: IngestOutcome[] = [];
    for (const k of known) {
      if (keys.has(k)) continue;
      out.push(bucket === 'svc' ? this.#deleteService(k) : this.#deleteView(k));
    }
    return out;
  }

  /** The view whose entries are held (a zone, or UNZONED_VIEW). */
  get view(): string {
    return this.#view;
  }

  /**
   * Moves to another view in one step: every entry of the current view is dropped and
   * `changes`, the new view's complete initial set, applied, so nothing in between can see an
   * empty view. The changes the move makes are pending like any others; the slices' trigger
   * times are not recorded (they measure endpoint changes, and a move changes none). Returns
   * the outcomes (drops first).
   *
   * @example state.replaceViews('zone-b', initialEntriesOfZoneB) // then sync in full
   */
  replaceViews(view: string, changes: readonly KvChange[]): IngestOutcome[] {
    const out = [...this.#views.keys()].map((k) => this.#deleteView(k));
    this.#view = view;
    const pendingTimes = this.#triggerTimes;
    this.#triggerTimes = new Map();
    for (const c of changes) out.push(this.applyView(c));
    this.#triggerTimes = pendingTimes;
    return out;
  }

  /** Whether some change is pending for the next sync. */
  hasPendingChanges(): boolean {
    const sec = this.#secondary;
    return this.#serviceTracker.pendingCount > 0 || this.#sliceCache.hasPendingChanges() || (sec !== null && (sec.tracker.pendingCount > 0 || sec.cache.hasPendingChanges()));
  }

  /** Consumes the pending changes (both trackers) and the trigger times recorded with them. */
  checkout(): Checkout {
    const sec = this.#secondary;
    const changed = new Set<string>([
      ...this.#serviceTracker.checkoutChanges().keys(),
      ...this.#sliceCache.checkoutChanges().keys(),
      ...(sec !== null ? [...sec.tracker.checkoutChanges().keys(), ...sec.cache.checkoutChanges().keys()] : []),
    ]);
    const triggerTimes = this.#triggerTimes;
    this.#triggerTimes = new Map();
    const out: Checkout = {
      changedServices: new Set([...changed].sort()),
      serviceChanges: this.#serviceChanges,
      endpointChanges: this.#endpointChanges,
      triggerTimes,
    };
    this.#serviceChanges = 0;
    this.#endpointChanges = 0;
    return out;
  }

  /** Puts trigger times back after a failed sync, so the latency is measured when rules finally land. */
  restoreTriggerTimes(times: ReadonlyMap<string, readonly number[]>): void {
    for (const [k, ts] of times) {
      const list = this.#triggerTimes.get(k);
      if (list) list.unshift(...ts);
      else this.#triggerTimes.set(k, [...ts]);
    }
  }

  /** Service keys `<ns>/<name>`, sorted. */
  serviceKeys(): string[] {
    return [...this.#services.keys()].sort();
  }

  service(key: string): Service | undefined {
    return this.#services.get(key);
  }

  /** The view slices of service `<ns>/<name>`, by slice name. */
  slicesOf(key: string): EndpointSlice[] {
    const group = this.#slices.get(key);
    if (!group) return [];
    return [...group.values()].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
  }
}
