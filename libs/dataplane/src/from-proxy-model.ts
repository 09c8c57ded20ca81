// The adapter from endpoint selection (@slicemesh/proxy-state's proxyModel) to the renderers'
// input, shared by the CLI's proxy-plan and the proxy-agent.

import type { EndpointInfo, ProxyModelEntry } from '@slicemesh/proxy-state';
import type { DpEndpoint, DpServicePort } from './model.ts';

const toDp = (ep: EndpointInfo): DpEndpoint => ({ ip: ep.ip, port: ep.port, isLocal: ep.isLocal, ready: ep.ready, serving: ep.serving, terminating: ep.terminating });

/** One service port as the renderers take it: the port's settings and its categorized endpoints. */
export function dpServicePort(m: ProxyModelEntry): DpServicePort {
  const sp = m.servicePort;
  return {
    servicePortName: sp.servicePortName,
    protocol: sp.protocol,
    clusterIP: sp.clusterIP,
    port: sp.port,
    nodePort: sp.nodePort,
    externalIPs: sp.externalIPs,
    loadBalancerIPs: sp.loadBalancerIPs,
    loadBalancerSourceRanges: sp.loadBalancerSourceRanges,
    sessionAffinityTimeoutSeconds: sp.sessionAffinityTimeoutSeconds,
    internalPolicyLocal: sp.internalPolicyLocal,
    externalPolicyLocal: sp.externalPolicyLocal,
    healthCheckNodePort: sp.healthCheckNodePort,
    clusterEndpoints: m.clusterEndpoints === null ? null : m.clusterEndpoints.map(toDp),
    localEndpoints: m.localEndpoints === null ? null : m.localEndpoints.map(toDp),
    hasAnyEndpoints: m.hasAnyEndpoints,
  };
}
