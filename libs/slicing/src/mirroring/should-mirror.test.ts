import type { Endpoints, Service } from '@slicemesh/model';
import { ANNOTATION_LEADER, LABEL_SKIP_MIRROR } from '@slicemesh/model';
import { deepFreeze, makeEndpoints, makeService } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { shouldMirror } from './should-mirror.ts';

const selectorless = makeService('ext', { selector: null });

const cases: { name: string; endpoints: Endpoints | null; service: Service | null; want: boolean }[] = [
  { name: 'B.1 mirrors an Endpoints whose Service has a nil selector', endpoints: makeEndpoints('ext'), service: selectorless, want: true },
  { name: 'B.1.1 a missing Endpoints is not mirrored', endpoints: null, service: selectorless, want: false },
  { name: 'B.1.1 skip-mirror "true" stops mirroring', endpoints: makeEndpoints('ext', { labels: { [LABEL_SKIP_MIRROR]: 'true' } }), service: selectorless, want: false },
  { name: 'B.1.1 skip-mirror "false" still mirrors', endpoints: makeEndpoints('ext', { labels: { [LABEL_SKIP_MIRROR]: 'false' } }), service: selectorless, want: true },
  { name: 'B.1.1 skip-mirror "invalid" still mirrors', endpoints: makeEndpoints('ext', { labels: { [LABEL_SKIP_MIRROR]: 'invalid' } }), service: selectorless, want: true },
  { name: 'B.1.1 skip-mirror must be exactly "true" ("True" mirrors)', endpoints: makeEndpoints('ext', { labels: { [LABEL_SKIP_MIRROR]: 'True' } }), service: selectorless, want: true },
  { name: 'B.1.2 a leader-election annotation stops mirroring, whatever its value', endpoints: makeEndpoints('ext', { annotations: { [ANNOTATION_LEADER]: '' } }), service: selectorless, want: false },
  { name: 'B.1.3 a missing Service stops mirroring', endpoints: makeEndpoints('ext'), service: null, want: false },
  { name: 'B.1.4 a Service with a selector stops mirroring', endpoints: makeEndpoints('ext'), service: makeService('ext', { selector: { app: 'ext' } }), want: false },
  { name: 'B.1.4 an absent selector field counts as nil', endpoints: makeEndpoints('ext'), service: makeService('ext', { spec: { selector: undefined } }), want: true },
  { name: 'B.1.4 an empty selector counts as nil (the API server never returns {})', endpoints: makeEndpoints('ext'), service: makeService('ext', { selector: {} }), want: true },
  {
    name: 'B.1.4 an ExternalName Service without selector is mirrored too',
    endpoints: makeEndpoints('ext'),
    service: makeService('ext', { selector: null, spec: { type: 'ExternalName', externalName: 'db.example.com' } }),
    want: true,
  },
];

describe('shouldMirror', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      expect(shouldMirror(deepFreeze(tc.endpoints), deepFreeze(tc.service))).toBe(tc.want);
    });
  }
});
