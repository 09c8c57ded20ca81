// For integration tests of the KV helpers: each test of a file gets a JetStream fixture of its
// own and a views bucket in it (vitest hooks), and the view keys those tests write.

import type { KV } from '@nats-io/kv';
import { afterEach, beforeEach } from 'vitest';
import { viewKey } from '@slicemesh/contracts';
import { ensureKv } from '../src/streams.ts';
import { withJetStream } from './jetstream.ts';
import type { JetStreamFixture } from './jetstream.ts';

export interface ViewsBucket {
  readonly f: JetStreamFixture;
  readonly kv: KV;
}

/** Registers the hooks: before each test a fresh fixture and views bucket, handed to `take`; after it, cleanup. */
export function viewsBucketPerTest(take: (b: ViewsBucket) => void): void {
  let f: JetStreamFixture | undefined;
  beforeEach(async () => {
    f = await withJetStream();
    take({ f, kv: await ensureKv(f.nc, f.names.views) });
  });
  afterEach(async () => {
    await f?.cleanup();
  });
}

/** The key of slice `slice` of Service default/web in cluster c's view `zone`. */
export const webViewKey = (zone: string, slice: string): string => viewKey({ cluster: 'c', zone, namespace: 'default', service: 'web', slice });
