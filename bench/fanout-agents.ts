// Fan-out worker (a child of bench/fanout.bench.ts): hosts many lightweight agents, each with
// its own NATS connection and its own watch of one zone's views (or of every view, the
// unscoped agent). An agent applies each entry to its in-memory view state and records when
// each revision arrived and how many bytes it received after its initial set. Renders no rules.
//
// Protocol (IPC): parent sends { agents: [{ id, filter }], url, bucket }; worker answers
// { ready } once every agent has its initial set, then on { report } answers with, per
// revision, the latest arrival and how many agents got it, and per agent the bytes and
// entries received after the initial set.

import { performance } from 'node:perf_hooks';
import type { KV, NatsConnection } from '@slicemesh/nats';
import { connectNats, kvWatchJson, openKv } from '@slicemesh/nats';

interface AgentSpec {
  readonly id: string;
  readonly filter: string;
}
interface Start {
  readonly agents: readonly AgentSpec[];
  readonly url: string;
  readonly bucket: string;
}

const now = (): number => performance.timeOrigin + performance.now();
/** revision → [latest arrival (epoch ms), agents that applied it]. */
const arrivals = new Map<number, [number, number]>();
const perAgent = new Map<string, { bytes: number; entries: number }>();
const connections: NatsConnection[] = [];
const stop = new AbortController();

async function runAgent(spec: AgentSpec, url: string, bucket: string, ready: () => void): Promise<void> {
  const nc = await connectNats({ url, name: `fanout-${spec.id}`, timeoutMs: 60_000 });
  connections.push(nc);
  const kv: KV = await openKv(nc, bucket);
  const view = new Map<string, unknown>(); // the agent's proxy state, keyed like the bucket
  const stats = { bytes: 0, entries: 0 };
  perAgent.set(spec.id, stats);
  let initial = true;
  for await (const c of kvWatchJson(kv, { key: spec.filter, signal: stop.signal, onInitialDone: () => ((initial = false), ready()) })) {
    if (c.op === 'PUT') view.set(c.key, c.value);
    else view.delete(c.key);
    if (initial) continue;
    const t = now();
    stats.entries++;
    stats.bytes += c.key.length + (c.op === 'PUT' ? JSON.stringify(c.value).length : 0);
    const a = arrivals.get(c.revision);
    if (a === undefined) arrivals.set(c.revision, [t, 1]);
    else {
      a[0] = Math.max(a[0], t);
      a[1]++;
    }
  }
}

// The bench process went away (finished or crashed): nothing left to report to.
process.on('disconnect', () => process.exit(0));

process.on('message', (msg: unknown) => {
  const m = msg as Partial<Start> & { report?: boolean };
  if (m.agents !== undefined && m.url !== undefined && m.bucket !== undefined) {
    const { agents, url, bucket } = m as Start;
    let pending = agents.length;
    const ready = () => {
      if (--pending === 0) process.send?.({ ready: true, rssBytes: process.memoryUsage().rss });
    };
    // Connect in small waves: 250 simultaneous connects and watch setups swamp a 2-core box.
    void (async () => {
      for (let i = 0; i < agents.length; i += 25) {
        await Promise.all(agents.slice(i, i + 25).map((a) => new Promise<void>((resolve) => {
          void runAgent(a, url, bucket, () => { ready(); resolve(); }).catch((e: unknown) => {
            process.send?.({ error: `${a.id}: ${e instanceof Error ? e.message : String(e)}` });
            resolve();
          });
        })));
      }
    })();
  } else if (m.report) {
    process.send?.({ arrivals: [...arrivals], perAgent: [...perAgent], rssBytes: process.memoryUsage().rss }, () => {
      stop.abort();
      void Promise.all(connections.map((nc) => nc.close())).finally(() => process.exit(0));
    });
  }
});
