import { describe, expect, it } from 'vitest';
import type { EndpointSlicePort } from '@slicemesh/model';
import { deepFreeze } from '@slicemesh/testing';
import { portMapKey, sortPorts } from './port-map-key.ts';

const http: EndpointSlicePort = { name: 'http', port: 8080, protocol: 'TCP' };
const dns: EndpointSlicePort = { name: 'dns', port: 53, protocol: 'UDP' };

const same: { name: string; a: readonly EndpointSlicePort[] | null | undefined; b: readonly EndpointSlicePort[] | null | undefined }[] = [
  { name: 'A.5.4 nil and empty port lists hash the same', a: null, b: [] },
  { name: 'A.5.4 undefined and empty hash the same', a: undefined, b: [] },
  { name: 'A.5.4 order does not matter (sorted first)', a: [http, dns], b: [dns, http] },
  { name: 'absent name equals "" and absent protocol equals TCP', a: [{ port: 8080 }], b: [{ name: '', port: 8080, protocol: 'TCP' }] },
];
const different: typeof same = [
  { name: 'A.5.4 a different port number is another group', a: [http], b: [{ ...http, port: 8081 }] },
  { name: 'A.5.4 a different protocol is another group', a: [http], b: [{ ...http, protocol: 'UDP' }] },
  { name: 'A.5.4 a different name is another group', a: [http], b: [{ ...http, name: 'web' }] },
  { name: 'A.5.4 appProtocol counts', a: [http], b: [{ ...http, appProtocol: 'h2c' }] },
  { name: 'A.5.4 an extra port is another group', a: [http], b: [http, dns] },
  { name: 'A.5.4 no ports vs some ports', a: [], b: [http] },
];

describe('portMapKey', () => {
  for (const tc of same) {
    it(tc.name, () => {
      expect(portMapKey(deepFreeze(tc.a))).toBe(portMapKey(deepFreeze(tc.b)));
    });
  }
  for (const tc of different) {
    it(tc.name, () => {
      expect(portMapKey(deepFreeze(tc.a))).not.toBe(portMapKey(deepFreeze(tc.b)));
    });
  }
  it('is a short hex string and stable across calls', () => {
    const k = portMapKey([http]);
    expect(k).toMatch(/^[0-9a-f]{16}$/);
    expect(portMapKey([{ ...http }])).toBe(k);
  });
  it('sortPorts returns a sorted copy, independent of input order', () => {
    const input = deepFreeze([http, dns]);
    expect(sortPorts(input)).toEqual(sortPorts([dns, http]));
    expect(sortPorts(null)).toEqual([]);
  });
});
