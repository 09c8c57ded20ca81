// Maps a request path onto what it addresses: a discovery document, or a resource
// collection/item (with namespace, name and subresource) of a served kind.
import { kindForResource, SERVED, servedGroupVersions } from '../store/kinds.ts';
import type { KindInfo } from '../store/kinds.ts';

export type DocumentRoute =
  | { readonly type: 'apiVersions' }
  | { readonly type: 'groupList' }
  | { readonly type: 'group'; readonly group: string }
  | { readonly type: 'resourceList'; readonly group: string; readonly version: string }
  | { readonly type: 'version' }
  | { readonly type: 'health'; readonly check: 'healthz' | 'livez' | 'readyz' }
  | { readonly type: 'metrics' }
  /** POST /sim/compact: a fault for chaos tests (ObjectStore.compact), not a Kubernetes path. */
  | { readonly type: 'simCompact' }
  | { readonly type: 'openapiRoot' }
  | { readonly type: 'openapiGroupVersion'; readonly group: string; readonly version: string };

export interface ResourceRoute {
  readonly type: 'resource';
  readonly info: KindInfo;
  /** Set for namespaced paths; undefined means all namespaces (or a cluster-scoped kind). */
  readonly namespace?: string;
  readonly name?: string;
  readonly subresource?: string;
  /** The deprecated `/watch/` path prefix was used. */
  readonly watchPrefix: boolean;
}

export type Route = DocumentRoute | ResourceRoute | { readonly type: 'notFound' };

const NOT_FOUND = { type: 'notFound' } as const;

function isServed(group: string, version: string, served: readonly KindInfo[]): boolean {
  return servedGroupVersions(served).some((gv) => gv.group === group && gv.version === version);
}

function resourceRoute(group: string, version: string, rest: readonly string[], served: readonly KindInfo[]): Route {
  let segs = rest;
  const watchPrefix = segs[0] === 'watch';
  if (watchPrefix) segs = segs.slice(1);
  if (segs.length === 0) return NOT_FOUND;
  // /namespaces/{ns}/{resource}[/{name}[/{sub}]] unless the third segment is not a resource
  // (then it is the namespace object itself: /namespaces/{name}[/status]).
  if (segs[0] === 'namespaces' && segs.length >= 3) {
    const info = kindForResource(group, version, segs[2]!, served);
    if (info) {
      if (!info.namespaced || segs.length > 5) return NOT_FOUND;
      return { type: 'resource', info, namespace: segs[1], name: segs[3], subresource: segs[4], watchPrefix };
    }
  }
  const info = kindForResource(group, version, segs[0]!, served);
  if (!info || segs.length > 3) return NOT_FOUND;
  // A namespaced kind without a namespace only has the all-namespaces collection.
  if (info.namespaced && segs.length > 1) return NOT_FOUND;
  return { type: 'resource', info, name: segs[1], subresource: segs[2], watchPrefix };
}

/** `served`: the resources this server offers (SERVED, or fewer: see servedWithout). */
export function parseRoute(pathname: string, served: readonly KindInfo[] = SERVED): Route {
  const segs = pathname.split('/').filter((s) => s !== '').map((s) => decodeURIComponent(s));
  const [a, b, c, ...rest] = segs;
  if (a === 'version' && segs.length === 1) return { type: 'version' };
  if ((a === 'healthz' || a === 'livez' || a === 'readyz') && segs.length === 1) return { type: 'health', check: a };
  if (a === 'metrics' && segs.length === 1) return { type: 'metrics' };
  if (a === 'sim' && b === 'compact' && segs.length === 2) return { type: 'simCompact' };
  if (a === 'openapi' && b === 'v3') {
    if (segs.length === 2) return { type: 'openapiRoot' };
    if (c === 'api' && rest.length === 1 && isServed('', rest[0]!, served)) return { type: 'openapiGroupVersion', group: '', version: rest[0]! };
    if (c === 'apis' && rest.length === 2 && isServed(rest[0]!, rest[1]!, served)) return { type: 'openapiGroupVersion', group: rest[0]!, version: rest[1]! };
    return NOT_FOUND;
  }
  if (a === 'api') {
    if (segs.length === 1) return { type: 'apiVersions' };
    if (!isServed('', b!, served)) return NOT_FOUND;
    if (segs.length === 2) return { type: 'resourceList', group: '', version: b! };
    return resourceRoute('', b!, segs.slice(2), served);
  }
  if (a === 'apis') {
    if (segs.length === 1) return { type: 'groupList' };
    if (segs.length === 2) return servedGroupVersions(served).some((gv) => gv.group === b) ? { type: 'group', group: b! } : NOT_FOUND;
    if (!isServed(b!, c!, served)) return NOT_FOUND;
    if (segs.length === 3) return { type: 'resourceList', group: b!, version: c! };
    return resourceRoute(b!, c!, rest, served);
  }
  return NOT_FOUND;
}
