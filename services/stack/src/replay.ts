// `replay`: rebuild every Service's slices from the KUBE log into a fresh schema and compare them
// with the live schema. Each Service goes through the slicer's replay check (replayServiceLog:
// every recorded reconcile re-planned from the log at the view it read, its writes and SLICES
// message compared); the replayed slices are written to the scratch schema, and the two
// endpoint_slices tables must then hold the same slices, names included.
//
// Once KUBE was compacted (kube_log_cuts has a cut), each Service's replay starts from the newest
// snapshot of its partition and checks only the reconciles after it (see the slicer's
// replay.ts); `fromSnapshot` says so per Service.

import { randomBytes } from 'node:crypto';
import type { EndpointSlice } from '@slicemesh/model';
import type { Db } from '@slicemesh/db';
import { commitSliceWrites, createDb, dropSchema, loadClusterSlices, migrateToLatest, reconciledServiceKeys } from '@slicemesh/db';
import type { BackboneNames, JetStreamClient } from '@slicemesh/nats';
import { comparableSlice, replayServiceLog, slicerConfig } from '@slicemesh/slicer';

export interface ReplayOptions {
  /** The live schema (read only). */
  readonly db: Db;
  readonly liveSchema: string;
  readonly databaseUrl: string;
  readonly js: JetStreamClient;
  readonly names: BackboneNames;
  readonly cluster: string;
  readonly partitions: number;
  /** The slicer's settings; default to its defaults. */
  readonly managedBy?: string;
  readonly maxEndpointsPerSlice?: number;
  /** Keep the scratch schema for inspection. Defaults to false (dropped). */
  readonly keepSchema?: boolean;
}

export interface ServiceReplay {
  /** `<namespace>/<name>`. */
  readonly service: string;
  /** Recorded reconciles replayed. */
  readonly steps: number;
  readonly slices: number;
  readonly problems: readonly string[];
  /** The snapshot sequence the replay started from; absent when it started from the first message. */
  readonly fromSnapshot?: number;
}

export interface ReplayResult {
  readonly ok: boolean;
  /** Where the replayed slices were written (dropped unless keepSchema). */
  readonly scratchSchema: string;
  readonly services: readonly ServiceReplay[];
  /** Differences between the live and the scratch endpoint_slices, then every Service's problems. */
  readonly problems: readonly string[];
}

/** Differences between two slice tables keyed `<namespace>/<name>`, trigger-time annotation ignored; [] when equal. */
export function compareSliceTables(live: ReadonlyMap<string, EndpointSlice>, replayed: ReadonlyMap<string, EndpointSlice>): string[] {
  const problems: string[] = [];
  for (const key of [...new Set([...live.keys(), ...replayed.keys()])].sort()) {
    const a = live.get(key);
    const b = replayed.get(key);
    if (b === undefined) problems.push(`slice ${key} is live but the replay did not produce it`);
    else if (a === undefined) problems.push(`the replay produced slice ${key}, which is not live`);
    else if (comparableSlice(a) !== comparableSlice(b)) problems.push(`slice ${key} differs: live ${comparableSlice(a)} replayed ${comparableSlice(b)}`);
  }
  return problems;
}

/** A scratch schema name derived from the live one (≤ 63 characters). */
export function scratchSchemaName(live: string, random: string = randomBytes(3).toString('hex')): string {
  return `${live.slice(0, 63 - 15)}_replay_${random}`;
}

/** Replays every Service (see the file comment). Never throws for differences; they are in `problems`. */
export async function replayIntoScratch(opts: ReplayOptions): Promise<ReplayResult> {
  const defaults = slicerConfig.parse([], {});
  const deps = {
    db: opts.db,
    js: opts.js,
    names: opts.names,
    cluster: opts.cluster,
    partitions: opts.partitions,
    managedBy: opts.managedBy ?? defaults.managedBy,
    maxEndpointsPerSlice: opts.maxEndpointsPerSlice ?? defaults.maxEndpointsPerSlice,
  };
  const scratchSchema = scratchSchemaName(opts.liveSchema);
  const scratch = await createDb({ url: opts.databaseUrl, schema: scratchSchema, max: 2 });
  try {
    await migrateToLatest(scratch.db, scratchSchema);
    const services: ServiceReplay[] = [];
    for (const key of await reconciledServiceKeys(opts.db, opts.cluster)) {
      const report = await replayServiceLog(deps, key);
      if (report.slices.length > 0) {
        await commitSliceWrites(scratch.db, { cluster: opts.cluster, upserts: report.slices, deletes: [], outbox: [], records: [] });
      }
      services.push({
        service: `${key.namespace}/${key.name}`,
        steps: report.steps.length,
        slices: report.slices.length,
        problems: report.problems,
        ...(report.from !== undefined ? { fromSnapshot: report.from.seq } : {}),
      });
    }
    const tableProblems = compareSliceTables(await loadClusterSlices(opts.db, opts.cluster), await loadClusterSlices(scratch.db, opts.cluster));
    const problems = [...tableProblems, ...services.flatMap((s) => s.problems.map((p) => `${s.service}: ${p}`))];
    return { ok: problems.length === 0, scratchSchema, services, problems };
  } finally {
    if (opts.keepSchema !== true) await dropSchema(scratch.db, scratchSchema).catch(() => {});
    await scratch.close();
  }
}
