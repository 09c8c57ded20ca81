// A JetStream KV bucket behind KvPort.

import type { KV } from '@slicemesh/nats';
import { kvDelete, kvRevisions, kvWatchJson } from '@slicemesh/nats';
import type { KvPort } from './ports.ts';

export function kvPort(kv: KV): KvPort {
  return {
    // The text is already JSON (view-plan.ts made it once, for its digest and size).
    put: (key, text) => kv.put(key, text),
    delete: (key) => kvDelete(kv, key),
    revisions: (filter) => kvRevisions(kv, filter),
  };
}

/**
 * Every live value under `filter` as parsed JSON (deleted keys and unparsable values left out),
 * read with one watch that stops once the initial values are in. Empty map for an empty match.
 */
export async function readBucket(kv: KV, filter: string): Promise<Map<string, { readonly value: unknown; readonly revision: number }>> {
  const out = new Map<string, { readonly value: unknown; readonly revision: number }>();
  const stop = new AbortController();
  for await (const change of kvWatchJson(kv, { key: filter, signal: stop.signal, onInitialDone: () => stop.abort() })) {
    if (change.op === 'PUT' && change.parseError === undefined) out.set(change.key, { value: change.value, revision: change.revision });
    else out.delete(change.key);
  }
  return out;
}
