import { describe, expect, it } from 'vitest';
import type { Endpoint, EndpointSlice, KubeObject } from '@slicemesh/model';
import { MANAGED_BY_CONTROLLER } from '@slicemesh/model';
import { autoService, ep, makePod, makeService, makeSlice, threeZoneNodes } from '@slicemesh/testing';
import { compareSemantic, compareTruth, planOf, semanticSlices } from './verify-truth.ts';

const a = ep('10.0.0.1', 'zone-a', 'n-a', { forZones: ['zone-a'] });
const b = ep('10.0.0.2', 'zone-b', 'n-b', { forZones: ['zone-b'] });
const c = ep('10.0.0.3', 'zone-c', 'n-c', { forZones: ['zone-c'] });
const with_ = (e: Endpoint, change: Partial<Endpoint>): Endpoint => ({ ...e, ...change });
const planned = [makeSlice('web-abc', [a, b, c])];

interface Case {
  readonly name: string;
  readonly live: readonly EndpointSlice[];
  /** Compare hints too (the hinted entries) or not (the slicer's slices). */
  readonly hints?: boolean;
  /** Each expected line, as a substring. */
  readonly problems: readonly string[];
}

const cases: readonly Case[] = [
  { name: 'equal endpoint sets pass', live: [makeSlice('web-abc', [a, b, c])], problems: [] },
  { name: 'another split into slices, under other names, passes', live: [makeSlice('web-x', [c]), makeSlice('web-y', [b, a])], problems: [] },
  { name: 'a missing endpoint is reported', live: [makeSlice('web-abc', [a, c])], problems: ['hinted default/web IPv4: endpoint 10.0.0.2 missing live (planned ready=true', 'hinted default/web IPv4: zone hints live [zone-a]×1 [zone-c]×1 planned [zone-a]×1 [zone-b]×1 [zone-c]×1'] },
  { name: 'an endpoint nobody planned is reported', live: [makeSlice('web-abc', [a, b, c, ep('10.0.0.9', 'zone-a', 'n-a', { forZones: ['zone-a'] })])], problems: ['hinted default/web IPv4: endpoint 10.0.0.9 live but not planned', 'hinted default/web IPv4: zone hints live [zone-a]×2 [zone-b]×1 [zone-c]×1 planned [zone-a]×1 [zone-b]×1 [zone-c]×1'] },
  { name: 'the same hints on other endpoints pass (which endpoints a zone gets depends on history)', live: [makeSlice('web-abc', [with_(a, { hints: { forZones: [{ name: 'zone-b' }] } }), with_(b, { hints: { forZones: [{ name: 'zone-a' }] } }), c])], problems: [] },
  { name: 'a wrong zone hint is reported', live: [makeSlice('web-abc', [a, with_(b, { hints: { forZones: [{ name: 'zone-c' }] } }), c])], problems: ['hinted default/web IPv4: zone hints live [zone-a]×1 [zone-c]×2 planned [zone-a]×1 [zone-b]×1 [zone-c]×1'] },
  { name: 'a missing hint is reported', live: [makeSlice('web-abc', [a, b, with_(c, { hints: {} })])], problems: ['zone hints live [zone-a]×1 [zone-b]×1 planned [zone-a]×1 [zone-b]×1 [zone-c]×1'] },
  { name: 'hints are not compared on the slicer\'s slices', hints: false, live: [makeSlice('web-abc', [a, with_(b, { hints: { forZones: [{ name: 'zone-c' }] } }), c])], problems: [] },
  { name: 'a wrong ready condition is reported', live: [makeSlice('web-abc', [with_(a, { conditions: { ready: false, serving: true, terminating: false } }), b, c])], problems: ['endpoint 10.0.0.1: ready live false planned true'] },
  { name: 'a terminating endpoint planned as not terminating is reported', live: [makeSlice('web-abc', [a, b, with_(c, { conditions: { ready: true, serving: true, terminating: true } })])], problems: ['endpoint 10.0.0.3: terminating live true planned false'] },
  { name: 'a wrong node and zone are reported', live: [makeSlice('web-abc', [a, b, with_(c, { nodeName: 'n-b', zone: 'zone-b' })])], problems: ['endpoint 10.0.0.3: nodeName live n-b planned n-c', 'endpoint 10.0.0.3: zone live zone-b planned zone-c'] },
  {
    name: 'other ports are reported, for the Service and for each endpoint',
    live: [makeSlice('web-abc', [a, b, c], { ports: [{ name: 'http', port: 9090, protocol: 'TCP' }] })],
    problems: ['hinted default/web IPv4: ports live [http:9090/TCP] planned [http:8080/TCP]', 'endpoint 10.0.0.1: ports live [http:9090/TCP] planned [http:8080/TCP]', 'endpoint 10.0.0.2: ports', 'endpoint 10.0.0.3: ports'],
  },
  { name: 'a Service with no live slices is reported', live: [], problems: ['hinted default/web IPv4: planned with 3 endpoints, but no live slices'] },
  { name: 'live slices of a Service nobody planned are reported', live: [...planned, makeSlice('gone-1', [], { service: 'gone' })], problems: ['hinted default/gone IPv4: live slices with 0 endpoints, but none planned'] },
  { name: 'another address type is another group', live: [makeSlice('web-abc', [a, b, c], { addressType: 'IPv6' })], problems: ['default/web IPv4: planned with 3 endpoints, but no live slices', 'default/web IPv6: live slices with 3 endpoints, but none planned'] },
];

