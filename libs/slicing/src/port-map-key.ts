// The port-mapping group key (A.5.4): pods and slices with the same resolved port list share
// a key, whatever the list's order.

import { createHash } from 'node:crypto';
import type { EndpointSlicePort } from '@slicemesh/model';

// Lenient on absent fields so hand-written slices do not churn: a missing name is '' and a
// missing protocol is TCP, which is what the API server would have stored.
function portText(p: EndpointSlicePort): string {
  return `${p.name ?? ''}\u0000${p.port ?? ''}\u0000${p.protocol ?? 'TCP'}\u0000${p.appProtocol ?? '\u0001'}`;
}

/** Ports sorted into the canonical order the key is computed from (a copy). */
export function sortPorts(ports: readonly EndpointSlicePort[] | null | undefined): EndpointSlicePort[] {
  const withText = (ports ?? []).map((p) => [portText(p), p] as const);
  withText.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return withText.map((x) => x[1]);
}

// A pure memo: the same list text always maps to the same key. Bounded so it cannot grow
// without limit in a long-running process.
const memo = new Map<string, string>();
const MEMO_LIMIT = 4096;

/**
 * Stable key of a port list: 16 hex chars of sha256 over the sorted ports. nil, [] and any
 * permutation of the same ports give the same key.
 */
export function portMapKey(ports: readonly EndpointSlicePort[] | null | undefined): string {
  const texts = (ports ?? []).map(portText).sort();
  const joined = texts.join('\n');
  let key = memo.get(joined);
  if (key === undefined) {
    key = createHash('sha256').update(joined).digest('hex').slice(0, 16);
    if (memo.size >= MEMO_LIMIT) memo.clear();
    memo.set(joined, key);
  }
  return key;
}
