// Removing what a fresh run created, so repeated `npm start` runs leave the servers clean.

import { createDb, dropSchema } from '@slicemesh/db';
import { STREAM_NOT_FOUND, connectNats, isApiError, jetstreamManager, roleCredentials } from '@slicemesh/nats';
import type { RunNames } from './run-names.ts';
import { streamsOf } from './run-names.ts';

/**
 * Deletes the run's streams and buckets and drops its schema. Refuses persistent names (those
 * are shared by every --keep-state run). Missing pieces are skipped.
 */
export async function deleteRunState(natsUrl: string, databaseUrl: string, run: RunNames, natsAuthDir?: string): Promise<void> {
  if (run.persistent) throw new Error('refusing to delete the persistent state (KUBE, SLICES, DLQ, svc, views, schema slicemesh)');
  const nc = await connectNats({ url: natsUrl, name: `stack-cleanup-${run.id}`, ...roleCredentials(natsAuthDir, 'admin') });
  try {
    const jsm = await jetstreamManager(nc);
    for (const stream of streamsOf(run.names)) {
      try {
        await jsm.streams.delete(stream);
      } catch (err) {
        if (!isApiError(err, STREAM_NOT_FOUND)) throw err;
      }
    }
  } finally {
    await nc.close();
  }
  const h = await createDb({ url: databaseUrl, max: 1 });
  try {
    await dropSchema(h.db, run.schema);
  } finally {
    await h.close();
  }
}
