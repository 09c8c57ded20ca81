// core/v1 Event writes as raw JSON, for the publisher's event recorder: create a new Event, and
// patch an existing one's count, lastTimestamp and message (a strategic merge patch, as
// client-go's recorder sends). Failures are KubeWriteError, like the EndpointSlice calls, so the
// same retry rules apply (Retry-After on 429 and 503, statusCode 0 without an answer).

import type { KubeConfig } from '@kubernetes/client-node';
import { apiCaller } from './api-caller.ts';
import type { KubeJson } from './slice-api.ts';
import { kubeWriteErrorOf } from './slice-api.ts';

/** The calls the event recorder makes. Implementations: coreEventApi, and fakes in tests. */
export interface CoreEventApi {
  /** POST; 409 AlreadyExists when the name is taken. Returns the stored Event. */
  create(namespace: string, event: KubeJson): Promise<KubeJson>;
  /** Strategic merge PATCH of an existing Event; undefined when it no longer exists (404: expired). */
  patch(namespace: string, name: string, patch: KubeJson): Promise<KubeJson | undefined>;
}

export interface CoreEventApiOptions {
  /** Per-request timeout, ms. Defaults to 30_000. */
  readonly timeoutMs?: number;
  /** `User-Agent` sent with every request. Defaults to `slicemesh-publisher`. */
  readonly userAgent?: string;
}

/** Collection path of core/v1 Events in `namespace`. */
export function eventCollectionPath(namespace: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`;
}

/**
 * The Event calls against the API server `kc` points at.
 *
 * ### Examples
 * ```ts
 * const events = coreEventApi(buildKubeConfig({ type: 'server', url: sim.url }));
 * await events.create('shop', { apiVersion: 'v1', kind: 'Event', metadata: { name: 'web.1872a…' }, involvedObject: {...}, ... });
 * await events.patch('shop', 'web.1872a…', { count: 2, lastTimestamp: '2026-11-26T22:00:05Z', message: '…' });
 * ```
 */
export function coreEventApi(kc: KubeConfig, opts: CoreEventApiOptions = {}): CoreEventApi {
  const { send, object } = apiCaller(kc, opts);
  return {
    async create(namespace, event) {
      const path = eventCollectionPath(namespace);
      const res = await send('create', 'POST', path, event);
      if (res.status !== 201 && res.status !== 200) throw kubeWriteErrorOf('create', path, res);
      return object('create', path, res);
    },
    async patch(namespace, name, patch) {
      const path = `${eventCollectionPath(namespace)}/${encodeURIComponent(name)}`;
      const res = await send('patch', 'PATCH', path, patch, 'application/strategic-merge-patch+json');
      if (res.status === 404) return undefined;
      if (res.status !== 200) throw kubeWriteErrorOf('patch', path, res);
      return object('patch', path, res);
    },
  };
}
