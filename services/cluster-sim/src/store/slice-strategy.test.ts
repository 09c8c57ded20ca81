// EndpointSlices in the store: upstream's defaults and the checks a slice writer must pass.
import { describe, expect, it } from 'vitest';
import { ApiError } from './api-error.ts';
import { ObjectStore } from './object-store.ts';
import type { KubeObj } from './types.ts';

const newStore = () => new ObjectStore({ now: () => Date.UTC(2026, 0, 1), seed: 'test' });

const slice = (extra: Record<string, unknown> = {}): KubeObj => ({
  apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
  metadata: { name: 'web-abc', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
  addressType: 'IPv4',
  endpoints: [{ addresses: ['10.244.0.5'], conditions: { ready: true }, nodeName: 'node-a', zone: 'a' }],
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  ...extra,
});

function invalidMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError && err.code === 422) return err.message;
    throw err;
  }
  throw new Error('expected a 422');
}

describe('EndpointSlice defaults', () => {
  it('ports get name "" and protocol TCP; a slice without endpoints gets an empty list', () => {
    const created = newStore().create('EndpointSlice', slice({ ports: [{ port: 53, protocol: 'UDP' }, { name: 'http' }], endpoints: undefined }));
    expect([created['ports'], created['endpoints']]).toEqual([[{ name: '', port: 53, protocol: 'UDP' }, { name: 'http', protocol: 'TCP' }], []]);
  });

  it('generation moves when endpoints change, not when labels do', () => {
    const store = newStore();
    const created = store.create('EndpointSlice', slice());
    const labelled = store.update('EndpointSlice', { ...created, metadata: { ...created.metadata, labels: { x: 'y' } } });
    const moved = store.update('EndpointSlice', { ...labelled, endpoints: [{ addresses: ['10.244.0.6'] }] });
    expect([created, labelled, moved].map((s) => s.metadata.generation)).toEqual([1, 1, 2]);
  });
});

describe('EndpointSlice validation', () => {
  const cases: readonly { name: string; obj: KubeObj; message: string }[] = [
    { name: 'a missing addressType', obj: slice({ addressType: undefined }), message: 'addressType: Required value' },
    { name: 'an unknown addressType', obj: slice({ addressType: 'IPv5' }), message: 'addressType: Unsupported value: "IPv5": supported values: "FQDN", "IPv4", "IPv6"' },
    { name: 'an endpoint without addresses', obj: slice({ endpoints: [{ addresses: [] }] }), message: 'endpoints[0].addresses: Required value: must contain at least 1 address' },
    { name: 'an IPv6 address in an IPv4 slice', obj: slice({ endpoints: [{ addresses: ['fd00::1'] }] }), message: 'endpoints[0].addresses[0]: Invalid value: "fd00::1": must be a valid IPv4 address' },
    { name: 'an IPv4 address in an IPv6 slice', obj: slice({ addressType: 'IPv6' }), message: 'endpoints[0].addresses[0]: Invalid value: "10.244.0.5": must be a valid IPv6 address' },
    { name: 'more than 1000 endpoints', obj: slice({ endpoints: Array.from({ length: 1001 }, () => ({ addresses: ['10.0.0.1'] })) }), message: 'endpoints: Too many: 1001: must have at most 1000 items' },
    { name: 'more than 100 ports', obj: slice({ ports: Array.from({ length: 101 }, (_, i) => ({ name: `p${i}`, port: 1000 + i })) }), message: 'ports: Too many: 101: must have at most 100 items' },
    { name: 'two unnamed ports', obj: slice({ ports: [{ port: 80 }, { port: 81 }] }), message: 'ports[1].name: Duplicate value: ""' },
    { name: 'a port name that is not a DNS label', obj: slice({ ports: [{ name: 'HTTP', port: 80 }] }), message: 'ports[0].name: Invalid value: "HTTP": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end with an alphanumeric character' },
    { name: 'port 0', obj: slice({ ports: [{ name: 'x', port: 0 }] }), message: 'ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive' },
    { name: 'an unknown protocol', obj: slice({ ports: [{ name: 'x', port: 80, protocol: 'ICMP' }] }), message: 'ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"' },
    { name: 'a node name that is not a subdomain', obj: slice({ endpoints: [{ addresses: ['10.0.0.1'], nodeName: 'Node_A' }] }), message: "endpoints[0].nodeName: Invalid value: \"Node_A\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character" },
  ];
  for (const tc of cases) {
    it(`rejects ${tc.name}`, () => {
      expect(invalidMessage(() => newStore().create('EndpointSlice', tc.obj))).toBe(`EndpointSlice "web-abc" is invalid: ${tc.message}`);
    });
  }

  it('accepts FQDN slices with domain names', () => {
    expect(newStore().create('EndpointSlice', slice({ addressType: 'FQDN', endpoints: [{ addresses: ['db.example.com'] }] }))['addressType']).toBe('FQDN');
  });

  it('addressType is immutable', () => {
    const store = newStore();
    const created = store.create('EndpointSlice', slice());
    expect(invalidMessage(() => store.update('EndpointSlice', { ...created, addressType: 'IPv6', endpoints: [{ addresses: ['fd00::1'] }] }))).toBe('EndpointSlice "web-abc" is invalid: addressType: Invalid value: "IPv6": field is immutable');
  });
});
