// Text Postgres cannot hold (U+0000, lone UTF-16 surrogates) is rejected wherever a validator
// reads free text, so one such object is dead-lettered instead of failing its batch's writes.

import { describe, expect, it } from 'vitest';
import { InvalidObjectError } from '../errors.ts';
import { validateEndpoints } from './endpoints.ts';
import { unstorableProblem } from './fields.ts';
import { validatePod } from './pod.ts';
import { patched, thrownBy } from './test-support.ts';

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web-1', namespace: 'shop', uid: 'u1', resourceVersion: '7', annotations: { note: 'ok' } },
  spec: { containers: [{ name: 'c' }] },
};
const endpoints = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'db', namespace: 'shop' }, subsets: [{ addresses: [{ ip: '10.0.0.1' }] }] };

describe('unstorableProblem', () => {
  it.each([
    ['plain text', 'web', null],
    ['other control characters', '\u0001\t\n\u007f', null],
    ['a surrogate pair', '🙂', null],
    ['the replacement character', '\ufffd', null],
    ['NUL', 'a\u0000b', /U\+0000/],
    ['a lone high surrogate', 'a\ud83d', /lone UTF-16 surrogate/],
    ['a lone low surrogate', '\ude42b', /lone UTF-16 surrogate/],
  ])('%s', (_what, s, want) => {
    const p = unstorableProblem(s);
    if (want === null) expect(p).toBeNull();
    else expect(p).toMatch(want);
  });
});

describe('validators reject text that cannot be stored', () => {
  it.each([
    ['an annotation value with NUL', () => validatePod(patched(pod, { 'metadata.annotations["note"]': 'nul\u0000byte' }), 'item 0'), 'metadata.annotations["note"]', /U\+0000/],
    ['an annotation value with a lone surrogate', () => validatePod(patched(pod, { 'metadata.annotations["note"]': 'x\ud800' }), 'item 0'), 'metadata.annotations["note"]', /surrogate/],
    ['a uid with NUL', () => validatePod(patched(pod, { 'metadata.uid': 'u\u0000' }), 'item 0'), 'metadata.uid', /U\+0000/],
    ['an owner reference name with NUL', () => validatePod(patched(pod, { 'metadata.ownerReferences': [{ apiVersion: 'v1', kind: 'X', name: 'a\u0000', uid: 'o' }] }), 'item 0'), 'metadata.ownerReferences[0].name', /U\+0000/],
    ['an Endpoints address (only type-checked otherwise) with NUL', () => validateEndpoints(patched(endpoints, { 'subsets[0].addresses[0].ip': '10.0.0.1\u0000' }), 'item 0'), 'subsets[0].addresses[0].ip', /U\+0000/],
    // A field with a rule of its own gives the API server's reason.
    ['a name with NUL', () => validatePod(patched(pod, { 'metadata.name': 'web\u0000' }), 'item 0'), 'metadata.name', /DNS-1123 subdomain/],
    ['a phase with NUL', () => validatePod(patched(pod, { status: { phase: 'Running\u0000' } }), 'item 0'), 'status.phase', /must be one of/],
  ])('%s', (_what, run, field, reason) => {
    const err = thrownBy(run);
    expect(err).toBeInstanceOf(InvalidObjectError);
    expect((err as InvalidObjectError).field).toBe(field);
    expect((err as InvalidObjectError).message).toMatch(reason);
  });

  it('keeps every other text as it is', () => {
    const annotations = { note: '🙂 \u0001 \ufffd \u2028 $JS.API.STREAM.DELETE.KUBE' };
    expect(validatePod(patched(pod, { 'metadata.annotations': annotations }), 'item 0').metadata.annotations).toEqual(annotations);
  });
});
