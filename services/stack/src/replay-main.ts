// `replay`: rebuild the slices of a (kept) run from its KUBE log and compare with its schema.
// Run: npm run replay -- --run-id <id> (dist/replay.js), or node services/stack/src/replay-main.ts; --keep-state names without --run-id
// Exit: 0 identical, 1 differences (listed), 2 bad settings or servers unreachable.

import { createDb } from '@slicemesh/db';
import { NATS_URL_SETTING, connectNats, jetstream } from '@slicemesh/nats';
import { ConfigError, defineConfig, helpRequested } from '@slicemesh/runtime';
import { PERSISTENT_RUN, freshRunNames } from './run-names.ts';
import type { RunNames } from './run-names.ts';
import { replayIntoScratch } from './replay.ts';

const replayConfig = defineConfig({
  natsUrl: NATS_URL_SETTING,
  databaseUrl: { env: 'DATABASE_URL', flag: '--database-url', default: 'postgres://postgres@127.0.0.1:5432/postgres', parse: 'url', doc: 'Postgres server holding the run.' },
  runId: { env: 'STACK_RUN_ID', flag: '--run-id', optional: true, parse: 'string', doc: 'The run `npm start -- --cleanup=false` printed; unset: the persistent (--keep-state) names.' },
  cluster: { env: 'STACK_CLUSTER', flag: '--cluster', default: 'local', parse: 'string', doc: 'Cluster id of the run.' },
  partitions: { env: 'STACK_PARTITIONS', flag: '--partitions', default: 2, min: 1, max: 64, parse: 'int', doc: 'KUBE partitions of the run.' },
  keepSchema: { env: 'STACK_KEEP_SCHEMA', flag: '--keep-schema', default: false, parse: 'bool', doc: 'Keep the scratch schema holding the replayed slices.' },
});

async function main(argv: readonly string[]): Promise<number> {
  if (helpRequested(argv)) {
    process.stdout.write(`Usage: replay [--run-id ID] [settings]\n\nRebuilds every Service's slices from the KUBE log and compares them with the live schema.\n\n${replayConfig.usage()}`);
    return 0;
  }
  let config;
  let run: RunNames;
  try {
    config = replayConfig.parse(argv, process.env);
    run = config.runId === undefined ? PERSISTENT_RUN : freshRunNames(config.runId);
  } catch (err) {
    if (!(err instanceof ConfigError) && !(err instanceof Error)) throw err;
    process.stderr.write(`replay: ${err.message}\n`);
    return 2;
  }
  let nc;
  let h;
  try {
    nc = await connectNats({ url: config.natsUrl, name: 'slicemesh-replay' });
    h = await createDb({ url: config.databaseUrl, schema: run.schema, max: 2 });
  } catch (err) {
    process.stderr.write(`replay: ${err instanceof Error ? err.message : String(err)}\n`);
    await nc?.close();
    return 2;
  }
  try {
    const r = await replayIntoScratch({
      db: h.db, liveSchema: run.schema, databaseUrl: config.databaseUrl, js: jetstream(nc), names: run.names,
      cluster: config.cluster, partitions: config.partitions, keepSchema: config.keepSchema,
    });
    for (const s of r.services) process.stdout.write(`${s.problems.length === 0 ? 'ok  ' : 'DIFF'} ${s.service}: ${s.steps} reconciles replayed, ${s.slices} slices\n`);
    for (const p of r.problems) process.stdout.write(`  ${p}\n`);
    const slices = r.services.reduce((n, s) => n + s.slices, 0);
    process.stdout.write(`replay: ${r.ok ? 'identical' : `${r.problems.length} differences`} — ${r.services.length} services, ${slices} slices (schema ${run.schema}${config.keepSchema ? `, replayed into ${r.scratchSchema}` : ''})\n`);
    return r.ok ? 0 : 1;
  } finally {
    await nc.close();
    await h.close();
  }
}

process.exit(await main(process.argv.slice(2)));
