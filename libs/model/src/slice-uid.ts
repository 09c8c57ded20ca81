// The uid a stored EndpointSlice gets when it arrives without one. The API server would pick a
// random one; ours is derived from the slice's identity so that replaying the log reproduces it.

import { createHash } from 'node:crypto';

/**
 * A stable UUID-shaped uid for a slice that arrives without one: derived from cluster, namespace
 * and name only, so replaying the log reproduces it.
 */
export function deterministicSliceUid(cluster: string, namespace: string, name: string): string {
  const h = createHash('sha256').update(JSON.stringify(['EndpointSlice', cluster, namespace, name])).digest('hex');
  // Shape as an RFC 4122 name-based UUID: version nibble 5, variant bits 10.
  const variant = ((parseInt(h.slice(16, 17), 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
