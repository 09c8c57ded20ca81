// The agent's node subject written by two watcher replicas (docs/architecture.md, "Watcher
// replicas"): a lagging replica's older version of the Node, landing after a newer one, must not
// move the agent back to the old zone.

import type { RawKubeMessage } from '@slicemesh/contracts';
import { DELETED, UPSERTED, changeEvent, kubeNodeSubject } from '@slicemesh/contracts';
import { createLogger } from '@slicemesh/runtime';
import { FakeClock } from '@slicemesh/runtime';
import { makeNode } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { NodeFollower } from './node-follower.ts';
import { initialZoneDecision } from './node-zone.ts';
import type { ZoneDecision } from './node-zone.ts';
import type { NodeMessageSource } from './node-follower.ts';

const C = 'c1';

/** `<zone>@<rv>` upserts, `-@<rv>` deletes. */
function message(step: string): RawKubeMessage {
  const [zone, rv] = step.split('@') as [string, string];
  const base = makeNode('node-a1', zone === '-' ? { zone: 'zone-a' } : { zone });
  const node = { ...base, metadata: { ...base.metadata, resourceVersion: rv } };
  const event = changeEvent(zone === '-' ? DELETED : UPSERTED, C, node, '2026-01-01T00:00:00Z');
  return { subject: kubeNodeSubject({ cluster: C, name: 'node-a1' }, { prefix: '' }), data: JSON.parse(JSON.stringify(event)) as unknown };
}

function follower(): { follower: NodeFollower; decisions: ZoneDecision[] } {
  const decisions: ZoneDecision[] = [];
  const unused: NodeMessageSource = { follow: () => ({ [Symbol.asyncIterator]: () => ({ next: () => Promise.resolve({ done: true, value: undefined }) }) }) };
  const f = new NodeFollower({
    decode: { cluster: C, prefix: '' }, nodeName: 'node-a1', source: unused, initial: initialZoneDecision(''),
    onDecision: (next) => void decisions.push(next), clock: new FakeClock(0), log: createLogger({ service: 'proxy-agent', level: 'silent' }),
  });
  return { follower: f, decisions };
}

describe('NodeFollower: its node subject published by two watcher replicas', () => {
  const cases: { name: string; steps: string[]; zone: string; node: ZoneDecision['node'] }[] = [
    { name: 'an older version after a relabel keeps the new zone', steps: ['zone-a@5', 'zone-b@8', 'zone-a@5'], zone: 'zone-b', node: 'present' },
    { name: 'an older version between two relabels is skipped, the newest wins', steps: ['zone-a@5', 'zone-b@8', 'zone-a@6', 'zone-c@9'], zone: 'zone-c', node: 'present' },
    { name: 'an older version after the delete does not bring the Node back', steps: ['zone-a@5', '-@7', 'zone-b@6'], zone: 'zone-a', node: 'deleted' },
    { name: 'an older delete (one replica synthesised it from its seed) after a newer version leaves the Node present', steps: ['zone-a@5', 'zone-b@9', '-@5'], zone: 'zone-b', node: 'present' },
    { name: 'a re-created Node (a newer version after the delete) is followed', steps: ['zone-a@5', '-@7', 'zone-b@12'], zone: 'zone-b', node: 'present' },
    { name: 'versions are compared as integers, not text', steps: ['zone-a@9', 'zone-b@10', 'zone-a@9'], zone: 'zone-b', node: 'present' },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const h = follower();
      for (const s of tc.steps) expect(h.follower.handle(message(s))).toBe(true);
      expect({ zone: h.follower.decision.zone, node: h.follower.decision.node }).toEqual({ zone: tc.zone, node: tc.node });
    });
  }

  it('the same version read again after a failure restores what is known of the Node', () => {
    const h = follower();
    h.follower.handle(message('zone-b@8'));
    h.follower.observe({ kind: 'unreachable' });
    h.follower.handle(message('zone-b@8'));
    expect(h.follower.decision).toEqual({ zone: 'zone-b', source: 'node', node: 'present' });
  });

  it('an older version read first after a failure restores the newest one, not its own', () => {
    const h = follower();
    h.follower.handle(message('zone-b@8'));
    h.follower.observe({ kind: 'unreachable' });
    h.follower.handle(message('zone-a@5'));
    expect(h.follower.decision).toEqual({ zone: 'zone-b', source: 'node', node: 'present' });
  });
});
