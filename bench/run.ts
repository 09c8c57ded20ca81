// `npm run bench [-- --section NAME] [-- --quick]`: prints the figures of every section.

import { parseArgs } from 'node:util';
import { runBackboneBench } from './backbone.bench.ts';
import { peakMemory } from './harness.ts';
import { runProxyBench } from './proxy.bench.ts';
import { runSlicingBench } from './slicing.bench.ts';
import { runTopologyBench } from './topology.bench.ts';

const { values } = parseArgs({ options: { section: { type: 'string', multiple: true }, quick: { type: 'boolean', default: false } } });
const sections: Record<string, (o: { quick: boolean }) => void | Promise<void>> = {
  slicing: runSlicingBench,
  topology: runTopologyBench,
  backbone: runBackboneBench,
  proxy: runProxyBench,
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
