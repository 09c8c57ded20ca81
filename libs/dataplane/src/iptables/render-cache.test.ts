// IptablesRenderCache: a render that takes unchanged ports from the cache writes exactly what a
// render from scratch writes (script, records, counts, chains), full and partial, across changes
// of endpoints, of services and of the node-wide settings; and it renders only what changed.

import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import type { DpServicePort, DpState } from '../model.ts';
import { dpEndpoint as ep, dpServicePort as svc, dpState } from '../testing/builders.ts';
import { KUBE_PROXY_CHAINS } from './chain-names.ts';
import type { IptablesRenderResult, RenderIptablesOptions } from './render.ts';
import { IptablesRenderCache, renderIptables } from './render.ts';

const a = svc('ns1/a:http', { clusterIP: '172.30.0.41', endpoints: [ep('10.180.0.1'), ep('10.180.0.2', { isLocal: true })] });
const b = svc('ns1/b:http', { clusterIP: '172.30.0.42', nodePort: 3001, externalPolicyLocal: true, endpoints: [ep('10.180.1.1', { isLocal: true })] });
const c = svc('ns2/c:dns', { clusterIP: '172.30.0.43', port: 53, protocol: 'UDP', endpoints: [ep('10.180.2.1', { port: 53 })] });
const lb = svc('ns2/lb:https', { clusterIP: '172.30.0.44', port: 443, loadBalancerIPs: ['1.2.3.4'], loadBalancerSourceRanges: ['5.6.0.0/16'], endpoints: [ep('10.180.3.1', { port: 8443 })] });
const empty = svc('ns3/none:http', { clusterIP: '172.30.0.45', externalIPs: ['9.9.9.9'] });
const a2 = { ...a, clusterEndpoints: [ep('10.180.0.1'), ep('10.180.0.3')] };
const state = (ports: readonly DpServicePort[], o: Partial<DpState> = {}): DpState => deepFreeze(dpState(ports, { nodeIPs: ['192.168.0.1'], ...o }));

/** One sync of a sequence: the state, and the ports a partial sync is told changed (null: full). */
interface Step {
  readonly state: DpState;
  readonly changed: readonly string[] | null;
  /** Ports the cached render must render anew. */
  readonly rendered: number;
}

const cases: readonly { readonly name: string; readonly steps: readonly Step[]; readonly opts?: RenderIptablesOptions }[] = [
  {
    name: 'full renders: only a changed endpoint list and a new service are rendered again',
    steps: [
      { state: state([a, b, c, lb, empty]), changed: null, rendered: 5 },
      { state: state([a, b, c, lb, empty]), changed: null, rendered: 0 },
      { state: state([a2, b, c, lb, empty]), changed: null, rendered: 1 },
      { state: state([a2, b, lb, empty, svc('ns4/d:http', { clusterIP: '172.30.0.46', endpoints: [ep('10.180.4.1')] })]), changed: null, rendered: 1 },
    ],
  },
  {
    name: 'partial renders after a full one write what they write without a cache',
    steps: [
      { state: state([a, b, c, lb]), changed: null, rendered: 4 },
      { state: state([a2, b, c, lb]), changed: ['ns1/a:http/TCP'], rendered: 1 },
      { state: state([a2, b, lb]), changed: ['ns2/c'], rendered: 0 },
      { state: state([a2, b, lb]), changed: [], rendered: 0 },
    ],
  },
  {
    name: 'a change of the node-wide settings renders every port again',
    steps: [
      { state: state([a, b, c]), changed: null, rendered: 3 },
      { state: state([a, b, c], { podCIDR: '10.1.0.0/16' }), changed: [], rendered: 3 },
      { state: state([a, b, c], { podCIDR: '10.1.0.0/16', masqueradeAll: true }), changed: null, rendered: 3 },
      { state: state([a, b, c], { podCIDR: '10.1.0.0/16', masqueradeAll: true, primaryNodeIP: '192.168.0.9', nodeIPs: ['192.168.0.9'] }), changed: null, rendered: 3 },
    ],
  },
  {
    name: 'large-cluster mode (comments left out) is part of the context',
    steps: [
      { state: state([a, b]), changed: null, rendered: 2 },
      { state: state([a, b]), changed: null, rendered: 2 },
    ],
    opts: { largeClusterMode: true },
  },
  {
    name: "kube-proxy's chain names",
    steps: [
      { state: state([a, lb]), changed: null, rendered: 2 },
      { state: state([a2, lb]), changed: ['ns1/a'], rendered: 1 },
    ],
    opts: { chains: KUBE_PROXY_CHAINS },
  },
];

/** Everything a render returns, in a comparable form. */
const comparable = (r: IptablesRenderResult) => ({ ...r, services: [...r.services] });

describe('IptablesRenderCache', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const cache = new IptablesRenderCache();
      let plain: IptablesRenderResult | undefined;
      let cached: IptablesRenderResult | undefined;
      for (const [i, step] of tc.steps.entries()) {
        // Large-cluster mode only from the second step on, so that it is a change of context.
        const o = i === 0 && tc.opts?.largeClusterMode === true ? {} : (tc.opts ?? {});
        const partial = (prev: IptablesRenderResult | undefined) => (step.changed === null || prev === undefined ? {} : { changedServicePorts: new Set(step.changed), previous: prev });
        const before = cache.rendered;
        const nextPlain = renderIptables(step.state, { includeJumps: true, ...o, ...partial(plain) });
        const nextCached = renderIptables(step.state, { includeJumps: true, ...o, ...partial(cached), cache });
        expect(comparable(nextCached), `step ${i}`).toEqual(comparable(nextPlain));
        expect(cache.rendered - before, `ports rendered at step ${i}`).toBe(step.rendered);
        plain = nextPlain;
        cached = nextCached;
      }
    });
  }
});
