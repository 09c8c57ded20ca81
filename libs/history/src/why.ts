// `log why --node N ns/svc`: for each endpoint of the Service, whether node N sends traffic to it
// and why, in upstream's terms: readiness, the terminating fallback, the zone (or node) hints
// the node follows or the fallback to every endpoint, internal/externalTrafficPolicy: Local,
// and the hints decision that gave or withheld the hints. The selection itself is
// libs/proxy-state's (categorizeEndpoints); this only explains its result.

import type { EndpointInfo, ProxyModelEntry, TopologyMode } from '@slicemesh/proxy-state';
import { topologyMode } from '@slicemesh/proxy-state';
import { HistoryInputError } from './errors.ts';
import { nodeModel } from './node-program.ts';
import type { StateAt } from './state-at.ts';

export interface WhyEndpoint {
  /** `ip:port` (`[ip]:port` for IPv6). */
  readonly address: string;
  /** `ns/name` of the pod behind it, when the slice names one. */
  readonly pod?: string;
  readonly node?: string;
  readonly zone?: string;
  readonly sends: boolean;
  readonly reasons: readonly string[];
}

export interface WhyPort {
  /** `<ns>/<svc>:<portName>/<proto>`. */
  readonly servicePort: string;
  readonly family: string;
  /** How the node picks among ready endpoints for this port (hints or all). */
  readonly selection: string;
  readonly endpoints: readonly WhyEndpoint[];
}

export interface WhyReport {
  readonly at: StateAt['at'];
  readonly node: string;
  /** '' when the node has no zone label. */
  readonly zone: string;
  readonly service: string;
  /** Service-level facts: the hints decisions, the traffic policies, why no port is programmed. */
  readonly notes: readonly string[];
  readonly ports: readonly WhyPort[];
  /** Every endpoint once (first port's answer; `sends` when any port sends to it). */
  readonly endpoints: readonly WhyEndpoint[];
}

function selectionText(mode: TopologyMode, eps: readonly EndpointInfo[], node: string, zone: string, gate: boolean): string {
  if (mode === 'PreferSameNode') return `every ready endpoint has node hints and some are for ${node}: this node sends only to those (PreferSameNode)`;
  if (mode === 'PreferSameZone') return `every ready endpoint has zone hints and some are for ${zone}: this node sends only to endpoints hinted for ${zone}`;
  const ready = eps.filter((e) => e.ready);
  if (ready.length === 0) return eps.length === 0 ? 'the Service has no endpoints' : 'no endpoint is ready anywhere';
  const unhinted = ready.find((e) => e.zoneHints.length === 0);
  if (unhinted !== undefined) {
    const n = ready.filter((e) => e.zoneHints.length === 0).length;
    return `${n === ready.length ? 'no ready endpoint has zone hints' : `${n} ready endpoint(s) have no zone hint (e.g. ${unhinted.endpoint})`}, so hints are not used: traffic goes to every ready endpoint`;
  }
  if (zone === '') return 'this node has no zone label, so zone hints cannot apply: traffic goes to every ready endpoint (fallback to all)';
  const nodeNote = gate ? '' : ' (node hints are off: the PreferSameTrafficDistribution gate is disabled)';
  return `no endpoint is hinted for ${zone}, so the node falls back to every ready endpoint${nodeNote}`;
}

function readiness(ep: EndpointInfo): string {
  if (ep.ready) return ep.terminating ? 'ready (and terminating)' : 'ready';
  if (ep.serving && ep.terminating) return 'terminating, still serving';
  if (ep.terminating) return 'terminating and no longer serving';
  return 'not ready';
}

