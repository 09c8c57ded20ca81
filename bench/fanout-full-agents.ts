// Full agents of the fan-out section (a child of bench/fanout.bench.ts), in a process of their
// own so that their rendering does not stall the bench's generator and clocks: each is
// startProxyAgent with the dry-run backend (default MIN_SYNC_PERIOD 1 s), its own NATS
// connection, its zone given (NODE_ZONE), and records when each view revision reached it and
// when it wrote a rules file (wall clock, epoch ms).
//
// Protocol (IPC): parent sends { agents: [{ node, zone }], url, cluster, names: { svc, views,
// kube, prefix } }; worker answers { ready } once every agent is ready; on { progress } the
// newest view revision each agent received; on { report }, per agent its arrivals and writes;
// then it stops the agents and exits.

import type { KvChange, NatsConnection } from '@slicemesh/nats';
import { connectNats } from '@slicemesh/nats';
import type { KvChangeSource, ProxyAgentHandle } from '@slicemesh/proxy-agent';
import { kvSource, parseProxyAgentConfig, startProxyAgent } from '@slicemesh/proxy-agent';
import { createLogger } from '@slicemesh/runtime';

interface Start {
  readonly agents: readonly { readonly node: string; readonly zone: string }[];
  readonly url: string;
  readonly cluster: string;
  readonly names: { readonly svc: string; readonly views: string; readonly kube: string; readonly prefix: string };
}

interface Running {
  readonly node: string;
  readonly arrivals: Map<number, number>;
  readonly writes: number[];
  readonly agent: ProxyAgentHandle;
  readonly nc: NatsConnection;
}

const running: Running[] = [];

async function startFullAgent(s: Start, node: string, zone: string): Promise<Running> {
  const nc = await connectNats({ url: s.url, name: `fanout-full-${node}`, timeoutMs: 60_000 });
  const arrivals = new Map<number, number>();
  const writes: number[] = [];
  // The agent's own sources (the shared feeds), with each view revision's arrival recorded.
  const source = (bucket: string, record: boolean): KvChangeSource => ({
    async *watch(filter, opts): AsyncGenerator<KvChange> {
      for await (const c of kvSource(nc, bucket, s.cluster).watch(filter, opts)) {
        if (record) arrivals.set(c.revision, Date.now());
        yield c;
      }
    },
  });
  const config = parseProxyAgentConfig([], {
    NODE_NAME: node, NODE_ZONE: zone, CLUSTER: s.cluster, BACKEND: 'dry-run', POD_CIDR: '10.128.0.0/9', NATS_URL: s.url,
    KUBE_STREAM: s.names.kube, SUBJECT_PREFIX: s.names.prefix, SVC_BUCKET: s.names.svc, VIEWS_BUCKET: s.names.views,
  });
  const agent = startProxyAgent(config, {
    sources: { services: source(s.names.svc, false), views: source(s.names.views, true) },
    log: createLogger({ service: 'proxy-agent', level: 'silent' }),
    writeFile: async () => void writes.push(Date.now()),
  });
  await agent.ready;
  return { node, arrivals, writes, agent, nc };
}

// The bench process went away (finished or crashed): nothing left to report to.
process.on('disconnect', () => process.exit(0));

process.on('message', (msg: unknown) => {
  const m = msg as Partial<Start> & { report?: boolean; progress?: boolean };
  if (m.agents !== undefined) {
    const s = m as Start;
    void (async () => {
      try {
        for (const a of s.agents) running.push(await startFullAgent(s, a.node, a.zone));
        process.send?.({ ready: true });
      } catch (e) {
        process.send?.({ error: e instanceof Error ? e.message : String(e) });
      }
    })();
  } else if (m.progress) {
    process.send?.({ progress: running.map((r) => [r.node, Math.max(0, ...r.arrivals.keys())]) });
  } else if (m.report) {
    const report = running.map((r) => ({ node: r.node, arrivals: [...r.arrivals], writes: r.writes }));
    process.send?.({ full: report }, () => {
      void (async () => {
        for (const r of running) {
          await r.agent.close().catch(() => {});
          await r.nc.close().catch(() => {});
        }
      })().finally(() => process.exit(0));
    });
  }
});
