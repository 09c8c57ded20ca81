import { LABEL_ZONE } from '@slicemesh/model';
import { UNZONED_VIEW } from '@slicemesh/proxy-state';
import { makeNode } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import type { NodeObservation, ZoneDecision } from './node-zone.ts';
import { describeZoneDecision, initialZoneDecision, nextZoneDecision, viewOfZone, zoneOfView } from './node-zone.ts';

const zoned = (zone: string): NodeObservation => ({ kind: 'upserted', node: makeNode('n1', { zone }) });
const unlabelled: NodeObservation = { kind: 'upserted', node: makeNode('n1') };

describe('the zone decision', () => {
  const cases: { name: string; override: string; observations: NodeObservation[]; want: ZoneDecision }[] = [
    { name: 'nothing read yet: no zone, waiting for the Node', override: '', observations: [], want: { zone: '', source: 'node', node: 'unread' } },
    { name: 'the Node\'s zone label is the zone', override: '', observations: [zoned('zone-a')], want: { zone: 'zone-a', source: 'node', node: 'present' } },
    { name: 'a relabel moves the zone', override: '', observations: [zoned('zone-a'), zoned('zone-b')], want: { zone: 'zone-b', source: 'node', node: 'present' } },
    { name: 'a Node without the label has no zone (the unfiltered view)', override: '', observations: [unlabelled], want: { zone: '', source: 'node', node: 'present' } },
    { name: 'an empty label is no zone, as upstream', override: '', observations: [{ kind: 'upserted', node: makeNode('n1', { labels: { [LABEL_ZONE]: '' } }) }], want: { zone: '', source: 'node', node: 'present' } },
    { name: 'removing the label moves to the unfiltered view', override: '', observations: [zoned('zone-a'), unlabelled], want: { zone: '', source: 'node', node: 'present' } },
    { name: 'a deleted Node keeps the last known zone', override: '', observations: [zoned('zone-a'), { kind: 'deleted' }], want: { zone: 'zone-a', source: 'node', node: 'deleted' } },
    { name: 'a Node deleted and created again takes its new label', override: '', observations: [zoned('zone-a'), { kind: 'deleted' }, zoned('zone-c')], want: { zone: 'zone-c', source: 'node', node: 'present' } },
    { name: 'a Node not yet published: no zone at start', override: '', observations: [{ kind: 'absent' }], want: { zone: '', source: 'node', node: 'unpublished' } },
    { name: 'KUBE unreadable at start: no zone', override: '', observations: [{ kind: 'unreachable' }], want: { zone: '', source: 'node', node: 'unreachable' } },
    { name: 'KUBE unreadable later: the last known zone is kept', override: '', observations: [zoned('zone-b'), { kind: 'unreachable' }], want: { zone: 'zone-b', source: 'node', node: 'unreachable' } },
    { name: 'NODE_ZONE overrides: the zone before anything is read', override: 'zone-x', observations: [], want: { zone: 'zone-x', source: 'override', node: 'unread' } },
    { name: 'NODE_ZONE overrides: the Node\'s label is ignored', override: 'zone-x', observations: [zoned('zone-a')], want: { zone: 'zone-x', source: 'override', node: 'present' } },
    { name: 'NODE_ZONE overrides: a relabel changes nothing', override: 'zone-x', observations: [zoned('zone-a'), zoned('zone-b')], want: { zone: 'zone-x', source: 'override', node: 'present' } },
    { name: 'NODE_ZONE overrides: a missing label changes nothing', override: 'zone-x', observations: [unlabelled, { kind: 'deleted' }], want: { zone: 'zone-x', source: 'override', node: 'deleted' } },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect(tc.observations.reduce(nextZoneDecision, initialZoneDecision(tc.override))).toEqual(tc.want);
    });
  }

  const views = [
    { name: 'a zone reads its own view', zone: 'zone-a', view: 'zone-a' },
    { name: 'no zone reads the unfiltered view', zone: '', view: UNZONED_VIEW },
  ];
  for (const tc of views) {
    it(`${tc.name}, and back`, () => {
      expect(viewOfZone(tc.zone)).toBe(tc.view);
      expect(zoneOfView(tc.view)).toBe(tc.zone);
    });
  }

  const lines: { name: string; d: ZoneDecision; want: RegExp }[] = [
    { name: 'says when it waits for the Node', d: { zone: '', source: 'node', node: 'unread' }, want: /^no zone \(view _\): waiting for Node n1 in KUBE$/ },
    { name: 'says where a followed zone comes from', d: { zone: 'zone-a', source: 'node', node: 'present' }, want: /^zone zone-a from Node n1's topology\.kubernetes\.io\/zone label$/ },
    { name: 'says a deleted Node kept its zone', d: { zone: 'zone-a', source: 'node', node: 'deleted' }, want: /^zone zone-a kept: Node n1 was deleted$/ },
    { name: 'says an unpublished Node left no zone', d: { zone: '', source: 'node', node: 'unpublished' }, want: /kept: KUBE holds no Node n1 yet$/ },
    { name: 'says the override ignores the label', d: { zone: 'zone-x', source: 'override', node: 'unread' }, want: /^zone zone-x from NODE_ZONE; Node n1's label is not followed$/ },
  ];
  for (const tc of lines) it(`the description ${tc.name}`, () => expect(describeZoneDecision(tc.d, 'n1')).toMatch(tc.want));
});
