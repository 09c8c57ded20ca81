// What one hints computation decided for one (service, address type), and why.

import type { AddressType, KubeEvent } from '@slicemesh/model';
import type { HintsMode } from './hints-mode.ts';

export interface HintsDecision {
  /** `<namespace>/<name>` */
  readonly service: string;
  readonly addressType: AddressType;
  /** True when the published slices carry hints computed for the service's mode. */
  readonly enabled: boolean;
  readonly mode: HintsMode;
  /**
   * The event upstream would record on the Service: Warning `TopologyAwareHintsDisabled`
   * (a refusal, or the mode turned away from the annotation path), Normal
   * `TopologyAwareHintsEnabled` (first populated by the cache), or null.
   */
  readonly event: KubeEvent | null;
  /** Always set: why hints are (not) there, in plain words. */
  readonly reason: string;
  /** Annotation path only, when hints were allocated: the per-zone allocation used. */
  readonly allocations?: Readonly<Record<string, { minimum: number; maximum: number; target: number }>>;
}
