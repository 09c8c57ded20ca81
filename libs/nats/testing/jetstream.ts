// withJetStream(): a real JetStream for integration tests, with names no other test uses.
// Server: NATS_URL when set, otherwise one `nats:2.9` container per test process (testcontainers).

import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { nuid } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats } from '../src/connect.ts';
import { isApiError } from '../src/streams.ts';
import type { BackboneNames } from '../src/streams.ts';

export interface JetStreamFixture {
  readonly url: string;
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  /** Unique per call: a suffix for any further names (durables, ...), [A-Za-z0-9] only. */
  readonly id: string;
  /** KUBE_<id>, SLICES_<id>, DLQ_<id>, EVENTS_<id>, prefix 't<id>.', buckets svc_<id>, views_<id>, hinted_<id>. */
  readonly names: BackboneNames;
  /** Deletes the streams and buckets named above (those that exist), then closes the connection. */
  cleanup(): Promise<void>;
}

export interface WithJetStreamOptions {
  /** Environment to read NATS_URL from. Defaults to process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Starts a server and returns its URL. Defaults to a `nats:2.9 -js` container. */
  readonly startServer?: () => Promise<string>;
}

/** The one line a test run prints when it has no server to use. */
export const NO_SERVER_MESSAGE = 'integration tests need NATS with JetStream: set NATS_URL or provide a Docker engine';

let container: Promise<string> | undefined;

/** One container per test process; testcontainers' reaper removes it when the process ends. */
async function startContainer(): Promise<string> {
  container ??= (async () => {
    const { GenericContainer, Wait } = await import('testcontainers');
    const started = await new GenericContainer('nats:2.9')
      .withCommand(['-js'])
      .withExposedPorts(4222)
      .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
      .start();
    return `nats://${started.getHost()}:${started.getMappedPort(4222)}`;
  })();
  return container;
}

/** Connects (see the file comment) and hands out unique names. Call cleanup() in afterEach/afterAll. */
export async function withJetStream(opts: WithJetStreamOptions = {}): Promise<JetStreamFixture> {
  const env = opts.env ?? process.env;
  let url = env['NATS_URL'];
  if (url === undefined || url === '') {
    try {
      url = await (opts.startServer ?? startContainer)();
    } catch (err) {
      const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0];
      throw new Error(`${NO_SERVER_MESSAGE} (${reason})`, { cause: err });
    }
  }
  const id = nuid.next();
  const nc = await connectNats({ url, name: `test-${id}` });
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  const names: BackboneNames = { kube: `KUBE_${id}`, slices: `SLICES_${id}`, dlq: `DLQ_${id}`, events: `EVENTS_${id}`, prefix: `t${id}.`, svc: `svc_${id}`, views: `views_${id}`, hinted: `hinted_${id}` };
  const cleanup = async () => {
    for (const stream of [names.kube, names.slices, names.dlq, ...(names.events === undefined ? [] : [names.events]), `KV_${names.svc}`, `KV_${names.views}`, `KV_${names.hinted}`]) {
      try {
        await jsm.streams.delete(stream);
      } catch (err) {
        if (!isApiError(err, 10059)) throw err; // stream not found: the test never created it
      }
    }
    await nc.close();
  };
  return { url, nc, js, jsm, id, names, cleanup };
}