describe('compareSemantic (verify truth)', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const hints = tc.hints ?? true;
      const got = compareSemantic('hinted', semanticSlices(planned, { hints }), semanticSlices(tc.live, { hints }));
      expect(got).toHaveLength(tc.problems.length);
      tc.problems.forEach((p, i) => expect(got[i]).toContain(p));
    });
  }

  it('an endpoint listed twice is one too many', () => {
    const got = compareSemantic('slicer', semanticSlices(planned, { hints: false }), semanticSlices([makeSlice('web-1', [a, b, c]), makeSlice('web-2', [a])], { hints: false }));
    expect(got).toEqual([expect.stringContaining('slicer default/web IPv4: endpoint 10.0.0.1#2 live but not planned')]);
  });
});

// The pure core's plan of a small cluster: three zones, an Auto Service with a pod per zone.
function cluster(): KubeObject[] {
  const pods = threeZoneNodes().map((n, i) => makePod(`web-${i}`, { ips: [`10.0.0.${i + 1}`], nodeName: n.metadata.name, labels: { app: 'web' } }));
  return [...threeZoneNodes(), autoService('web'), makeService('db', { selector: { app: 'db' } }), ...pods];
}
const settings = { managedBy: MANAGED_BY_CONTROLLER, maxEndpointsPerSlice: 100 };

describe('compareTruth on the plan of a cluster', () => {
  const plan = planOf(cluster(), settings);
  const stripHints = (s: EndpointSlice): EndpointSlice => ({ ...s, endpoints: s.endpoints.map(({ hints: _h, ...rest }) => rest) });

  it('plans hinted slices for the Auto Service and a placeholder for the one without pods', () => {
    const web = plan.own.filter((s) => s.metadata.labels?.['kubernetes.io/service-name'] === 'web');
    expect(web.flatMap((s) => s.endpoints.map((e) => e.hints?.forZones?.[0]?.name)).sort()).toEqual(['zone-a', 'zone-b', 'zone-c']);
    expect(plan.own.some((s) => s.metadata.labels?.['kubernetes.io/service-name'] === 'db')).toBe(true);
  });

  it('the plan itself as live (the slicer without hints, the hinted entries with them) passes', () => {
    const r = compareTruth(plan.own, { slicer: plan.own.map(stripHints), hinted: plan.own }, 2);
    expect(r).toEqual({ ok: true, services: 2, problems: [] });
  });

  it('a planted difference fails: an endpoint dropped from the slicer\'s slice and a hint changed in the hinted entry', () => {
    const web = plan.own.find((s) => s.endpoints.length === 3) as EndpointSlice;
    const others = plan.own.filter((s) => s !== web);
    const slicer = [...others, { ...stripHints(web), endpoints: stripHints(web).endpoints.slice(1) }].map(stripHints);
    const hinted = [...others, { ...web, endpoints: web.endpoints.map((e, i) => (i === 0 ? { ...e, hints: { forZones: [{ name: 'zone-z' }] } } : e)) }];
    const r = compareTruth(plan.own, { slicer, hinted }, 2);
    expect(r.ok).toBe(false);
    expect(r.problems).toEqual([
      expect.stringMatching(/^slicer default\/web IPv4: endpoint 10\.0\.0\.1 missing live/),
      expect.stringMatching(/^hinted default\/web IPv4: zone hints live \[zone-b\]×1 \[zone-c\]×1 \[zone-z\]×1 planned \[zone-a\]×1 \[zone-b\]×1 \[zone-c\]×1$/),
    ]);
  });

  it('other controllers\' slices are part of the cluster after the plan, not of ours', () => {
    const foreign = makeSlice('ext-1', [ep('192.0.2.1', 'zone-a', 'n-a')], { service: 'ext', managedBy: 'mcs-importer' });
    const p = planOf([...cluster(), makeService('ext', { selector: null }), foreign], settings);
    expect(p.own.some((s) => s.metadata.name === 'ext-1')).toBe(false);
    expect(p.all.some((s) => s.metadata.name === 'ext-1')).toBe(true);
  });
});
