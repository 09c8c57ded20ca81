import { describe, expect, it } from 'vitest';
import { LABEL_MANAGED_BY, MANAGED_BY_CONTROLLER, MANAGED_BY_MIRRORING } from '@slicemesh/model';
import { DEFAULT_OWN_MANAGERS, foreignSliceSelector, isOwnSlice, ownManagers, parseOwnManagers } from './slice-ownership.ts';

describe('isOwnSlice: ours vs foreign (habit 9)', () => {
  const by = (value: string): Record<string, string> => ({ 'kubernetes.io/service-name': 'web', [LABEL_MANAGED_BY]: value });
  const cases: { name: string; labels: Record<string, string> | undefined; own?: readonly string[]; ours: boolean }[] = [
    { name: 'the EndpointSlice controller (the slicer by default): ours', labels: by(MANAGED_BY_CONTROLLER), ours: true },
    { name: 'the mirroring controller: ours', labels: by(MANAGED_BY_MIRRORING), ours: true },
    { name: 'a multi-cluster importer: foreign', labels: by('endpointslice-controller.multicluster.x-k8s.io'), ours: false },
    { name: 'a custom controller: foreign', labels: by('my-controller'), ours: false },
    { name: 'no managed-by label (hand-written): foreign', labels: { 'kubernetes.io/service-name': 'web' }, ours: false },
    { name: 'no labels at all: foreign', labels: undefined, ours: false },
    { name: 'an empty managed-by value: foreign', labels: by(''), ours: false },
    { name: 'a value differing only in case: foreign (label values are compared exactly)', labels: by('EndpointSlice-Controller.k8s.io'), ours: false },
    { name: 'a slicer with its own MANAGED_BY: its value is ours', labels: by('my-slicer'), own: ['my-slicer'], ours: true },
    { name: "a slicer with its own MANAGED_BY: upstream's controller is then foreign", labels: by(MANAGED_BY_CONTROLLER), own: ['my-slicer'], ours: false },
  ];
  for (const tc of cases) {
    it(tc.name, () => expect(isOwnSlice(tc.labels, ownManagers(tc.own))).toBe(tc.ours));
  }

  it('the default set is the two upstream controllers our slicer writes as', () => {
    expect([...ownManagers()]).toEqual([MANAGED_BY_CONTROLLER, MANAGED_BY_MIRRORING]);
    expect(DEFAULT_OWN_MANAGERS).toEqual([MANAGED_BY_CONTROLLER, MANAGED_BY_MIRRORING]);
  });
});

describe('parseOwnManagers (the MANAGED_BY setting)', () => {
  const good: { name: string; text: string; want: readonly string[] }[] = [
    { name: 'the default', text: DEFAULT_OWN_MANAGERS.join(','), want: DEFAULT_OWN_MANAGERS },
    { name: 'one value', text: 'my-slicer', want: ['my-slicer'] },
    { name: 'blanks and empty items ignored, repeats once', text: ' a , b,,a ', want: ['a', 'b'] },
  ];
  for (const tc of good) it(`accepts ${tc.name}`, () => expect(parseOwnManagers(tc.text)).toEqual(tc.want));

  const bad: { name: string; text: string; error: RegExp }[] = [
    { name: 'nothing', text: ' , ', error: /at least one/ },
    { name: 'a value that is no label value', text: 'ok,not valid!', error: /"not valid!"/ },
    { name: 'a value over 63 characters', text: 'x'.repeat(64), error: /63/ },
  ];
  for (const tc of bad) it(`rejects ${tc.name}`, () => expect(() => parseOwnManagers(tc.text)).toThrow(tc.error));
});

describe('foreignSliceSelector (the server-side form of the rule)', () => {
  it('is a notin over our values, sorted', () => {
    expect(foreignSliceSelector(ownManagers([MANAGED_BY_MIRRORING, MANAGED_BY_CONTROLLER]))).toBe(
      'endpointslice.kubernetes.io/managed-by notin (endpointslice-controller.k8s.io,endpointslicemirroring-controller.k8s.io)',
    );
  });
  it('refuses an empty set', () => expect(() => foreignSliceSelector(ownManagers([]))).toThrow(/no managed-by values/));
});
