// What one watcher sees of a store event: with selectors, an object that starts matching
// arrives as ADDED and one that stops matching as DELETED, as the API server does.
import { matchesFilter } from '../store/selectors.ts';
import type { ObjectFilter } from '../store/selectors.ts';
import type { KubeObj, StoreEvent, WatchEventType } from '../store/types.ts';

export interface WireEvent {
  readonly type: WatchEventType;
  readonly object: KubeObj;
}

/** The event as this watcher receives it, or null when the watcher should not see it. */
export function projectEvent(event: StoreEvent, filter: ObjectFilter): WireEvent | null {
  const now = matchesFilter(filter, event.object);
  if (event.type !== 'MODIFIED') return now ? { type: event.type, object: event.object } : null;
  const before = event.previous ? matchesFilter(filter, event.previous) : now;
  if (before && now) return { type: 'MODIFIED', object: event.object };
  if (now) return { type: 'ADDED', object: event.object };
  if (before) return { type: 'DELETED', object: event.object };
  return null;
}

/** A watch request's starting point, from its `resourceVersion` parameter. */
export type WatchStart = { readonly kind: 'initialState' } | { readonly kind: 'after'; readonly rv: number };

/** Unset and "0" start with synthetic ADDED events for current state; N resumes after N. */
export function watchStart(resourceVersion: string | null): WatchStart | undefined {
  if (resourceVersion === null || resourceVersion === '' || resourceVersion === '0') return { kind: 'initialState' };
  if (!/^\d+$/.test(resourceVersion)) return undefined;
  return { kind: 'after', rv: Number(resourceVersion) };
}
