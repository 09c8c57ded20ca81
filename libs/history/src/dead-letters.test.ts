import { describe, expect, it } from 'vitest';
import type { DeadLetterBody } from '@slicemesh/contracts';
import { redrivePlan } from './dead-letters.ts';

const letter = (body: Partial<DeadLetterBody>) => ({ seq: 4, time: 't', subject: 'dlq.c.slicer', stage: 'slicer', body: { reason: 'r', at: 't', object: '{"a":1}', objectBytes: 7, truncated: false, subject: 'kube.c.0.pod.ns.p', ...body } });

describe('redrivePlan', () => {
  it.each([
    ['a whole JSON message from a stream is redriven to its subject', letter({}), { redrive: true, subject: 'kube.c.0.pod.ns.p', body: { a: 1 } }],
    ['a letter without a subject never reached a stream', letter({ subject: undefined }), { redrive: false, why: expect.stringMatching(/before it reached a stream/) }],
    ['a truncated letter lost part of its message', letter({ truncated: true, objectBytes: 70000 }), { redrive: false, why: expect.stringMatching(/only the first 7 characters of its 70000 bytes/) }],
    ['a letter whose text is not JSON', letter({ object: 'not json' }), { redrive: false, why: expect.stringMatching(/not JSON/) }],
  ])('%s', (_name, l, want) => {
    expect(redrivePlan([l])[0]).toMatchObject({ seq: 4, ...want });
  });
});
