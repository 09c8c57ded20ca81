// The core/v1 Event adapter against cluster-sim over real HTTP: create, the recorder's
// strategic merge patch of count/lastTimestamp/message, 404 on an expired Event, 409 on a taken
// name — the answers the publisher's event writer depends on.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EMPTY_SCENARIO, startClusterSim } from '@slicemesh/cluster-sim';
import type { ClusterSim } from '@slicemesh/cluster-sim';
import type { CoreEventApi } from './event-api.ts';
import { coreEventApi, eventCollectionPath } from './event-api.ts';
import { buildKubeConfig } from './kube-config.ts';
import type { KubeJson } from './slice-api.ts';
import { KubeWriteError } from './slice-api.ts';

let sim: ClusterSim;
let api: CoreEventApi;
beforeEach(async () => {
  sim = await startClusterSim({ scenario: EMPTY_SCENARIO });
  api = coreEventApi(buildKubeConfig({ type: 'server', url: sim.url }), { timeoutMs: 5000 });
});
afterEach(async () => {
  await sim.close();
});

const event = (name: string): KubeJson => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name, namespace: 'default' },
  involvedObject: { kind: 'Service', apiVersion: 'v1', namespace: 'default', name: 'web' },
  type: 'Warning',
  reason: 'TopologyAwareHintsDisabled',
  message: 'Insufficient number of endpoints, addressType: IPv4',
  source: { component: 'endpoint-slice-controller' },
  reportingComponent: 'endpoint-slice-controller',
  count: 1,
  firstTimestamp: '2026-11-26T22:00:00Z',
  lastTimestamp: '2026-11-26T22:00:00Z',
});

async function read(name: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${sim.url}${eventCollectionPath('default')}/${name}`);
  return (await res.json()) as Record<string, unknown>;
}

describe('coreEventApi over cluster-sim', () => {
  it('creates an Event and patches its count, lastTimestamp and message, leaving the rest', async () => {
    await api.create('default', event('web.1'));
    const patched = await api.patch('default', 'web.1', { count: 7, lastTimestamp: '2026-11-26T22:05:00Z', message: 'later' });
    expect(patched).toMatchObject({ count: 7, lastTimestamp: '2026-11-26T22:05:00Z', message: 'later', firstTimestamp: '2026-11-26T22:00:00Z' });
    expect(await read('web.1')).toMatchObject({ count: 7, reason: 'TopologyAwareHintsDisabled', source: { component: 'endpoint-slice-controller' } });
  });

  it('a patch of a missing Event is undefined (the recorder then creates it)', async () => {
    expect(await api.patch('default', 'gone.1', { count: 2 })).toBeUndefined();
  });

  it('a create of a taken name is 409 AlreadyExists', async () => {
    await api.create('default', event('web.2'));
    const err = await api.create('default', event('web.2')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeWriteError);
    expect(err).toMatchObject({ statusCode: 409, reason: 'AlreadyExists', verb: 'create' });
  });
});
