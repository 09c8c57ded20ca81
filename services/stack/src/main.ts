// `npm start`: the whole stack on this machine. Composition only: settings → preflight →
// startStack → live summary → shutdown (Ctrl-C, SIGTERM or --duration).
// Run: npm start -- [--flag value ...] (dist/stack.js), or from the sources: node services/stack/src/main.ts

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError, helpRequested, onShutdown } from '@slicemesh/runtime';
import { DEFAULT_SCENARIO_FILE } from '@slicemesh/cluster-sim';
import type { LocalNatsCluster, PermissionScope } from '@slicemesh/nats';
import { roleSeedFile, startLocalNatsCluster, writeNatsAuth } from '@slicemesh/nats';
import { localClusterReplicas, natsSettingsConflict, stackConfig } from './config.ts';
import type { StackConfig } from './config.ts';
import { preflight, preflightMessage } from './preflight.ts';
import { formatReplicas, hasReplicas } from './replicas.ts';
import { PERSISTENT_RUN, freshRunNames, newRunId } from './run-names.ts';
import { deleteRunState } from './run-state.ts';
import type { Stack } from './start-stack.ts';
import { startStack } from './start-stack.ts';
import { formatStatus } from './status.ts';
import type { StackWebView } from './web-view.ts';
import { startWebView } from './web-view.ts';
import { verifyAll } from './verify-all.ts';

const out = (line: string): void => void process.stdout.write(`${line}\n`);
const err = (line: string): void => void process.stderr.write(`${line}\n`);

/** The stack's own NATS server(s), their store directory, whether that goes at exit, and the keys of a locked-down one. */
interface OwnNats {
  readonly cluster: LocalNatsCluster;
  readonly dir: string;
  readonly keep: boolean;
  /** Replicas of every stream and bucket: 3 on a cluster, unset on one server. */
  readonly replicas: number | undefined;
  /** The role seeds (`<role>.nk`) when locked down. */
  readonly authDir: string | undefined;
}

/**
 * Starts `size` nats-servers (clustered from 3) on free ports with their stores in a temporary
 * directory (<runDir>/nats-cluster with --keep-state, kept for the next run) and waits until
 * JetStream can place replicated streams. Locked down (`scope` given): fresh keys per role in
 * `<dir>/auth` (rotated on every start), the authorization block in each server's config.
 */
