// Builders for dataplane states in tests: sensible defaults, overrides for what a case is
// about. They return fresh objects; tests deep-freeze them.

import type { DpEndpoint, DpServicePort, DpState } from '../model.ts';
import { DEFAULT_MASQUERADE_BIT } from '../model.ts';

/** A ready, serving, non-terminating, remote endpoint on port 80 unless overridden. */
export function dpEndpoint(ip: string, o: Partial<DpEndpoint> = {}): DpEndpoint {
  return { ip, port: 80, isLocal: false, ready: true, serving: true, terminating: false, ...o };
}

export interface ServicePortOpts extends Partial<Omit<DpServicePort, 'servicePortName'>> {
  /** All endpoints; Cluster endpoints default to them and Local ones to the local subset when a Local policy applies. */
  readonly endpoints?: readonly DpEndpoint[];
}

/**
 * A TCP ClusterIP service port named `name` (`ns/svc:port`), port 80, with `endpoints` as its
 * Cluster endpoints. Local endpoints are derived when a Local policy is set and not given.
 */
export function dpServicePort(name: string, o: ServicePortOpts = {}): DpServicePort {
  const { endpoints = [], ...rest } = o;
  const internalPolicyLocal = rest.internalPolicyLocal ?? false;
  const externalPolicyLocal = rest.externalPolicyLocal ?? false;
  const externallyAccessible =
    (rest.nodePort ?? 0) > 0 || (rest.externalIPs?.length ?? 0) > 0 || (rest.loadBalancerIPs?.length ?? 0) > 0;
  const usesCluster = !internalPolicyLocal || externallyAccessible;
  const usesLocal = internalPolicyLocal || externalPolicyLocal;
  return {
    servicePortName: name,
    protocol: 'TCP',
    clusterIP: '172.30.0.41',
    port: 80,
    nodePort: null,
    externalIPs: [],
    loadBalancerIPs: [],
    loadBalancerSourceRanges: [],
    sessionAffinityTimeoutSeconds: null,
    internalPolicyLocal,
    externalPolicyLocal,
    healthCheckNodePort: null,
    clusterEndpoints: usesCluster ? endpoints : null,
    localEndpoints: usesLocal ? endpoints.filter((e) => e.isLocal) : null,
    hasAnyEndpoints: endpoints.length > 0,
    ...rest,
  };
}

/** An IPv4 node with pod CIDR 10.0.0.0/8, NodePorts on every local address, mark bit 14. */
export function dpState(servicePorts: readonly DpServicePort[], o: Partial<Omit<DpState, 'servicePorts'>> = {}): DpState {
  return {
    family: 'IPv4',
    nodeIPs: [],
    primaryNodeIP: null,
    podCIDR: '10.0.0.0/8',
    masqueradeAll: false,
    masqueradeBit: DEFAULT_MASQUERADE_BIT,
    servicePorts,
    ...o,
  };
}
