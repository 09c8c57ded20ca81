// `log at`: the state as of a point — replayed from the nearest snapshot this process already
// holds (checkpoints.ts), or from the source's own snapshot.

import type { Node } from '@slicemesh/model';
import type { ReplayOptions } from './checkpoints.ts';
import { replayTo } from './checkpoints.ts';
import type { NodeInfo, ServiceState } from './service-state.ts';
import { nodeInfo, serviceKeys, serviceState, topologyCacheOf } from './service-state.ts';
import type { Replayer } from './replayer.ts';
import type { LogPoint, LogSettings, LogSource } from './source.ts';

export interface StateAt {
  readonly at: LogPoint;
  readonly settings: LogSettings;
  /** Every Service with a spec, slices or Endpoints, sorted by namespace and name. */
  readonly services: readonly ServiceState[];
  /** Every live node, sorted by name. */
  readonly nodes: readonly NodeInfo[];
  /** The Node objects (what the proxy model reads: zones, labels). */
  readonly nodeObjects: readonly Node[];
}

export type Progress = (done: number, total: number) => void;

/** The state a Replayer holds now, as a StateAt at `at`. */
export function stateOf(rep: Replayer, at: LogPoint): StateAt {
  const nodeObjects = [...rep.state.nodes().values()].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
  const cache = topologyCacheOf(nodeObjects);
  const services = serviceKeys(rep).map((k) => {
    const i = k.indexOf('/');
    return serviceState(rep, k.slice(0, i), k.slice(i + 1), cache, nodeObjects);
  });
  return { at, settings: rep.settings, services, nodes: nodeObjects.map(nodeInfo), nodeObjects };
}

/** The state after every event up to and including `at.seq` (resolve `at` with resolvePoint). */
export async function stateAt(src: LogSource, at: LogPoint, onProgress?: Progress, opts: ReplayOptions = {}): Promise<StateAt> {
  const rep = await replayTo(src, at.seq, onProgress, opts);
  return stateOf(rep, at);
}
