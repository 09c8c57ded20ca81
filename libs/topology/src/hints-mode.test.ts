import { describe, expect, it } from 'vitest';
import { ANNOTATION_TOPOLOGY_AWARE_HINTS as TAH, ANNOTATION_TOPOLOGY_MODE as TM } from '@slicemesh/model';
import { deepFreeze, makeService } from '@slicemesh/testing';
import type { HintsMode } from './hints-mode.ts';
import { hintsMode } from './hints-mode.ts';

interface Case {
  name: string;
  annotations?: Record<string, string>;
  td?: string;
  gate?: boolean;
  mode: HintsMode;
  reason: RegExp;
}

describe('hintsMode (C.2)', () => {
  const cases: Case[] = [
    { name: 'C.2.1 topology-mode=Auto enables the annotation path', annotations: { [TM]: 'Auto' }, mode: 'Auto', reason: /topology-mode="Auto" asks for CPU-proportional/ },
    { name: 'C.2.1 topology-mode=auto enables the annotation path', annotations: { [TM]: 'auto' }, mode: 'Auto', reason: /CPU-proportional/ },
    { name: 'C.2.1 deprecated topology-aware-hints=Auto enables the annotation path', annotations: { [TAH]: 'Auto' }, mode: 'Auto', reason: /topology-aware-hints="Auto"/ },
    { name: 'C.2.1 topology-mode=aUto is not Auto', annotations: { [TM]: 'aUto' }, mode: 'None', reason: /topology-mode="aUto" is not "Auto"\/"auto"/ },
    { name: 'C.2.1 topology-mode=enabled is not Auto', annotations: { [TM]: 'enabled' }, mode: 'None', reason: /"enabled" is not/ },
    {
      name: 'C.2.1 deprecated key wins: topology-aware-hints=disabled + topology-mode=auto -> disabled',
      annotations: { [TAH]: 'disabled', [TM]: 'auto' },
      mode: 'None',
      reason: /topology-aware-hints="disabled" is not .* takes precedence over service.kubernetes.io\/topology-mode="auto"/,
    },
    {
      name: 'C.2.1 deprecated key wins even when empty',
      annotations: { [TAH]: '', [TM]: 'Auto' },
      mode: 'None',
      reason: /topology-aware-hints="" is not/,
    },
    {
      name: 'C.2.1 deprecated key Auto wins over topology-mode=Disabled',
      annotations: { [TAH]: 'auto', [TM]: 'Disabled' },
      mode: 'Auto',
      reason: /takes precedence over .*topology-mode="Disabled"/,
    },
    { name: 'C.2.2 annotation Auto wins over trafficDistribution', annotations: { [TM]: 'Auto' }, td: 'PreferSameNode', mode: 'Auto', reason: /CPU-proportional/ },
    { name: 'C.2.2 PreferClose is always valid', td: 'PreferClose', gate: false, mode: 'PreferClose', reason: /PreferClose asks for same-zone hints/ },
    { name: 'C.2.2 PreferSameZone with the gate on (default)', td: 'PreferSameZone', mode: 'PreferSameZone', reason: /same-zone hints/ },
    { name: 'C.2.2 PreferSameNode with the gate on', td: 'PreferSameNode', gate: true, mode: 'PreferSameNode', reason: /same-node and same-zone hints/ },
    { name: 'C.2.2 PreferSameZone with the gate off counts as unset', td: 'PreferSameZone', gate: false, mode: 'None', reason: /feature gate, which is off/ },
    { name: 'C.2.2 PreferSameNode with the gate off counts as unset', td: 'PreferSameNode', gate: false, mode: 'None', reason: /PreferSameTrafficDistribution feature gate/ },
    {
      name: 'C.2.2 trafficDistribution is honoured when the annotation is present but not Auto',
      annotations: { [TAH]: 'disabled', [TM]: 'auto' },
      td: 'PreferClose',
      mode: 'PreferClose',
      reason: /annotation path is off .*; spec.trafficDistribution=PreferClose/,
    },
    { name: 'C.2.2 unknown trafficDistribution counts as unset', td: 'PreferRegion', mode: 'None', reason: /"PreferRegion" is not a known value/ },
    { name: 'C.2.2 trafficDistribution values are case-sensitive', td: 'preferclose', mode: 'None', reason: /not a known value/ },
    { name: 'C.2.3 nothing set: None, and the reason says nothing asked', mode: 'None', reason: /^nothing asked for hints: .*set spec.trafficDistribution: PreferSameZone/ },
    { name: 'C.2.3 empty trafficDistribution is unset', td: '', mode: 'None', reason: /^nothing asked for hints/ },
    { name: 'C.2.3 annotation off and no trafficDistribution', annotations: { [TM]: 'Disabled' }, mode: 'None', reason: /annotation path is off; spec.trafficDistribution is not set/ },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const svc = deepFreeze(
        makeService('web', { ...(tc.annotations ? { annotations: tc.annotations } : {}), ...(tc.td !== undefined ? { spec: { trafficDistribution: tc.td } } : {}) }),
      );
      const got = hintsMode(svc, tc.gate === undefined ? undefined : { preferSameTrafficDistribution: tc.gate });
      expect(got.mode).toBe(tc.mode);
      expect(got.reason).toMatch(tc.reason);
    });
  }
});
