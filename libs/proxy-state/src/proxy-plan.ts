// What one node's proxy programs, per service port: the `slicemesh proxy-plan` payload and
// the richer model the rule renderers consume.

import type { EndpointSlice, IPFamily, Node, Service } from '@slicemesh/model';
import type { CategorizeOptions, CategorizedEndpoints } from './categorize-endpoints.ts';
import { categorizeEndpoints } from './categorize-endpoints.ts';
import type { EndpointInfo } from './merge-endpoints.ts';
import { mergeEndpoints, portKey, sliceServiceName } from './merge-endpoints.ts';
import { compareStrings } from './order.ts';
import type { ServicePortInfo } from './service-port.ts';
import { proxiedServicePorts, servicePortKey } from './service-port.ts';
import { proxyIgnoresService, proxyIgnoresSlice } from './proxy-ignores.ts';

export interface ProxyInput extends CategorizeOptions {
  readonly services: readonly Service[];
  readonly slices: readonly EndpointSlice[];
  readonly nodes: readonly Node[];
  readonly nodeName: string;
  /** One family, or both (IPv4 first) when absent. */
  readonly family?: IPFamily;
}

export interface ProxyModelEntry extends CategorizedEndpoints {
  /** `<ns>/<svc>:<portName>/<proto>`. */
  readonly key: string;
  readonly servicePort: ServicePortInfo;
  /** Every endpoint of the port from the node's slices: merged, de-duplicated (D.2), sorted. */
  readonly merged: readonly EndpointInfo[];
}

export interface ProxyPlanEndpoint {
  readonly endpoint: string;
  readonly isLocal: boolean;
  readonly ready: boolean;
  readonly serving: boolean;
  readonly terminating: boolean;
}

export interface ProxyPlanEntry {
  readonly servicePort: string;
  /**
   * The merged, de-duplicated view of the port's endpoints (all of them, reachable or not),
   * sorted. From a zone view this is the zone's share; the selections below are the same as
   * from all slices.
   */
  readonly endpoints: readonly ProxyPlanEndpoint[];
  /** [] also when the port never uses Cluster policy (the contract has no null here). */
  readonly clusterEndpoints: readonly string[];
  /** null when no Local policy applies to the port. */
  readonly localEndpoints: readonly string[] | null;
}

const FAMILIES: readonly IPFamily[] = ['IPv4', 'IPv6'];

function slicesByService(slices: readonly EndpointSlice[]): Map<string, EndpointSlice[]> {
  const out = new Map<string, EndpointSlice[]>();
  for (const s of slices) {
    const svc = sliceServiceName(s);
    if (svc === null) continue;
    const key = `${s.metadata.namespace ?? 'default'}/${svc}`;
    const list = out.get(key);
    if (list) list.push(s);
    else out.set(key, [s]);
  }
  return out;
}

/**
 * The node's view of every service port it programs, sorted by key, IPv4 before IPv6 for the
 * same key. A port is programmed when its service has a cluster IP of the family (so not
 * headless, not ExternalName); ports without endpoints are still listed. A node missing from
 * `nodes` is treated as a node without labels. What kube-proxy's informers never list (D.2.10:
 * Services labelled for another proxy, slices labelled so or headless) is left out.
 */
export function proxyModel(input: ProxyInput): ProxyModelEntry[] {
  const families = input.family ? [input.family] : FAMILIES;
  const nodeLabels = input.nodes.find((n) => n.metadata.name === input.nodeName)?.metadata.labels;
  const bySvc = slicesByService(input.slices.filter((s) => proxyIgnoresSlice(s) === null));
  const out: (ProxyModelEntry & { readonly familyRank: number })[] = [];
  for (const service of input.services) {
    if (proxyIgnoresService(service) !== null) continue;
    const ns = service.metadata.namespace ?? 'default';
    const slices = bySvc.get(`${ns}/${service.metadata.name}`) ?? [];
    families.forEach((family, familyRank) => {
      const ports = proxiedServicePorts(service, family);
      if (ports.length === 0) return;
      const merged = mergeEndpoints(slices, { nodeName: input.nodeName, family });
      for (const sp of ports) {
        const endpoints: readonly EndpointInfo[] = merged.get(portKey(sp.portName, sp.protocol)) ?? [];
        const cat = categorizeEndpoints(endpoints, sp, input.nodeName, nodeLabels, input);
        out.push({ key: servicePortKey(sp), servicePort: sp, merged: endpoints, familyRank, ...cat });
      }
    });
  }
  out.sort((a, b) => compareStrings(a.key, b.key) || a.familyRank - b.familyRank);
  return out.map(({ familyRank: _rank, ...entry }) => entry);
}

/** The `slicemesh proxy-plan --format json` payload for a model entry. */
export function planEntryOf(m: ProxyModelEntry): ProxyPlanEntry {
  return {
    servicePort: m.key,
    endpoints: m.merged.map((ep) => ({
      endpoint: ep.endpoint,
      isLocal: ep.isLocal,
      ready: ep.ready,
      serving: ep.serving,
      terminating: ep.terminating,
    })),
    clusterEndpoints: (m.clusterEndpoints ?? []).map((ep) => ep.endpoint),
    localEndpoints: m.localEndpoints === null ? null : m.localEndpoints.map((ep) => ep.endpoint),
  };
}

/** `proxyModel` rendered as the CLI's JSON entries (same order). */
export function proxyPlan(input: ProxyInput): ProxyPlanEntry[] {
  return proxyModel(input).map(planEntryOf);
}
