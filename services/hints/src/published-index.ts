// The in-memory copy of what this process believes the KV buckets hold, grouped by service so a
// reconcile diffs only its own keys. Views are also recorded in Postgres (published_views, the
// durable copy this index is loaded from); service specs and hinted slices only here, seeded
// from their buckets' values at startup.

import { parseHintedKey, parseSvcKey, parseViewKey } from '@slicemesh/nats';
import type { RecordedKey } from './view-plan.ts';

/** `<namespace>/<name>`, the reconcile key. */
export type ServiceKey = string;

export function serviceKeyOf(namespace: string, name: string): ServiceKey {
  return `${namespace}/${name}`;
}

/** Splits a reconcile key; namespaces cannot contain '/', names after the first '/' are kept whole. */
export function splitServiceKey(key: ServiceKey): { readonly namespace: string; readonly name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

const EMPTY: ReadonlyMap<string, RecordedKey> = new Map();

/** Keys of one bucket, grouped by the service they belong to. */
export class KeyIndex {
  readonly #byService = new Map<ServiceKey, Map<string, RecordedKey>>();
  readonly #serviceOf: (key: string) => ServiceKey;

  /** `serviceOf` maps a key to its service; it throws for keys that are not ours. */
  constructor(serviceOf: (key: string) => ServiceKey) {
    this.#serviceOf = serviceOf;
  }

  /** The recorded keys of a service (a copy; empty when none). */
  forService(service: ServiceKey): Map<string, RecordedKey> {
    return new Map(this.#byService.get(service) ?? []);
  }

  /**
   * The recorded keys of a service without a copy — for reading before the next set or delete
   * (a 1000-slice Service's copy cost a reconcile about a millisecond).
   */
  peekService(service: ServiceKey): ReadonlyMap<string, RecordedKey> {
    return this.#byService.get(service) ?? EMPTY;
  }

  get(key: string): RecordedKey | undefined {
    return this.#byService.get(this.#serviceOf(key))?.get(key);
  }

  set(key: string, rec: RecordedKey): void {
    const service = this.#serviceOf(key);
    let keys = this.#byService.get(service);
    if (keys === undefined) this.#byService.set(service, (keys = new Map()));
    keys.set(key, rec);
  }

  delete(key: string): void {
    const service = this.#serviceOf(key);
    const keys = this.#byService.get(service);
    keys?.delete(key);
    if (keys !== undefined && keys.size === 0) this.#byService.delete(service);
  }

  /** Services with at least one recorded key, sorted. */
  services(): ServiceKey[] {
    return [...this.#byService.keys()].sort();
  }

  /** Every recorded key, sorted. */
  keys(): string[] {
    return [...this.#byService.values()].flatMap((m) => [...m.keys()]).sort();
  }

  /**
   * Startup audit against what the bucket really holds (`inBucket`: each live key and the
   * revision of its value). A key becomes unconfirmed (revision 0), so the next reconcile of its
   * service re-puts or deletes it, when it is recorded but missing from the bucket, in the
   * bucket but never recorded, or recorded at another revision than the bucket's: a put whose
   * confirmation was never stored (a crash, or a write-behind confirmation not yet written)
   * left a value the recorded digest does not describe. Returns how many keys changed state.
   */
  auditAgainst(inBucket: ReadonlyMap<string, number>): number {
    let changed = 0;
    for (const key of this.keys()) {
      const recorded = this.get(key)?.revision ?? 0;
      if (recorded > 0 && inBucket.get(key) !== recorded) {
        this.set(key, { revision: 0, digest: null });
        changed++;
      }
    }
    for (const key of inBucket.keys()) {
      if (this.get(key) === undefined) {
        this.set(key, { revision: 0, digest: null });
        changed++;
      }
    }
    return changed;
  }
}

/** An index of `views` keys of one cluster. */
export function viewKeyIndex(): KeyIndex {
  return new KeyIndex((key) => {
    const v = parseViewKey(key);
    return serviceKeyOf(v.namespace, v.service);
  });
}

/** An index of `svc` keys of one cluster. */
export function svcKeyIndex(): KeyIndex {
  return new KeyIndex((key) => {
    const v = parseSvcKey(key);
    return serviceKeyOf(v.namespace, v.name);
  });
}

/** An index of `hinted` keys of one cluster. */
export function hintedKeyIndex(): KeyIndex {
  return new KeyIndex((key) => {
    const h = parseHintedKey(key);
    return serviceKeyOf(h.namespace, h.service);
  });
}