function explain(m: ProxyModelEntry, ep: EndpointInfo, node: string, zone: string, mode: TopologyMode): { sends: boolean; reasons: string[] } {
  const reasons = [readiness(ep)];
  const sp = m.servicePort;
  const inCluster = m.clusterEndpoints?.includes(ep) ?? false;
  const inLocal = m.localEndpoints?.includes(ep) ?? false;
  const usable = ep.ready || (ep.serving && ep.terminating);
  if (sp.usesClusterEndpoints) {
    const policy = sp.internalPolicyLocal ? 'external traffic (externalTrafficPolicy: Cluster)' : 'cluster traffic';
    if (inCluster && ep.ready) {
      if (mode === 'PreferSameZone') reasons.push(`hinted for ${ep.zoneHints.join(', ')}, which includes this node's zone ${zone}: used for ${policy}`);
      else if (mode === 'PreferSameNode') reasons.push(`hinted for node ${ep.nodeHints.join(', ')}: used for ${policy}`);
      else reasons.push(`used for ${policy} (no topology preference applies)`);
    } else if (inCluster) reasons.push(`used for ${policy} as the terminating fallback: no endpoint of the port is ready`);
    else if (!usable) reasons.push(`not used for ${policy}: it is neither ready nor serving while terminating`);
    else if (!ep.ready) reasons.push(`not used for ${policy}: ready endpoints exist, so terminating ones are skipped`);
    else if (mode === 'PreferSameZone') reasons.push(`not used for ${policy}: hinted for ${ep.zoneHints.join(', ') || 'no zone'}, not ${zone}`);
    else if (mode === 'PreferSameNode') reasons.push(`not used for ${policy}: hinted for node ${ep.nodeHints.join(', ') || 'none'}, not ${node}`);
  }
  if (sp.usesLocalEndpoints) {
    const which = [sp.internalPolicyLocal ? 'internalTrafficPolicy: Local' : '', sp.externalPolicyLocal ? 'externalTrafficPolicy: Local' : ''].filter((s) => s !== '').join(' and ');
    if (inLocal) reasons.push(`on this node, so used under ${which}${ep.ready ? '' : ' (terminating fallback: no local endpoint is ready)'}`);
    else if (!ep.isLocal) reasons.push(`on ${ep.nodeName ?? 'an unknown node'}, not ${node}: ${which} only sends to this node's endpoints`);
    else reasons.push(`on this node but not used under ${which}: ${usable ? 'a ready local endpoint exists' : 'it is not serving'}`);
  }
  return { sends: inCluster || inLocal, reasons };
}

/**
 * Why node `node` sends (or not) to each endpoint of `service` at `state`. Throws
 * HistoryInputError when the Service is not in the state.
 */
export function whyNode(state: StateAt, node: string, service: { readonly namespace: string; readonly name: string }): WhyReport {
  const key = `${service.namespace}/${service.name}`;
  const svc = state.services.find((s) => s.namespace === service.namespace && s.name === service.name);
  if (svc === undefined) throw new HistoryInputError(`service ${key} is not in the log at sequence ${state.at.seq}`);
  const zone = state.nodes.find((n) => n.name === node)?.zone ?? '';
  const notes: string[] = [];
  if (!state.nodes.some((n) => n.name === node)) notes.push(`node ${node} is not in the log at this point; it is treated as a node without labels`);
  if (svc.service === null) notes.push(`service ${key} does not exist at this point, so no node programs it`);
  for (const d of svc.decisions) {
    // Upstream's Warning Event on the Service, when the decision records one (the safeguard's
    // refusal); the Normal "enabled" one only says a fresh cache saw the Service first.
    const event = d.event?.type === 'Warning' ? ` (Event ${d.event.reason}: ${d.event.message})` : '';
    notes.push(`hints (${d.addressType}): ${d.enabled ? 'given' : 'not given'} — ${d.reason}${event}`);
  }
  const spec = svc.service?.spec;
  if (spec?.internalTrafficPolicy === 'Local') notes.push('internalTrafficPolicy: Local — cluster traffic goes only to endpoints on the sending node');
  if (spec?.externalTrafficPolicy === 'Local') notes.push('externalTrafficPolicy: Local — external traffic goes only to endpoints on the receiving node');
  const pods = new Map<string, string>();
  for (const s of svc.slices) for (const e of s.endpoints) if (e.targetRef?.kind === 'Pod' && e.targetRef.name) for (const a of e.addresses) pods.set(a, `${e.targetRef.namespace ?? svc.namespace}/${e.targetRef.name}`);
  const gate = state.settings.preferSameTrafficDistribution;
  const ports: WhyPort[] = nodeModel(state, node, service).map((m) => {
    const mode = topologyMode(m.merged, node, zone, gate);
    return {
      servicePort: m.key,
      family: m.servicePort.family,
      selection: selectionText(mode, m.merged, node, zone, gate),
      endpoints: m.merged.map((ep) => {
        const pod = pods.get(ep.ip);
        return { address: ep.endpoint, ...(pod ? { pod } : {}), ...(ep.nodeName ? { node: ep.nodeName } : {}), ...(ep.zone ? { zone: ep.zone } : {}), ...explain(m, ep, node, zone, mode) };
      }),
    };
  });
  if (svc.service !== null && ports.length === 0) notes.push('no port of the Service is programmed by kube-proxy (headless, ExternalName, or for another proxy)');
  const seen = new Map<string, WhyEndpoint>();
  for (const p of ports) {
    for (const e of p.endpoints) {
      const had = seen.get(e.address);
      seen.set(e.address, had === undefined ? e : { ...had, sends: had.sends || e.sends });
    }
  }
  return { at: state.at, node, zone, service: key, notes, ports, endpoints: [...seen.values()] };
}
