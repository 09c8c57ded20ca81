// Test builders for proxy-state: endpoints in slices, merged endpoint infos, service ports.

import type { Endpoint, Service } from '@slicemesh/model';
import { makeService } from '@slicemesh/testing';
import type { EndpointInfo } from '../src/merge-endpoints.ts';
import type { ServicePortInfo } from '../src/service-port.ts';
import { servicePortsOf } from '../src/service-port.ts';

export interface EpOpts {
  readonly ready?: boolean;
  readonly serving?: boolean;
  readonly terminating?: boolean;
  readonly node?: string;
  readonly zone?: string;
  readonly forZones?: readonly string[];
  readonly forNodes?: readonly string[];
}

/** An EndpointSlice endpoint; conditions are left nil unless given. */
export function sliceEndpoint(ip: string, o: EpOpts = {}): Endpoint {
  const hints = o.forZones || o.forNodes;
  return {
    addresses: [ip],
    conditions: {
      ...(o.ready !== undefined ? { ready: o.ready } : {}),
      ...(o.serving !== undefined ? { serving: o.serving } : {}),
      ...(o.terminating !== undefined ? { terminating: o.terminating } : {}),
    },
    ...(o.node !== undefined ? { nodeName: o.node } : {}),
    ...(o.zone !== undefined ? { zone: o.zone } : {}),
    ...(hints
      ? {
          hints: {
            ...(o.forZones ? { forZones: o.forZones.map((name) => ({ name })) } : {}),
            ...(o.forNodes ? { forNodes: o.forNodes.map((name) => ({ name })) } : {}),
          },
        }
      : {}),
  };
}

export interface InfoOpts extends EpOpts {
  readonly isLocal?: boolean;
}

/** A merged endpoint `ip:port`; ready/serving default true, terminating false. */
export function endpointInfo(endpoint: string, o: InfoOpts = {}): EndpointInfo {
  const colon = endpoint.lastIndexOf(':');
  return {
    endpoint,
    ip: endpoint.slice(0, colon).replace(/^\[|\]$/g, ''),
    port: Number(endpoint.slice(colon + 1)),
    isLocal: o.isLocal ?? false,
    ready: o.ready ?? true,
    serving: o.serving ?? true,
    terminating: o.terminating ?? false,
    nodeName: o.node ?? null,
    zone: o.zone ?? null,
    zoneHints: [...(o.forZones ?? [])].sort(),
    nodeHints: [...(o.forNodes ?? [])].sort(),
  };
}

export interface PolicyOpts {
  readonly type?: 'ClusterIP' | 'NodePort' | 'LoadBalancer';
  readonly itp?: 'Local' | 'Cluster';
  readonly etp?: 'Local' | 'Cluster';
  readonly externalIPs?: readonly string[];
}

/** A service `web` with one port under the given policies. */
export function policyService(o: PolicyOpts = {}): Service {
  const nodePort = o.type === 'NodePort' || o.type === 'LoadBalancer' ? { nodePort: 30080 } : {};
  return makeService('web', {
    ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP', ...nodePort }],
    spec: {
      ...(o.type ? { type: o.type } : {}),
      ...(o.itp ? { internalTrafficPolicy: o.itp } : {}),
      ...(o.etp ? { externalTrafficPolicy: o.etp } : {}),
      ...(o.externalIPs ? { externalIPs: o.externalIPs } : {}),
    },
  });
}

/** The IPv4 port model of `policyService(o)`. */
export function policyPort(o: PolicyOpts = {}): ServicePortInfo {
  const p = servicePortsOf(policyService(o), 'IPv4')[0];
  if (!p) throw new Error('policyPort: no port');
  return p;
}