async function startOwnNats(size: number, keep: boolean, runDir: string, scope: PermissionScope | undefined): Promise<OwnNats> {
  const dir = keep ? join(runDir, 'nats-cluster') : mkdtempSync(join(tmpdir(), 'slicemesh-nats-'));
  let cluster: LocalNatsCluster | undefined;
  try {
    const auth = scope === undefined ? undefined : writeNatsAuth({ dir: join(dir, 'auth'), scope, force: true });
    const authorization = auth === undefined ? {} : { authorization: { block: readFileSync(auth.authConf, 'utf8'), seedFile: roleSeedFile(auth.dir, 'admin') } };
    cluster = await startLocalNatsCluster({ size, dir, ...authorization });
    if (size > 1) await cluster.waitForMeta(60_000);
    return { cluster, dir, keep, replicas: size > 1 ? localClusterReplicas(size) : undefined, authDir: auth?.dir };
  } catch (e) {
    await cluster?.stop().catch(() => {});
    if (!keep) rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

/** Stops the servers and removes their store unless kept. Idempotent. */
async function stopOwnNats(own: OwnNats | undefined): Promise<void> {
  if (own === undefined) return;
  await own.cluster.stop().catch(() => {});
  if (!own.keep) rmSync(own.dir, { recursive: true, force: true });
}

function banner(stack: Stack, c: StackConfig, runDir: string, web: StackWebView | undefined, own: OwnNats | undefined): void {
  const n = stack.run.names;
  const scenario = c.scenario ?? DEFAULT_SCENARIO_FILE;
  out(`slicemesh stack — cluster '${c.cluster}', scenario ${scenario} at speed ${c.speed}${c.processes ? ', services as child processes' : ''}`);
  out(`  run         ${stack.run.persistent ? 'persistent state (--keep-state)' : `${stack.run.id}${c.cleanup ? ' (removed at exit)' : ' (kept at exit)'}`}`);
  out(`  kube API    ${stack.urls.kube}   e.g. kubectl --server ${stack.urls.kube} get pods -A`);
  if (own !== undefined) {
    const n = own.cluster.servers.length;
    out(`  NATS servers ${n > 1 ? `local cluster of ${n}` : 'its own server'}: ${own.cluster.servers.map((x) => `${x.name} ${x.url}`).join(', ')}`);
    out(`              ${own.replicas !== undefined ? `every stream and bucket with ${own.replicas} replicas; ` : ''}store ${own.dir} (${own.keep ? 'kept' : 'removed at exit'}), server logs ${own.dir}/<server>.log; stopped at exit`);
  }
  const authDir = own?.authDir ?? c.natsAuthDir;
  if (authDir !== undefined) {
    out(`  NATS auth   locked down: one nkey user per role, least privilege; seeds ${authDir}/<role>.nk${own?.authDir !== undefined ? ' (new every run)' : ''}`);
    out(`              read the log as the reader role: npx slicemesh log … --nats-url ${stack.urls.nats} --nats-nkey-seed-file ${join(authDir, 'reader.nk')}`);
  } else out('  NATS auth   none (--nats-auth none): any client of the server may write the log');
  out(`  NATS        ${stack.urls.nats}   streams ${[n.kube, n.slices, n.dlq, ...(n.events === undefined ? [] : [n.events])].join(' ')}, buckets ${n.svc} ${n.views} ${n.hinted}${n.prefix ? `, subjects ${n.prefix}…` : ''}`);
  out(`  Postgres    ${c.databaseUrl}   schema ${stack.run.schema}`);
  if (hasReplicas(stack.replicas)) {
    const names = stack.components().map((x) => x.name).filter((x) => /^(slicer|hints|watcher)(-\d+)?$/.test(x));
    out(`  replicas    ${formatReplicas(stack.replicas)}: ${names.join(' ')} (slicers and hints services share the partitions by lease; watchers publish active-active)`);
  }
  out(`  publisher   ${c.publisherMode === 'off' ? 'off' : c.publisherMode === 'write' ? `write: kubectl --server ${stack.urls.kube} get endpointslices -A` : 'shadow: counts what it would write, writes nothing'}`);
  out(`  agents      ${stack.agents.length} dry-run (${c.agents}): rules in ${runDir}/<node>.rules`);
  out(`  logs        ${join(runDir, 'logs')}/<component>.log`);
  if (web !== undefined) out(`  web view    ${web.url}   the log at any point: services, slices, zones, nodes, why${web.busyPort !== undefined ? ` (port ${web.busyPort} was busy)` : ''}`);
}

async function main(argv: readonly string[]): Promise<void> {
  if (helpRequested(argv)) {
    out(`Usage: npm start -- [--flag value ...]\n\nRuns cluster-sim, the watcher, the slicer, the hints service, the publisher and dry-run proxy agents against NATS and Postgres.\n\n${stackConfig.usage()}`);
    return;
  }
  let c: StackConfig;
  try {
    c = stackConfig.parse(argv, process.env);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    err(`slicemesh: ${e.message}`);
    process.exit(2);
  }
  const conflict = natsSettingsConflict(argv, c);
  if (conflict !== undefined) {
    err(`slicemesh: ${conflict}`);
    process.exit(2);
  }
  const runDir = resolve(c.runDir);
  const run = c.keepState ? PERSISTENT_RUN : freshRunNames(newRunId(Date.now()));
  // Its own servers: a local cluster, or one locked-down server (it cannot lock down yours).
  const ownServers = c.natsCluster > 1 || (c.natsAuth === 'nkeys' && c.natsAuthDir === undefined);
  let own: OwnNats | undefined;
  if (ownServers) {
    try {
      own = await startOwnNats(c.natsCluster, c.keepState, runDir, c.natsAuth === 'nkeys' ? { cluster: c.cluster, names: run.names } : undefined);
    } catch (e) {
      err(`slicemesh: cannot start ${c.natsCluster > 1 ? `a local NATS cluster of ${c.natsCluster}` : 'a local NATS server'}: ${e instanceof Error ? e.message : String(e)}`);
      process.exit(1);
    }
  }
  const natsUrl = own?.cluster.url ?? c.natsUrl;
  const natsAuthDir = own?.authDir ?? c.natsAuthDir;
  /** Exits after stopping the stack's own NATS servers (and removing their store). */
  const exitNow = async (code: number): Promise<never> => {
    await stopOwnNats(own);
    process.exit(code);
  };
  const checked = await preflight({ natsUrl, databaseUrl: c.databaseUrl, ...(natsAuthDir !== undefined ? { natsAuthDir } : {}) });
  if (checked.problems.length > 0) {
    err(preflightMessage(checked.problems));
    await exitNow(1);
  }

  const t0 = Date.now();
  let stack: Stack;
  try {
    stack = await startStack({
      natsUrl,
      ...(own?.replicas !== undefined ? { natsReplicas: own.replicas } : {}),
      ...(natsAuthDir !== undefined ? { natsAuthDir } : {}),
      databaseUrl: c.databaseUrl,
      run,
      cluster: c.cluster,
      partitions: c.partitions,
      ...(c.scenario !== undefined ? { scenario: resolve(c.scenario) } : {}),
      speed: c.speed,
      ...(c.seed !== undefined ? { seed: c.seed } : {}),
      simPort: c.simPort,
      agents: c.agents,
      publisherMode: c.publisherMode,
      processes: c.processes,
      runDir,
      logDir: join(runDir, 'logs'),
      logLevel: c.logLevel,
      batchPeriodMs: c.batchPeriod,
      replicas: c.replicas,
    });
  } catch (e) {
    err(`slicemesh: cannot start the stack: ${e instanceof Error ? e.message : String(e)}`);
    if (!run.persistent) await deleteRunState(natsUrl, c.databaseUrl, run, natsAuthDir).catch(() => {});
    return exitNow(1);
  }
  // The web view is a window on the log, not part of the pipeline: without it the stack runs on.
  const web = await startWebView({ natsUrl, ...(natsAuthDir !== undefined ? { natsAuthDir } : {}), databaseUrl: c.databaseUrl, run, cluster: c.cluster, port: c.uiPort }).catch((e: unknown) => {
    err(`slicemesh: the web view did not start: ${e instanceof Error ? e.message : String(e)}`);
    return undefined;
  });
  banner(stack, c, runDir, web, own);

  let failed = false;
  const summary = async (): Promise<void> => {
    try {
      out(formatStatus(await stack.status()));
    } catch (e) {
      out(`(summary unavailable: ${e instanceof Error ? e.message : String(e)})`);
    }
  };
  const timer = setInterval(() => void summary(), c.summaryInterval);
  const hooks = [
    async () => clearInterval(timer),
    async () => {
      if (!c.verify) return;
      out('verify: freezing the cluster, waiting until settled, then checking replay, truth (the API\'s final state) and agents…');
      try {
        stack.sim?.driver.stop(); // no more changes, so the pipeline can settle
        await stack.settled({ timeoutMs: 120_000 });
        const r = await verifyAll(stack);
        const details = [r.details.replay, r.details.truth, r.details.agents];
        r.summary.forEach((line, i) => {
          out(line);
          const problems = details[i] ?? [];
          for (const p of problems.slice(0, 20)) out(`  ${p}`);
          if (problems.length > 20) out(`  … and ${problems.length - 20} more`);
        });
        if (!(r.replay && r.truth && r.agents)) failed = true;
      } catch (e) {
        failed = true;
        out(`verify: failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    },
    summary,
    async () => web?.close(),
    () => stack.close(),
    async () => {
      if (run.persistent) return;
      if (c.cleanup) await deleteRunState(natsUrl, c.databaseUrl, run, natsAuthDir);
      else out(`kept: replay with  npm run replay -- --run-id ${run.id} --cluster ${c.cluster} --partitions ${c.partitions}`);
    },
    async () => {
      if (own === undefined) return;
      await stopOwnNats(own);
      out(`NATS ${own.cluster.servers.length > 1 ? 'cluster' : 'server'} stopped${own.keep ? ` (store kept in ${own.dir})` : ''}`);
    },
    async () => out('stopped'),
  ];
  const shutdown = onShutdown(hooks, { timeoutMs: 180_000, exit: (code) => process.exit(failed ? 1 : code) });

  stack.ready.then(
    () => out(`ready in ${((Date.now() - t0) / 1000).toFixed(1)} s — summary every ${c.summaryInterval / 1000} s, Ctrl-C stops`),
    (e: unknown) => {
      failed = true;
      err(`slicemesh: ${e instanceof Error ? e.message : String(e)} (see ${join(runDir, 'logs')})`);
      void shutdown.trigger('startup failed');
    },
  );
  if (c.duration > 0) setTimeout(() => void shutdown.trigger(`--duration ${c.duration / 1000}s elapsed`), c.duration).unref();
}

await main(process.argv.slice(2));
