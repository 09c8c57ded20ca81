import { deepFreeze, makeNode, makePod, makeService, makeSlice } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { InvalidObjectError } from '../errors.ts';
import { validateKubeObject } from './kube-object.ts';
import { thrownBy } from './test-support.ts';

describe('validateKubeObject', () => {
  const valid: { name: string; input: unknown }[] = [
    { name: 'dispatches a Service built by the test builders', input: makeService('web') },
    { name: 'dispatches a Pod built by the test builders', input: makePod('web-1') },
    { name: 'dispatches a Node built by the test builders', input: makeNode('node-1', { zone: 'zone-a', internalIP: '192.168.0.1' }) },
    { name: 'dispatches an EndpointSlice built by the test builders', input: makeSlice('web-abc', [{ addresses: ['10.0.0.1'], conditions: { ready: true } }]) },
    { name: 'dispatches an Endpoints object', input: { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'db', namespace: 'default' }, subsets: [] } },
  ];
  for (const tc of valid) {
    it(tc.name, () => {
      const input = deepFreeze(tc.input);
      const out = validateKubeObject(input, 'item 0');
      expect(out.kind).toBe((input as { kind: string }).kind);
      // Builder objects are already normal: validation gives them back unchanged.
      if (out.kind !== 'Endpoints') expect(out).toEqual(input);
    });
  }

  const invalid: { name: string; input: unknown; field: string; reason: RegExp }[] = [
    { name: 'rejects a missing kind', input: { metadata: { name: 'x' } }, field: 'kind', reason: /required/ },
    { name: 'rejects a non-string kind', input: { kind: 3 }, field: 'kind', reason: /string \(got number\)/ },
    { name: 'rejects an unsupported kind', input: { kind: 'ConfigMap' }, field: 'kind', reason: /"ConfigMap" is not one of Service, Pod, Node, Endpoints, EndpointSlice/ },
    { name: 'rejects an array', input: [], field: '<object>', reason: /got array/ },
    { name: 'rejects null', input: null, field: '<object>', reason: /got null/ },
  ];
  for (const tc of invalid) {
    it(tc.name, () => {
      const err = thrownBy(() => validateKubeObject(deepFreeze(tc.input), 'item 4'));
      expect(err).toBeInstanceOf(InvalidObjectError);
      expect((err as InvalidObjectError).object).toBe('item 4');
      expect((err as InvalidObjectError).field).toBe(tc.field);
      expect((err as InvalidObjectError).reason).toMatch(tc.reason);
    });
  }
});
