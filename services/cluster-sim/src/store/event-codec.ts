// Events exist once and are served twice: as core/v1 `events` (what the store keeps) and as
// events.k8s.io/v1 `events`, whose fields carry other names. These functions rename between
// the two as upstream's conversion does, and emit the zero values Go's JSON encoder writes
// (structs as `{}`, unset times as `null`).
import type { KubeObj } from './types.ts';

/** events.k8s.io/v1 field name → core/v1 field name, for the fields that differ. */
const RENAMED: readonly (readonly [wire: string, core: string])[] = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
  ['reportingController', 'reportingComponent'],
];

const CORE_NAMES = new Set(RENAMED.map(([, c]) => c));
const WIRE_NAMES = new Set(RENAMED.map(([w]) => w));

/** Field selector keys of events.k8s.io/v1, mapped onto the core field labels. */
export const EVENTS_V1_FIELD_LABELS: Readonly<Record<string, string>> = {
  'regarding.kind': 'involvedObject.kind',
  'regarding.namespace': 'involvedObject.namespace',
  'regarding.name': 'involvedObject.name',
  'regarding.uid': 'involvedObject.uid',
  'regarding.apiVersion': 'involvedObject.apiVersion',
  'regarding.resourceVersion': 'involvedObject.resourceVersion',
  'regarding.fieldPath': 'involvedObject.fieldPath',
  reportingController: 'reportingComponent',
  reason: 'reason',
  source: 'source',
  type: 'type',
};

/** Optional strings Go omits when empty in events.k8s.io/v1. */
const OMIT_EMPTY = new Set(['reportingController', 'reportingInstance', 'note', 'reason', 'type', 'action']);

/** A stored (core/v1) Event as events.k8s.io/v1 returns it. */
export function coreEventToEventsV1(obj: KubeObj): KubeObj {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj)) {
    if (!CORE_NAMES.has(key)) out[key] = value;
  }
  for (const [wire, core] of RENAMED) {
    const value = obj[core];
    if (value !== undefined) out[wire] = value;
  }
  for (const key of OMIT_EMPTY) if (out[key] === '') delete out[key];
  if (out['deprecatedCount'] === 0) delete out['deprecatedCount'];
  return { ...(out as unknown as KubeObj), apiVersion: 'events.k8s.io/v1', kind: 'Event', regarding: out['regarding'] ?? {}, deprecatedSource: out['deprecatedSource'] ?? {} };
}

/** An events.k8s.io/v1 Event in the stored core/v1 form. Core field names in the body are dropped, as decoding would. */
export function eventsV1ToCoreEvent(obj: KubeObj): KubeObj {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj)) {
    if (!WIRE_NAMES.has(key) && !CORE_NAMES.has(key)) out[key] = value;
  }
  for (const [wire, core] of RENAMED) {
    const value = obj[wire];
    if (value !== undefined) out[core] = value;
  }
  return { ...(out as unknown as KubeObj), apiVersion: 'v1', kind: 'Event' };
}
