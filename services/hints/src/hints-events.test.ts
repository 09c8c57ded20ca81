import { describe, expect, it } from 'vitest';
import { makeService } from '@slicemesh/testing';
import { hintsDisabledEvent, hintsEnabledEvent } from '@slicemesh/topology';
import type { HintsDecision } from '@slicemesh/topology';
import { hintsEventRequests } from './hints-events.ts';

const T = Date.parse('2026-11-26T23:00:00Z');
const decision = (addressType: 'IPv4' | 'IPv6', event: HintsDecision['event']): HintsDecision => ({ service: 'shop/web', addressType, enabled: event?.type === 'Normal', mode: 'Auto', event, reason: 'test' }) as HintsDecision;

describe('hintsEventRequests', () => {
  it('A.13.5 one request per decision with an event, on the Service with its uid, from the EndpointSlice controller', () => {
    const svc = makeService('web', { namespace: 'shop' });
    const reqs = hintsEventRequests('c1', 'shop/web', svc, [decision('IPv4', hintsDisabledEvent('Insufficient number of endpoints', 'IPv4')), decision('IPv6', null), decision('IPv6', hintsEnabledEvent('IPv6'))], T);
    expect(reqs.map((r) => [r.involvedObject, r.component, r.event.type, r.event.reason, r.event.message, r.time])).toEqual([
      [{ kind: 'Service', apiVersion: 'v1', namespace: 'shop', name: 'web', ...(svc.metadata.uid ? { uid: svc.metadata.uid } : {}) }, 'endpoint-slice-controller', 'Warning', 'TopologyAwareHintsDisabled', 'Insufficient number of endpoints, addressType: IPv4', '2026-11-26T23:00:00.000Z'],
      [{ kind: 'Service', apiVersion: 'v1', namespace: 'shop', name: 'web', ...(svc.metadata.uid ? { uid: svc.metadata.uid } : {}) }, 'endpoint-slice-controller', 'Normal', 'TopologyAwareHintsEnabled', 'Topology Aware Hints has been enabled, addressType: IPv6', '2026-11-26T23:00:00.000Z'],
    ]);
  });

  it('a Service no longer known still gets its events by key, without a uid', () => {
    const reqs = hintsEventRequests('c1', 'shop/web', undefined, [decision('IPv4', hintsDisabledEvent('x', 'IPv4'))], T);
    expect(reqs[0]?.involvedObject).toEqual({ kind: 'Service', apiVersion: 'v1', namespace: 'shop', name: 'web' });
  });
});
