import { describe, expect, it } from 'vitest';
import { ApiError } from './api-error.ts';
import { kindInfo } from './kinds.ts';
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from './selectors.ts';
import type { KubeObj } from './types.ts';

describe('label selectors', () => {
  const labels = { app: 'web', tier: 'front', version: '3' };
  const cases: readonly { selector: string; matches: boolean }[] = [
    { selector: '', matches: true },
    { selector: 'app=web', matches: true },
    { selector: 'app==web', matches: true },
    { selector: 'app!=web', matches: false },
    { selector: 'app=web,tier=back', matches: false },
    { selector: 'tier in (front, back)', matches: true },
    { selector: 'tier notin (front)', matches: false },
    { selector: 'canary', matches: false },
    { selector: '!canary', matches: true },
    { selector: 'missing!=x', matches: true },
    { selector: 'version>2', matches: true },
    { selector: 'version<3', matches: false },
    { selector: 'app=web,tier in (front,back),!canary', matches: true },
  ];
  for (const tc of cases) {
    it(`"${tc.selector}" ${tc.matches ? 'matches' : 'does not match'} ${JSON.stringify(labels)}`, () => {
      expect(matchesLabels(parseLabelSelector(tc.selector), labels)).toBe(tc.matches);
    });
  }

  for (const bad of ['=web', 'app in web', 'version>x', 'a b']) {
    it(`rejects "${bad}" with a 400`, () => {
      expect(() => parseLabelSelector(bad)).toThrow(ApiError);
    });
  }

  it('"app=" requires an empty value', () => {
    expect([matchesLabels(parseLabelSelector('app='), { app: 'web' }), matchesLabels(parseLabelSelector('app='), { app: '' })]).toEqual([false, true]);
  });
});

describe('field selectors', () => {
  const pod: KubeObj = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', namespace: 'shop' }, spec: { nodeName: 'n1' }, status: { phase: 'Running' } };
  const cases: readonly { selector: string; matches: boolean }[] = [
    { selector: 'metadata.name=a', matches: true },
    { selector: 'metadata.name==b', matches: false },
    { selector: 'metadata.namespace!=shop', matches: false },
    { selector: 'spec.nodeName=n1,status.phase=Running', matches: true },
    { selector: 'spec.nodeName=', matches: false },
  ];
  for (const tc of cases) {
    it(`"${tc.selector}" ${tc.matches ? 'matches' : 'does not match'} the pod`, () => {
      expect(matchesFields(parseFieldSelector(tc.selector, kindInfo('Pod')), pod)).toBe(tc.matches);
    });
  }

  it('a missing spec.unschedulable reads as "false" for nodes', () => {
    const node: KubeObj = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' } };
    expect(matchesFields(parseFieldSelector('spec.unschedulable=false', kindInfo('Node')), node)).toBe(true);
  });

  it('rejects field labels the kind does not support with a 400', () => {
    expect(() => parseFieldSelector('spec.nodeName=x', kindInfo('Service'))).toThrow('field label not supported: spec.nodeName');
  });
});
