// `npm run bench [-- --section NAME] [-- --quick] [-- --json]`: prints the figures of every section.
// With --json, stdout's last line is one JSON object of the backbone section's figures (see
// bench/summary.ts for its keys), each figure that is null with a line on stderr saying why,
// plus the data-plane figures of the proxy section (`iptables_full_ratio`, `nft_partial_ratio`)
// and the fanout section (`agents`, `steady_`/`burst_` `p50_ms`, `p99_ms`, `max_ms` from the
// pod's Ready transition, `bytes_per_agent_scoped`, `bytes_per_agent_unscoped` (kube-proxy's
// way: every EndpointSlice, whole), `bytes_per_agent_unfiltered_view`, the rates `steady_rate`,
// `burst_rate` the generator achieved and `burst_pipeline_rate`, and the burst's fan-out against
// this machine's floor, `burst_fanout_ms` and `raw_fanout_floor_ms`).

import { parseArgs } from 'node:util';
import type { BackboneReport } from './backbone.bench.ts';
import { peakMemory } from './harness.ts';
import { jsonSummary } from './summary.ts';

const { values } = parseArgs({
  options: { section: { type: 'string', multiple: true }, quick: { type: 'boolean', default: false }, json: { type: 'boolean', default: false } },
});
let backbone: BackboneReport | undefined;
/** Figures of the data-plane sections, merged into the --json line. */
const dataPlane: Record<string, number> = {};
// Each section is loaded only when it runs: one section's imports cannot stop another.
const sections: Record<string, (o: { quick: boolean }) => Promise<void>> = {
  slicing: async (o) => (await import('./slicing.bench.ts')).runSlicingBench(o),
  topology: async (o) => (await import('./topology.bench.ts')).runTopologyBench(o),
  backbone: async (o) => {
    backbone = await (await import('./backbone.bench.ts')).runBackboneBench(o);
  },
  proxy: async (o) => {
    Object.assign(dataPlane, await (await import('./proxy.bench.ts')).runProxyBench(o));
  },
  fanout: async (o) => {
    Object.assign(dataPlane, await (await import('./fanout.bench.ts')).runFanoutBench(o));
  },
  startup: async (o) => (await import('./startup.bench.ts')).runStartupBench(o),
  publisher: async (o) => (await import('./publisher.bench.ts')).runPublisherBench(o),
  replay: async (o) => (await import('./replay.bench.ts')).runReplayBench(o),
};
const wanted = values.section ?? Object.keys(sections);
for (const name of wanted) {
  const run = sections[name];
  if (!run) {
    process.stderr.write(`bench: unknown section ${name} (have: ${Object.keys(sections).join(', ')})\n`);
    process.exit(2);
  }
  await run({ quick: values.quick ?? false });
}
const mem = peakMemory();
process.stdout.write(`\npeak memory: rss ${mem.rssMiB.toFixed(0)} MiB, heap ${mem.heapMiB.toFixed(0)} MiB (node ${process.version})\n`);
if (values.json && backbone === undefined && Object.keys(dataPlane).length > 0) {
  process.stdout.write(`${JSON.stringify(dataPlane)}\n`);
} else if (values.json) {
  const summary = jsonSummary(backbone?.figures ?? {}, backbone?.reasons ?? {});
  if (backbone === undefined) process.stderr.write('bench: --json reports the backbone section, which did not run (add --section backbone)\n');
  for (const line of summary.missing) process.stderr.write(`bench: ${line}\n`);
  process.stdout.write(`${JSON.stringify({ ...(JSON.parse(summary.line) as object), ...dataPlane })}\n`);
}
