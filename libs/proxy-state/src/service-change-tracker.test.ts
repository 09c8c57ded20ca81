import type { Service } from '@slicemesh/model';
import { deepFreeze, makeService } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { ServiceChangeTracker } from './service-change-tracker.ts';

const web = deepFreeze(makeService('web'));
const web2 = deepFreeze(makeService('web', { ports: [{ name: 'http', port: 81 }] }));
const webRelabeled = deepFreeze(makeService('web', { labels: { team: 'x' } }));
const headless = deepFreeze(makeService('web', { clusterIP: 'None' }));
const other = deepFreeze(makeService('other'));

interface Step {
  readonly previous: Service | null;
  readonly current: Service | null;
  /** What update() returns: is any change pending afterwards? */
  readonly pending: boolean;
}

const cases: { name: string; steps: Step[]; want: Record<string, [number[], number[]]> }[] = [
  { name: 'adding a service is a change', steps: [{ previous: null, current: web, pending: true }], want: { 'default/web': [[], [80]] } },
  {
    name: 'an update that does not change any port is dropped',
    steps: [{ previous: web, current: webRelabeled, pending: false }],
    want: {},
  },
  {
    name: 'add then delete before a sync nets out to nothing',
    steps: [
      { previous: null, current: web, pending: true },
      { previous: web, current: null, pending: false },
    ],
    want: {},
  },
  {
    name: 'changes accumulate: previous is before the first, current after the last',
    steps: [
      { previous: web, current: web2, pending: true },
      { previous: web2, current: webRelabeled, pending: false },
      { previous: webRelabeled, current: web2, pending: true },
    ],
    want: { 'default/web': [[80], [81]] },
  },
  {
    name: 'headless services have no programmed ports, so becoming one is a deletion',
    steps: [{ previous: web, current: headless, pending: true }],
    want: { 'default/web': [[80], []] },
  },
  {
    name: 'a no-op update still reports other pending changes',
    steps: [
      { previous: null, current: other, pending: true },
      { previous: web, current: webRelabeled, pending: true },
    ],
    want: { 'default/other': [[], [80]] },
  },
  { name: 'null -> null changes nothing', steps: [{ previous: null, current: null, pending: false }], want: {} },
];

describe('ServiceChangeTracker', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const t = new ServiceChangeTracker('IPv4');
      for (const s of tc.steps) expect(t.update(s.previous, s.current)).toBe(s.pending);
      const got: Record<string, [number[], number[]]> = {};
      for (const [k, c] of t.checkoutChanges()) got[k] = [[...c.previous.values()].map((p) => p.port), [...c.current.values()].map((p) => p.port)];
      expect(got).toEqual(tc.want);
      expect(t.pendingCount).toBe(0);
    });
  }

  it('port maps are keyed by <ns>/<svc>:<port>/<proto>', () => {
    const t = new ServiceChangeTracker('IPv4');
    t.update(null, web);
    expect([...(t.checkoutChanges().get('default/web')?.current.keys() ?? [])]).toEqual(['default/web:http/TCP']);
  });
});
