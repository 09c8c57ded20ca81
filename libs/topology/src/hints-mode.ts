// C.2: which hinting strategy a Service asked for, with upstream's precedence.

import type { Service } from '@slicemesh/model';
import { ANNOTATION_TOPOLOGY_AWARE_HINTS, ANNOTATION_TOPOLOGY_MODE } from '@slicemesh/model';

/**
 * - `Auto`: the annotation path, CPU-proportional zone hints from the topology cache (C.3).
 * - `PreferClose` / `PreferSameZone`: same-zone hints (C.5.1); `PreferSameNode`: zone + node (C.5.2).
 * - `None`: no hints; existing ones are stripped (C.2.3, C.5.6).
 */
export type HintsMode = 'Auto' | 'PreferClose' | 'PreferSameZone' | 'PreferSameNode' | 'None';

export interface HintsModeOptions {
  /** The `PreferSameTrafficDistribution` feature gate. Default true (GA since 1.35). */
  readonly preferSameTrafficDistribution?: boolean;
}

const HOW_TO_ENABLE = `set spec.trafficDistribution: PreferSameZone, or annotation ${ANNOTATION_TOPOLOGY_MODE}: Auto`;

function isAuto(value: string): boolean {
  return value === 'Auto' || value === 'auto';
}

/**
 * Decides the hints mode (C.2). The deprecated `service.kubernetes.io/topology-aware-hints`
 * annotation, when present, wins over `service.kubernetes.io/topology-mode` whatever its value;
 * only `Auto`/`auto` enable the annotation path. `spec.trafficDistribution` is honoured only
 * when the annotation path is off; unknown values, and `PreferSameZone`/`PreferSameNode` with
 * the gate off, count as unset.
 *
 * Returns `None` with a reason naming what was (not) set when nothing asks for hints.
 */
export function hintsMode(service: Service, opts: HintsModeOptions = {}): { mode: HintsMode; reason: string } {
  const preferSame = opts.preferSameTrafficDistribution ?? true;
  const annotations = service.metadata.annotations ?? {};
  const legacy = annotations[ANNOTATION_TOPOLOGY_AWARE_HINTS];
  const topologyMode = annotations[ANNOTATION_TOPOLOGY_MODE];

  let annotationNote = '';
  if (legacy !== undefined) {
    const shadow = topologyMode !== undefined ? ` (it takes precedence over ${ANNOTATION_TOPOLOGY_MODE}="${topologyMode}")` : '';
    if (isAuto(legacy)) {
      return { mode: 'Auto', reason: `annotation ${ANNOTATION_TOPOLOGY_AWARE_HINTS}="${legacy}" asks for CPU-proportional zone hints${shadow}` };
    }
    annotationNote = `annotation ${ANNOTATION_TOPOLOGY_AWARE_HINTS}="${legacy}" is not "Auto"/"auto", so the annotation path is off${shadow}`;
  } else if (topologyMode !== undefined) {
    if (isAuto(topologyMode)) {
      return { mode: 'Auto', reason: `annotation ${ANNOTATION_TOPOLOGY_MODE}="${topologyMode}" asks for CPU-proportional zone hints` };
    }
    annotationNote = `annotation ${ANNOTATION_TOPOLOGY_MODE}="${topologyMode}" is not "Auto"/"auto" (exact spelling), so the annotation path is off`;
  }
  const prefix = annotationNote === '' ? '' : `${annotationNote}; `;

  const td = service.spec.trafficDistribution;
  switch (td) {
    case 'PreferClose':
      return { mode: 'PreferClose', reason: `${prefix}spec.trafficDistribution=PreferClose asks for same-zone hints` };
    case 'PreferSameZone':
    case 'PreferSameNode': {
      if (!preferSame) {
        return {
          mode: 'None',
          reason: `${prefix}spec.trafficDistribution=${td} needs the PreferSameTrafficDistribution feature gate, which is off, so it counts as unset and no hints are published`,
        };
      }
      const what = td === 'PreferSameZone' ? 'same-zone hints' : 'same-node and same-zone hints';
      return { mode: td, reason: `${prefix}spec.trafficDistribution=${td} asks for ${what}` };
    }
    case undefined:
    case '':
      return {
        mode: 'None',
        reason:
          annotationNote === ''
            ? `nothing asked for hints: no topology annotation and no spec.trafficDistribution (${HOW_TO_ENABLE})`
            : `${prefix}spec.trafficDistribution is not set, so no hints are published (${HOW_TO_ENABLE})`,
      };
    default:
      return {
        mode: 'None',
        reason: `${prefix}spec.trafficDistribution="${td}" is not a known value and counts as unset, so no hints are published (${HOW_TO_ENABLE})`,
      };
  }
}
