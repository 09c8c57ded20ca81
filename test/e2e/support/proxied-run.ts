// What a test behind a rewriting API proxy starts — the cluster simulator, the proxy in front
// of it and the stack fixture reading through the proxy — held per test and closed after it.

import { afterEach } from 'vitest';
import type { ClusterSim } from '@slicemesh/cluster-sim';
import type { ApiProxy } from '@slicemesh/kube/testing';
import type { StackFixture } from './fixture.ts';

export interface ProxiedRun {
  sim: ClusterSim | undefined;
  proxy: ApiProxy | undefined;
  f: StackFixture | undefined;
}

/**
 * Empty slots for the test to fill as it starts things. After each test, closes whatever was
 * filled — the fixture, then the proxy, then the simulator — and empties the slots.
 */
export function proxiedRunSlots(): ProxiedRun {
  const run: ProxiedRun = { sim: undefined, proxy: undefined, f: undefined };
  afterEach(async () => {
    await run.f?.close();
    await run.proxy?.close();
    await run.sim?.close();
    run.f = undefined;
    run.proxy = undefined;
    run.sim = undefined;
  });
  return run;
}
