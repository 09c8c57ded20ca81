import { describe, expect, it } from 'vitest';
import { SERVICE_IMPORT_VERSION, parseServiceImportEntry, serviceImportFilter, serviceImportKey } from './service-import.ts';

const KEY = serviceImportKey({ cluster: 'c1', namespace: 'shop', name: 'cart' });
const entry = (over: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) => ({
  v: SERVICE_IMPORT_VERSION,
  namespace: 'shop',
  name: 'cart',
  spec: { ips: ['243.0.0.9'], type: 'ClusterSetIP', ports: [{ name: 'http', protocol: 'TCP', port: 80 }], sessionAffinity: 'None', ...spec },
  status: { clusters: [{ cluster: 'a' }, { cluster: 'b' }] },
  ...over,
});

describe('serviceimports keys', () => {
  it('are <cluster>.<ns>.<name>, filtered per cluster', () => {
    expect([KEY, serviceImportFilter('c1')]).toEqual(['c1.shop.cart', 'c1.>']);
  });
});

describe('parseServiceImportEntry', () => {
  it('accepts a ClusterSetIP import and a Headless one without ips', () => {
    expect(parseServiceImportEntry(KEY, entry(), 'c1')).toEqual({ ok: true, value: entry() });
    expect(parseServiceImportEntry(KEY, entry({}, { type: 'Headless', ips: [] }), 'c1').ok).toBe(true);
  });

  const rejected: readonly [string, string, unknown, string][] = [
    ['a key that is not <cluster>.<ns>.<name>', 'c1.shop', entry(), 'key'],
    ["another cluster's key", 'c2.shop.cart', entry(), 'key'],
    ['another version', KEY, entry({ v: 2 }), 'v'],
    ['a body naming another Service', KEY, entry({ name: 'search' }), 'metadata'],
    ['an unknown type', KEY, entry({}, { type: 'NodePort' }), 'spec'],
    ['a Headless import with an IP', KEY, entry({}, { type: 'Headless' }), 'spec'],
    ['three IPs', KEY, entry({}, { ips: ['1.1.1.1', '1.1.1.2', '1.1.1.3'] }), 'spec'],
    ['an unknown session affinity', KEY, entry({}, { sessionAffinity: 'Cookie' }), 'spec'],
    ['a port out of range', KEY, entry({}, { ports: [{ protocol: 'TCP', port: 0 }] }), 'spec'],
    ['a port without a protocol', KEY, entry({}, { ports: [{ port: 80 }] }), 'spec'],
    ['no status clusters', KEY, entry({ status: {} }), 'status'],
    ['a cluster without a name', KEY, entry({ status: { clusters: [{ cluster: '' }] } }), 'status'],
  ];
  for (const [what, key, value, field] of rejected) {
    it(`rejects ${what} (field ${field})`, () => {
      const r = parseServiceImportEntry(key, value, 'c1');
      expect(r.ok ? 'accepted' : r.rejection.field).toBe(field);
    });
  }
});
