// Fan-out worker (a child of bench/fanout.bench.ts): hosts many lightweight agents, each with
// its own NATS connection and its own watch of one zone's views (or of the unfiltered view, the
// unscoped agent, which gets every endpoint of every slice), read as the proxy agent reads them:
// through the filter's shared feed (kvFeedWatchJson). An agent applies
// each entry to its in-memory view state and records when each revision arrived (wall clock,
// epoch ms, comparable with the trigger times the slicer writes) and how many entries it
// received after its initial set. Renders no rules.
//
// Protocol (IPC): parent sends { agents: [{ id, filter, raw }], url, bucket, cluster }; worker
// answers { ready, rssBytes, retries } once every agent has its initial set; on { progress } it
// answers the newest revision each agent applied; on { rawSubscribe: round } every agent
// subscribes on its own connection to `<raw>.<round>`, its zone's plain subject for that round
// of the floor (core NATS, no JetStream), counting afresh, and the worker answers { rawReady }; on { rawProgress }, per agent the raw messages parsed and when
// the last arrived; on { report }, per revision, the latest arrival and how many agents got it,
// and per agent the entries received after the initial set.

import type { FeedResyncKind, KV, NatsConnection } from '@slicemesh/nats';
import { connectNats, kvFeedSubjectPrefix, kvFeedWatchJson, openKv } from '@slicemesh/nats';

interface AgentSpec {
  readonly id: string;
  readonly filter: string;
  /** Its zone's subject for the raw fan-out floor. */
  readonly raw: string;
}
interface Start {
  readonly agents: readonly AgentSpec[];
  readonly url: string;
  readonly bucket: string;
  readonly cluster: string;
}

/** Wall clock: latencies are taken against trigger times, which are wall-clock instants. */
const now = (): number => Date.now();
/** revision → [latest arrival (epoch ms), agents that applied it]. */
const arrivals = new Map<number, [number, number]>();
/** Entries each agent received after its initial set (their bytes are the parent's to add: it saw every put). */
const perAgent = new Map<string, { entries: number }>();
/** The newest revision each agent has applied. */
const lastRevision = new Map<string, number>();
/** Each agent's open connection (closed at the report; the raw floor subscribes on them). */
const connectionOf = new Map<string, NatsConnection>();
/** Raw messages each agent parsed, and when the last arrived (epoch ms). */
const raw = new Map<string, { count: number; last: number }>();
const stop = new AbortController();

let retries = 0;
let specs: readonly AgentSpec[] = [];
/** Times an agent read its views again, by kind: its feed fell silent or missed deliveries. */
const resyncs = new Map<FeedResyncKind, number>();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One agent: connects, watches its filter, applies every entry. Rejects when it fails; before its initial set, having closed its connection. */
async function runAgent(spec: AgentSpec, url: string, bucket: string, cluster: string, ready: () => void): Promise<void> {
  const nc = await connectNats({ url, name: `fanout-${spec.id}`, timeoutMs: 60_000 });
  connectionOf.set(spec.id, nc);
  let initial = true;
  try {
    const kv: KV = await openKv(nc, bucket);
    const view = new Map<string, unknown>(); // the agent's proxy state, keyed like the bucket
    const stats = { entries: 0 };
    perAgent.set(spec.id, stats);
    const feed = { key: spec.filter, subjectPrefix: kvFeedSubjectPrefix(bucket, cluster), signal: stop.signal, onResync: (_why: string, kind: FeedResyncKind) => void resyncs.set(kind, (resyncs.get(kind) ?? 0) + 1) };
    for await (const c of kvFeedWatchJson(nc, kv, { ...feed, onInitialDone: () => ((initial = false), ready()) })) {
      if (c.op === 'PUT') view.set(c.key, c.value);
      else view.delete(c.key);
      if (initial) {
        lastRevision.set(spec.id, c.revision);
        continue;
      }
      const t = now();
      lastRevision.set(spec.id, c.revision);
      stats.entries++;
      const a = arrivals.get(c.revision);
      if (a === undefined) arrivals.set(c.revision, [t, 1]);
      else {
        a[0] = Math.max(a[0], t);
        a[1]++;
      }
    }
  } catch (e) {
    if (initial) {
      connectionOf.delete(spec.id);
      await nc.close().catch(() => {});
    }
    throw e;
  }
}

/**
 * Starts an agent, again (up to 5 times, backing off) when its connect or watch setup fails
 * before its initial set: on a loaded machine a JetStream request can time out. Resolves once
 * it has its initial set, or when it gave up (then the parent hears of it).
 */
function startAgent(spec: AgentSpec, url: string, bucket: string, cluster: string, ready: () => void): Promise<void> {
  return new Promise<void>((resolve) => {
    void (async () => {
      let readied = false;
      for (let attempt = 1; ; attempt++) {
        try {
          await runAgent(spec, url, bucket, cluster, () => {
            readied = true;
            ready();
            resolve();
          });
          return;
        } catch (e) {
          if (readied) return; // a watch that broke later: its missing arrivals show in the figures
          if (attempt >= 5) {
            process.send?.({ error: `${spec.id}: ${e instanceof Error ? e.message : String(e)} (after ${attempt} attempts)` });
            resolve();
            return;
          }
          retries++;
          await sleep(1000 * attempt);
        }
      }
    })();
  });
}

// The bench process went away (finished or crashed): nothing left to report to.
process.on('disconnect', () => process.exit(0));

process.on('message', (msg: unknown) => {
  const m = msg as Partial<Start> & { report?: boolean; progress?: boolean; rawSubscribe?: string; rawProgress?: boolean };
  if (m.agents !== undefined && m.url !== undefined && m.bucket !== undefined && m.cluster !== undefined) {
    const { agents, url, bucket, cluster } = m as Start;
    specs = agents;
    let pending = agents.length;
    const ready = () => {
      if (--pending === 0) process.send?.({ ready: true, rssBytes: process.memoryUsage().rss, retries });
    };
    // Connect in small waves: 250 simultaneous connects and watch setups swamp a 2-core box.
    void (async () => {
      for (let i = 0; i < agents.length; i += 25) {
        await Promise.all(agents.slice(i, i + 25).map((a) => startAgent(a, url, bucket, cluster, ready)));
      }
    })();
  } else if (m.progress) {
    process.send?.({ progress: [...lastRevision] });
  } else if (m.rawSubscribe !== undefined) {
    const round = m.rawSubscribe;
    void (async () => {
      for (const spec of specs) {
        const nc = connectionOf.get(spec.id);
        if (nc === undefined) continue;
        const stats = { count: 0, last: 0 };
        raw.set(spec.id, stats);
        // Parsed as an agent parses a view entry: the least an agent does to apply a change.
        nc.subscribe(`${spec.raw}.${round}`, {
          callback: (err, msg) => {
            if (err !== null) return;
            msg.json();
            stats.count++;
            stats.last = now();
          },
        });
      }
      await Promise.all([...connectionOf.values()].map((nc) => nc.flush()));
      process.send?.({ rawReady: true });
    })();
  } else if (m.rawProgress) {
    process.send?.({ rawProgress: [...raw] });
  } else if (m.report) {
    process.send?.({ arrivals: [...arrivals], perAgent: [...perAgent], rssBytes: process.memoryUsage().rss, resyncs: [...resyncs] }, () => {
      stop.abort();
      void Promise.all([...connectionOf.values()].map((nc) => nc.close())).finally(() => process.exit(0));
    });
  }
});
