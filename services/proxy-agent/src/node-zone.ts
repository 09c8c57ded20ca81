// Which zone the agent reads, decided purely from what it knows about its own Node (habit 1):
// NODE_ZONE when set, otherwise the Node's topology.kubernetes.io/zone label as the last KUBE
// message for the Node carries it. Upstream kube-proxy takes the same label from its Node and
// follows relabels the same way, without a restart.

import type { Node } from '@slicemesh/model';
import { LABEL_ZONE } from '@slicemesh/model';
import { UNZONED_VIEW } from '@slicemesh/proxy-state';

/** What the log last said about the Node (or why nothing was read). */
export type NodeStatus =
  /** Not read yet (or not read at all: NODE_ZONE is set). */
  | 'unread'
  /** The Node exists; its zone label is taken as it is. */
  | 'present'
  /** The last message deletes the Node: the last known zone is kept. */
  | 'deleted'
  /** KUBE holds no message for the Node (not published yet): the zone known so far is kept. */
  | 'unpublished'
  /** KUBE could not be read: the zone known so far is kept. */
  | 'unreachable';

export interface ZoneDecision {
  /** The zone label value; '' for none, which reads the unfiltered view. */
  readonly zone: string;
  /** NODE_ZONE (the Node is not consulted) or the Node's label. */
  readonly source: 'override' | 'node';
  readonly node: NodeStatus;
}

/** One thing learnt about the Node. */
export type NodeObservation =
  | { readonly kind: 'upserted'; readonly node: Node }
  | { readonly kind: 'deleted' }
  /** The first read found no message for the Node. */
  | { readonly kind: 'absent' }
  /** The read failed (the stream is missing, the server is away). */
  | { readonly kind: 'unreachable' };

/** The view a zone reads: the zone itself, or UNZONED_VIEW for ''. */
export function viewOfZone(zone: string): string {
  return zone === '' ? UNZONED_VIEW : zone;
}

/** The zone of a view (the inverse of viewOfZone; no label value can be UNZONED_VIEW). */
export function zoneOfView(view: string): string {
  return view === UNZONED_VIEW ? '' : view;
}

/** The Node's zone label; '' when it has none or an empty one (upstream: no zone). */
export function zoneLabelOf(node: Node): string {
  return node.metadata.labels?.[LABEL_ZONE] ?? '';
}

/**
 * The decision before anything was read: NODE_ZONE when set (non-empty), otherwise no zone
 * until the Node says otherwise.
 *
 * @example initialZoneDecision('zone-a') // { zone: 'zone-a', source: 'override', node: 'unread' }
 */
export function initialZoneDecision(override: string): ZoneDecision {
  return override !== '' ? { zone: override, source: 'override', node: 'unread' } : { zone: '', source: 'node', node: 'unread' };
}

/**
 * The decision after `obs`. An override keeps its zone whatever the Node says. Otherwise an
 * upserted Node gives its label ('' without one); a deleted, unpublished or unreadable Node keeps
 * the zone known so far, so a node that leaves the log for a moment does not flap to `_`.
 */
export function nextZoneDecision(current: ZoneDecision, obs: NodeObservation): ZoneDecision {
  switch (obs.kind) {
    case 'upserted':
      return current.source === 'override' ? { ...current, node: 'present' } : { zone: zoneLabelOf(obs.node), source: 'node', node: 'present' };
    case 'deleted':
      return { ...current, node: 'deleted' };
    case 'absent':
      return { ...current, node: 'unpublished' };
    case 'unreachable':
      return { ...current, node: 'unreachable' };
    default: {
      const never: never = obs;
      return never;
    }
  }
}

/** One line for readiness and logs: where the zone comes from and what is known of the Node. */
export function describeZoneDecision(d: ZoneDecision, nodeName: string): string {
  const view = d.zone === '' ? `no zone (view ${UNZONED_VIEW})` : `zone ${d.zone}`;
  if (d.source === 'override') return `${view} from NODE_ZONE; Node ${nodeName}'s label is not followed`;
  switch (d.node) {
    case 'unread':
      return `${view}: waiting for Node ${nodeName} in KUBE`;
    case 'present':
      return `${view} from Node ${nodeName}'s ${LABEL_ZONE} label`;
    case 'deleted':
      return `${view} kept: Node ${nodeName} was deleted`;
    case 'unpublished':
      return `${view} kept: KUBE holds no Node ${nodeName} yet`;
    case 'unreachable':
      return `${view} kept: Node ${nodeName} cannot be read from KUBE`;
    default: {
      const never: never = d.node;
      return never;
    }
  }
}
