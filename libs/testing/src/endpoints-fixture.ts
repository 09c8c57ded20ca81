// Builders for Endpoints objects (the input of the mirroring controller) in tests.

import type { EndpointAddress, EndpointPort, Endpoints, EndpointSubset } from '@slicemesh/model';

export interface EndpointsOpts {
  readonly namespace?: string;
  /** Defaults to `uid-ep-<name>`; pass '' for an Endpoints without uid. */
  readonly uid?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  readonly subsets?: readonly EndpointSubset[];
  readonly deletionTimestamp?: string;
}

export function makeEndpoints(name: string, o: EndpointsOpts = {}): Endpoints {
  const uid = o.uid ?? `uid-ep-${name}`;
  return {
    kind: 'Endpoints',
    apiVersion: 'v1',
    metadata: {
      name,
      namespace: o.namespace ?? 'default',
      ...(uid !== '' ? { uid } : {}),
      ...(o.labels ? { labels: o.labels } : {}),
      ...(o.annotations ? { annotations: o.annotations } : {}),
      ...(o.deletionTimestamp ? { deletionTimestamp: o.deletionTimestamp } : {}),
    },
    subsets: o.subsets ?? [],
  };
}

/** One subset: `ready` and `notReady` are IP strings (or full addresses). */
export function makeSubset(
  ports: readonly EndpointPort[],
  ready: readonly (string | EndpointAddress)[] = [],
  notReady: readonly (string | EndpointAddress)[] = [],
): EndpointSubset {
  const toAddr = (a: string | EndpointAddress): EndpointAddress => (typeof a === 'string' ? { ip: a } : a);
  return {
    ports,
    ...(ready.length > 0 ? { addresses: ready.map(toAddr) } : {}),
    ...(notReady.length > 0 ? { notReadyAddresses: notReady.map(toAddr) } : {}),
  };
}

/** `count` distinct IPv4 addresses starting at 10.<b>.0.1 (b = `block`), in order. */
export function ipv4Range(count: number, block = 0): string[] {
  return Array.from({ length: count }, (_, i) => `10.${block}.${Math.floor((i + 1) / 256)}.${(i + 1) % 256}`);
}
