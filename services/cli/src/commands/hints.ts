// `slicemesh hints`: topology hints for existing slices, as the controller would set them.

import type { KubeObject } from '@slicemesh/model';
import { hintCluster } from '@slicemesh/core';
import { inventory } from './objects.ts';

/**
 * `{"slices": [...], "decisions": [...]}`: every input EndpointSlice in input order (hints
 * set or cleared), and one decision per (service, address type) with the upstream event.
 * Pods and Endpoints in the input are ignored. No slices: both lists empty.
 */
export function hintsCommand(objects: readonly KubeObject[]): unknown {
  const inv = inventory(objects);
  const { slices, decisions } = hintCluster({ nodes: inv.nodes, slices: inv.slices, services: inv.services });
  return { slices, decisions };
}
