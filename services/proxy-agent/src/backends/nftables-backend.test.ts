// The nftables backend's partial syncs render only the changed services: after each step of a
// sequence the (fake) kernel holds exactly the full render of the state, and the reported
// object counts, moved by each change's difference, equal a recount.

import type { DpServicePort } from '@slicemesh/dataplane';
import { renderNftablesFull } from '@slicemesh/dataplane';
import { applyNft, dpEndpoint as ep, dpServicePort as svc, dpState, dumpNft } from '@slicemesh/dataplane/testing';
import { NftApplier } from '@slicemesh/netfilter';
import { FakeNft, RecordingExec } from '@slicemesh/netfilter/testing';
import { describe, expect, it } from 'vitest';
import { NftablesBackend, nftObjectCounts } from './nftables-backend.ts';

const web = (n: number): DpServicePort => svc('ns1/web:http', { clusterIP: '172.30.0.41', endpoints: Array.from({ length: n }, (_, i) => ep(`10.180.0.${i + 1}`)) });
const db = svc('ns1/db:pg', { clusterIP: '172.30.0.42', port: 5432, sessionAffinityTimeoutSeconds: 60, endpoints: [ep('10.180.1.1', { port: 5432 })] });
const empty = svc('ns2/empty:http', { clusterIP: '172.30.0.43' });
const lb = svc('ns2/lb:http', { clusterIP: '172.30.0.44', nodePort: 30080, loadBalancerIPs: ['192.0.2.10'], externalPolicyLocal: true, endpoints: [ep('10.180.2.1', { isLocal: true })] });

const steps: { name: string; ports: DpServicePort[]; changed: string[] | null; mode: 'full' | 'partial' }[] = [
  { name: 'first sync', ports: [web(2), db, empty], changed: null, mode: 'full' },
  { name: 'an endpoint added', ports: [web(3), db, empty], changed: ['ns1/web'], mode: 'partial' },
  { name: 'a service with a NodePort and a load balancer added', ports: [web(3), db, empty, lb], changed: ['ns2/lb'], mode: 'partial' },
  { name: 'an affinity service removed', ports: [web(3), empty, lb], changed: ['ns1/db'], mode: 'partial' },
  { name: 'a service gains endpoints', ports: [web(3), { ...empty, clusterEndpoints: [ep('10.180.3.1')], hasAnyEndpoints: true }, lb], changed: ['ns2/empty'], mode: 'partial' },
  { name: 'nothing changed', ports: [web(3), { ...empty, clusterEndpoints: [ep('10.180.3.1')], hasAnyEndpoints: true }, lb], changed: [], mode: 'partial' },
  { name: 'a periodic full sync', ports: [web(1), lb], changed: null, mode: 'full' },
];

describe('NftablesBackend partial syncs', () => {
  const fake = new FakeNft();
  const backend = new NftablesBackend({ nft: new NftApplier({ exec: new RecordingExec([fake]).exec }) });
  for (const s of steps) {
    it(`${s.name}: the kernel holds the full render and the counts equal a recount`, async () => {
      const state = dpState(s.ports);
      const r = await backend.sync({ state, changedServices: s.changed === null ? null : new Set(s.changed) });
      expect(r.mode).toBe(s.mode);
      expect(dumpNft(fake.ruleset, 'ip slicemesh')).toEqual(dumpNft(applyNft(new Map(), renderNftablesFull(state)), 'ip slicemesh'));
      expect(r.counts).toEqual(nftObjectCounts(state));
    });
  }
});
