import { describe, expect, it } from 'vitest';
import type { EndpointSlice } from '@slicemesh/model';
import { endpointForPod } from '@slicemesh/slicing';
import { makeNode, makePod, makeService, makeSlice } from '@slicemesh/testing';
import { endpointsOfText } from '../../bench/endpoints-scan.ts';

/** What the bench read before the scan: every address of every upsert, with ready !== false. */
function parsed(text: string): [string, boolean][] {
  const body = JSON.parse(text) as { upserts?: EndpointSlice[] };
  return (body.upserts ?? []).flatMap((s) => s.endpoints.flatMap((ep) => ep.addresses.map((ip): [string, boolean] => [ip, ep.conditions?.ready !== false])));
}

/** `text` as Postgres prints a jsonb value: keys by length then bytes, a space after ':' and ','. */
function asJsonb(text: string): string {
  const order = (a: string, b: string) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  const print = (v: unknown): string => {
    if (Array.isArray(v)) return `[${v.map(print).join(', ')}]`;
    if (v !== null && typeof v === 'object') return `{${Object.keys(v).sort(order).map((k) => `${JSON.stringify(k)}: ${print((v as Record<string, unknown>)[k])}`).join(', ')}}`;
    return JSON.stringify(v);
  };
  return print(JSON.parse(text));
}

const message = (slices: EndpointSlice[]) => JSON.stringify({ type: 'SliceChanged.v1', cluster: 'c', namespace: 'default', service: 'web', upserts: slices, deletes: [], kubeSeq: { from: 1, to: 2 } });
const svc = makeService('web');
const node = makeNode('node-1');
// The slicer's own endpoints (endpointForPod), so the scan is held to the key order it writes.
const podEndpoint = (name: string, ip: string, o: { ready?: boolean; terminating?: boolean } = {}) =>
  endpointForPod(makePod(name, { ips: [ip], ...(o.ready === false ? { ready: false } : {}), ...(o.terminating ? { terminating: true } : {}) }), node, svc, [ip]);

describe('endpointsOfText: a SLICES message read without parsing it', () => {
  const cases: { name: string; text: string }[] = [
    { name: 'ready and not-ready endpoints of the slicer', text: message([makeSlice('web-a', [podEndpoint('p1', '10.0.0.1'), podEndpoint('p2', '10.0.0.2', { ready: false })])]) },
    { name: 'a terminating endpoint is not ready', text: message([makeSlice('web-a', [podEndpoint('p3', '10.0.0.3', { terminating: true })])]) },
    { name: 'several slices, IPv6 addresses', text: message([makeSlice('web-a', [podEndpoint('p4', 'fd00::4')]), makeSlice('web-b', [podEndpoint('p5', '10.0.0.5')])]) },
    { name: 'an endpoint whose conditions leave ready out counts as ready', text: message([makeSlice('web-a', [{ addresses: ['10.0.0.6'], conditions: {} }])]) },
    { name: 'an endpoint with several addresses', text: message([makeSlice('web-a', [{ addresses: ['10.0.0.7', '10.0.0.8'], conditions: { ready: false } }])]) },
    { name: 'a message with deletes only', text: JSON.stringify({ type: 'SliceChanged.v1', upserts: [], deletes: ['web-a'] }) },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect(endpointsOfText(tc.text)).toEqual(parsed(tc.text));
    });
    it(`${tc.name}, keys in jsonb's order and spacing (as the relay publishes)`, () => {
      const text = asJsonb(tc.text);
      expect(endpointsOfText(text)).toEqual(parsed(text));
    });
  }

  it('reads the readiness each endpoint has, not its neighbour\'s', () => {
    const text = message([makeSlice('web-a', [podEndpoint('p1', '10.0.0.1', { ready: false }), podEndpoint('p2', '10.0.0.2')])]);
    expect(endpointsOfText(text)).toEqual([['10.0.0.1', false], ['10.0.0.2', true]]);
  });
});
