// The web view `npm start` serves, on a real live log: libs/history's recorded scenario published
// to a fresh KUBE stream on the real NATS server (as the watcher publishes it), read back through
// openLiveLog, and answered as the same scenario read from memory answers it — the page sees
// the same services, nodes and why, live or offline.

import { createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, migrateToLatest } from '@slicemesh/db';
import { logSettings, memoryLog } from '@slicemesh/history';
import { connectNats, ensureStreams, jetstream, jetstreamManager } from '@slicemesh/nats';
import { scenarioEvents, scenarioMessages } from '../../../libs/history/testing/scenario.ts';
import { uiEngineOf } from '../../cli/src/ui/engine.ts';
import type { PageState, PageWhy } from '../../cli/src/ui/page-data.ts';
import { freshRunNames, newRunId } from './run-names.ts';
import { deleteRunState } from './run-state.ts';
import type { StackWebView } from './web-view.ts';
import { startWebView } from './web-view.ts';

const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const DATABASE_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const CLUSTER = 'local';

const run = freshRunNames(newRunId(Date.now()));
let web: StackWebView | undefined;

beforeAll(async () => {
  const nc = await connectNats({ url: NATS_URL, name: 'web-view-int-test' });
  try {
    await ensureStreams(await jetstreamManager(nc), run.names);
    const js = jetstream(nc);
    for (const m of scenarioMessages(CLUSTER, run.names.prefix)) await js.publish(m.subject, JSON.stringify(m.body), { msgID: m.msgID });
  } finally {
    await nc.close();
  }
  // The schema the stack creates: the live log reads the slicer's settings from it.
  const h = await createDb({ url: DATABASE_URL, schema: run.schema, max: 1 });
  try {
    await migrateToLatest(h.db, run.schema);
  } finally {
    await h.close();
  }
  web = await startWebView({ natsUrl: NATS_URL, databaseUrl: DATABASE_URL, run, cluster: CLUSTER, port: 0 });
});

afterAll(async () => {
  await web?.close();
  await deleteRunState(NATS_URL, DATABASE_URL, run);
});

const getJson = async <T>(path: string): Promise<T> => {
  const res = await fetch(new URL(path, web?.url));
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
};

/** The recorded scenario from memory, as `slicemesh ui -f` would show it. */
const offline = () => uiEngineOf(memoryLog({ settings: logSettings({ cluster: CLUSTER, prefix: run.names.prefix }), events: scenarioEvents(CLUSTER, run.names.prefix) }));
// Slice names are derived from the log's times too (the stream's here, the recording's offline).
const withoutTimes = (s: PageState) => ({ seq: s.at.seq, services: s.services.map((x) => ({ ...x, slices: x.slices.map((sl) => ({ ...sl, name: '' })) })), nodes: s.nodes });

describe('the web view of npm start, on the live log', () => {
  it('shows at each point what the same log shows offline', async () => {
    const summary = await getJson<{ source: string; first: { seq: number }; latest: { seq: number } }>('/api/summary');
    expect(summary.source).toBe(`live: ${run.names.kube} on ${NATS_URL}`);
    expect([summary.first.seq, summary.latest.seq]).toEqual([1, 18]);
    const engine = offline();
    for (const at of ['12', '13', 'latest']) expect(withoutTimes(await getJson<PageState>(`/api/state?at=${at}`)), at).toEqual(withoutTimes(await engine.state(at)));
    const at12 = await getJson<PageState>('/api/state?at=12');
    expect(at12.nodes).toContainEqual({ name: 'worker-a-1', zone: 'zone-a' });
    const why = await getJson<PageWhy>('/api/why?node=worker-b-1&service=shop/web');
    const expected = await engine.why('latest', 'worker-b-1', { namespace: 'shop', name: 'web' });
    expect(why.endpoints).toEqual(expected.endpoints);
    expect(why.endpoints.filter((e) => e.sends).map((e) => e.ip)).toEqual(['10.1.0.5', '10.1.0.7']);
  });

  it('takes a free port when the one asked for is busy, and says so', async () => {
    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as AddressInfo).port;
    const other = await startWebView({ natsUrl: NATS_URL, databaseUrl: DATABASE_URL, run, cluster: CLUSTER, port });
    try {
      expect(other.busyPort).toBe(port);
      expect(other.url).not.toContain(`:${port}/`);
      expect((await fetch(new URL('/healthz', other.url))).status).toBe(200);
    } finally {
      await other.close();
      await new Promise<void>((resolve) => busy.close(() => resolve()));
    }
  });
});
