import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { jsonPatch, mergePatch, patchTypeOf, strategicMergePatch } from './patch.ts';

describe('JSON merge patch (RFC 7386)', () => {
  const cases: readonly { name: string; target: unknown; patch: unknown; want: unknown }[] = [
    { name: 'merges maps recursively', target: { a: { b: 1, c: 2 } }, patch: { a: { b: 3 } }, want: { a: { b: 3, c: 2 } } },
    { name: 'null deletes a key', target: { a: 1, b: 2 }, patch: { a: null }, want: { b: 2 } },
    { name: 'lists are replaced whole', target: { l: [1, 2, 3] }, patch: { l: [4] }, want: { l: [4] } },
    { name: 'a non-object patch replaces the target', target: { a: 1 }, patch: 'x', want: 'x' },
  ];
  for (const tc of cases) it(tc.name, () => expect(mergePatch(deepFreeze(tc.target), deepFreeze(tc.patch))).toEqual(tc.want));
});

describe('strategic merge patch (approximation)', () => {
  const pod = {
    metadata: { labels: { a: '1' }, finalizers: ['x'] },
    spec: {
      containers: [
        { name: 'app', image: 'v1', ports: [{ containerPort: 80, name: 'http' }, { containerPort: 9090, name: 'metrics' }] },
        { name: 'side', image: 's1' },
      ],
    },
    status: { conditions: [{ type: 'Ready', status: 'False' }, { type: 'PodScheduled', status: 'True' }] },
  };
  const cases: readonly { name: string; patch: unknown; pick: (o: typeof pod) => unknown; want: unknown }[] = [
    {
      name: 'containers merge by name: one field changes, the other container stays',
      patch: { spec: { containers: [{ name: 'app', image: 'v2' }] } },
      pick: (o) => o.spec.containers.map((c) => [c.name, c.image, 'ports' in c]),
      want: [['app', 'v2', true], ['side', 's1', false]],
    },
    {
      name: 'container ports merge by containerPort',
      patch: { spec: { containers: [{ name: 'app', ports: [{ containerPort: 80, name: 'web' }] }] } },
      pick: (o) => o.spec.containers[0]!.ports!.map((p) => p.name),
      want: ['web', 'metrics'],
    },
    {
      name: 'conditions merge by type',
      patch: { status: { conditions: [{ type: 'Ready', status: 'True' }] } },
      pick: (o) => o.status.conditions,
      want: [{ type: 'Ready', status: 'True' }, { type: 'PodScheduled', status: 'True' }],
    },
    {
      name: '$patch: delete removes a list element by key',
      patch: { spec: { containers: [{ name: 'side', $patch: 'delete' }] } },
      pick: (o) => o.spec.containers.map((c) => c.name),
      want: ['app'],
    },
    {
      name: '$setElementOrder orders the merged list',
      patch: { spec: { $setElementOrder: undefined, ['$setElementOrder/containers']: [{ name: 'side' }, { name: 'app' }], containers: [{ name: 'app', image: 'v3' }] } },
      pick: (o) => o.spec.containers.map((c) => c.name),
      want: ['side', 'app'],
    },
    {
      name: 'finalizers merge as a set; $deleteFromPrimitiveList removes values',
      patch: { metadata: { finalizers: ['y', 'x'], ['$deleteFromPrimitiveList/finalizers']: ['x'] } },
      pick: (o) => o.metadata.finalizers,
      want: ['y'],
    },
    {
      name: '$patch: replace on a map replaces it',
      patch: { metadata: { labels: { b: '2', $patch: 'replace' } } },
      pick: (o) => o.metadata.labels,
      want: { b: '2' },
    },
    {
      name: 'null deletes a field',
      patch: { metadata: { labels: { a: null } } },
      pick: (o) => o.metadata.labels,
      want: {},
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const patch = JSON.parse(JSON.stringify(tc.patch)) as unknown;
      expect(tc.pick(strategicMergePatch(deepFreeze(structuredClone(pod)), deepFreeze(patch)) as typeof pod)).toEqual(tc.want);
    });
  }

  it('service ports merge by port', () => {
    const svc = deepFreeze({ spec: { ports: [{ port: 80, name: 'a' }, { port: 443, name: 'b' }] } });
    expect(strategicMergePatch(svc, { spec: { ports: [{ port: 443, targetPort: 8443 }] } })).toEqual({ spec: { ports: [{ port: 80, name: 'a' }, { port: 443, name: 'b', targetPort: 8443 }] } });
  });

  it('lists without a merge key are replaced', () => {
    expect(strategicMergePatch(deepFreeze({ spec: { externalIPs: ['1.1.1.1'] } }), { spec: { externalIPs: ['2.2.2.2'] } })).toEqual({ spec: { externalIPs: ['2.2.2.2'] } });
  });
});

describe('JSON patch (RFC 6902)', () => {
  const doc = { metadata: { labels: { a: '1' } }, list: [1, 2] };
  const cases: readonly { name: string; ops: unknown; want: unknown }[] = [
    { name: 'add a map key', ops: [{ op: 'add', path: '/metadata/labels/b', value: '2' }], want: { metadata: { labels: { a: '1', b: '2' } }, list: [1, 2] } },
    { name: 'append with -', ops: [{ op: 'add', path: '/list/-', value: 3 }], want: { metadata: { labels: { a: '1' } }, list: [1, 2, 3] } },
    { name: 'replace and remove', ops: [{ op: 'replace', path: '/list/0', value: 9 }, { op: 'remove', path: '/metadata/labels/a' }], want: { metadata: { labels: {} }, list: [9, 2] } },
    { name: 'escaped pointer segments', ops: [{ op: 'add', path: '/metadata/labels/x~1y', value: 'z' }], want: { metadata: { labels: { a: '1', 'x/y': 'z' } }, list: [1, 2] } },
    { name: 'move and copy', ops: [{ op: 'copy', from: '/list/0', path: '/first' }, { op: 'move', from: '/list', path: '/items' }], want: { metadata: { labels: { a: '1' } }, first: 1, items: [1, 2] } },
  ];
  for (const tc of cases) it(tc.name, () => expect(jsonPatch(deepFreeze(structuredClone(doc)), tc.ops)).toEqual(tc.want));

  it('a failed test op is 422 and nothing is applied', () => {
    expect(() => jsonPatch(deepFreeze(doc), [{ op: 'test', path: '/list/0', value: 5 }])).toThrow('testing value /list/0 failed');
  });

  it('removing a missing path is an error', () => {
    expect(() => jsonPatch(deepFreeze(doc), [{ op: 'remove', path: '/nope' }])).toThrow('does not exist');
  });
});

describe('patch content types', () => {
  const cases = [
    ['application/merge-patch+json', 'merge'],
    ['application/strategic-merge-patch+json', 'strategic'],
    ['application/json-patch+json; charset=utf-8', 'json'],
    ['application/apply-patch+yaml', 'apply'],
    ['application/json', undefined],
  ] as const;
  for (const [ct, want] of cases) it(`${ct} -> ${want}`, () => expect(patchTypeOf(ct)).toBe(want));
});
