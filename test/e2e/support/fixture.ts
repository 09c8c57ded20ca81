// One isolated stack per test: unique streams, buckets and subject prefix (withJetStream), a
// fresh schema (withTestDb), a temporary run directory; plus the waits and the comparison every
// e2e test ends with.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, vi } from 'vitest';
import type { ClusterSim } from '@slicemesh/cluster-sim';
import { withTestDb } from '@slicemesh/db/testing';
import type { TestDb } from '@slicemesh/db/testing';
import type { DeadLetterBody, JetStreamManager } from '@slicemesh/nats';
import { jetstream } from '@slicemesh/nats';
import { withJetStream } from '@slicemesh/nats/testing';
import type { JetStreamFixture } from '@slicemesh/nats/testing';
import type { StoredMessage } from '../../../services/watcher/src/testing/stream-state.ts';
import { replayIntoScratch, startStack } from '../../../services/stack/src/index.ts';
import type { Stack, StackOptions } from '../../../services/stack/src/index.ts';
import { compareLive, expectedFrom, liveState, simObjects } from './oracle.ts';

export interface StackFixture {
  readonly stack: Stack;
  readonly js: JetStreamFixture;
  readonly db: TestDb;
  /** Temporary directory: the scenario file, rules files and logs (kept when E2E_KEEP_LOGS is set). */
  readonly dir: string;
  close(): Promise<void>;
}

export type FixtureOptions = Omit<StackOptions, 'natsUrl' | 'databaseUrl' | 'run' | 'runDir' | 'scenario'> & {
  /** Scenario YAML text (written to a file the stack loads), unless `sim` is given. */
  readonly scenarioYaml?: string;
};

/** Starts a stack on fresh names; await `stack.ready` yourself. */
export async function startFixture(opts: FixtureOptions): Promise<StackFixture> {
  const js = await withJetStream();
  const db = await withTestDb();
  const dir = await mkdtemp(join(tmpdir(), 'slicemesh-e2e-'));
  const { scenarioYaml, ...rest } = opts;
  let scenario: string | undefined;
  if (scenarioYaml !== undefined) await writeFile((scenario = join(dir, 'scenario.yaml')), scenarioYaml);
  let stack: Stack;
  try {
    stack = await startStack({
      natsUrl: js.url,
      databaseUrl: db.url,
      run: { id: js.id, names: js.names, schema: db.schema, persistent: false },
      runDir: join(dir, 'run'),
      logDir: join(dir, 'logs'),
      logLevel: 'info',
      ...(scenario !== undefined ? { scenario } : {}),
      ...rest,
    });
  } catch (err) {
    await db.close();
    await js.cleanup();
    throw err;
  }
  return {
    stack, js, db, dir,
    close: async () => {
      await stack.close();
      await db.close();
      await js.cleanup();
      if (process.env['E2E_KEEP_LOGS']) process.stdout.write(`e2e logs kept in ${dir}\n`);
      else await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves once the scenario's durationSeconds has passed (churn stopped, no further steps). */
export async function scenarioFinished(sim: ClusterSim, timeoutMs = 120_000): Promise<void> {
  await vi.waitFor(() => expect(sim.driver.finished).toBe(true), { timeout: timeoutMs, interval: 200 });
}

/**
 * Settles the stack, then asserts that Postgres and KV equal the offline answer for the
 * simulator's current state (objects named by `exclude` left out); retried for `timeoutMs`
 * because the last hints debounce may still be running. Returns the compared expectation.
 */
export async function expectLiveEqualsOffline(f: StackFixture, exclude: (name: string) => boolean = () => false, timeoutMs = 20_000): Promise<ReturnType<typeof expectedFrom>> {
  const { stack } = f;
  const sim = stack.sim as ClusterSim;
  await stack.settled({ timeoutMs: 90_000 });
  let problems: string[] = [];
  let expected = expectedFrom(simObjects(sim, exclude), stack.layout.cluster);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    expected = expectedFrom(simObjects(sim, exclude), stack.layout.cluster);
    problems = compareLive(expected, await liveState(stack.db, stack.nc, stack.run.names.views, stack.layout.cluster));
    if (problems.length === 0 || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  expect(problems).toEqual([]);
  expect(expected.slices.size).toBeGreaterThan(0);
  expect(expected.views.size).toBeGreaterThan(0);
  return expected;
}

/** The replay check over the whole run: every Service's reconciles re-planned from KUBE, tables equal. */
export async function expectReplayIdentical(f: StackFixture): Promise<void> {
  const { stack } = f;
  const r = await replayIntoScratch({
    db: stack.db, liveSchema: stack.run.schema, databaseUrl: f.db.url, js: jetstream(stack.nc), names: stack.run.names,
    cluster: stack.layout.cluster, partitions: stack.layout.partitions,
  });
  expect(r.problems).toEqual([]);
  expect(r.services.length).toBeGreaterThan(0);
}

/**
 * Every message of `stream` in sequence order whose body is JSON (small test streams only);
 * a body that is not JSON (a test's rogue message) is left out.
 */
export async function readJsonStream<T>(jsm: JetStreamManager, stream: string): Promise<StoredMessage<T>[]> {
  const info = await jsm.streams.info(stream);
  const out: StoredMessage<T>[] = [];
  for (let seq = info.state.first_seq; info.state.messages > 0 && seq <= info.state.last_seq; seq++) {
    const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (m === null) continue;
    let body: T;
    try {
      body = m.json<T>();
    } catch {
      continue;
    }
    out.push({ seq: m.seq, subject: m.subject, msgID: m.header.get('Nats-Msg-Id'), body });
  }
  return out;
}

export function readDeadLetters(f: StackFixture): Promise<StoredMessage<DeadLetterBody>[]> {
  return readJsonStream<DeadLetterBody>(f.js.jsm, f.stack.run.names.dlq);
}

export function readStreamOf<T>(f: StackFixture, stream: string): Promise<StoredMessage<T>[]> {
  return readJsonStream<T>(f.js.jsm, stream);
}
