// The one input every renderer reads: what a single-family proxy on one node must program.
// An adapter fills it from the endpoint-selection library (D.3); the renderers never look at
// Kubernetes objects. IPs are expected in canonical text (`canonicalIP`), CIDRs masked.

/** One endpoint as the proxy sees it after merging slices (D.2). */
export interface DpEndpoint {
  /** Canonical IP of the proxy's family. */
  readonly ip: string;
  /** Target port on the endpoint. */
  readonly port: number;
  /** The endpoint runs on this node (D.2.5). */
  readonly isLocal: boolean;
  /** Conditions after defaulting (D.2.4); informational for the rule renderers. */
  readonly ready: boolean;
  readonly serving: boolean;
  readonly terminating: boolean;
}

/** One service port (namespace/name, port name, protocol) of the proxy's family (D.1). */
export interface DpServicePort {
  /** `<ns>/<name>:<portName>`; an unnamed port may be given as `<ns>/<name>:` or `<ns>/<name>`. */
  readonly servicePortName: string;
  readonly protocol: 'TCP' | 'UDP' | 'SCTP';
  /** Cluster IP of this family; null renders no ClusterIP rules (the other entry points still work). */
  readonly clusterIP: string | null;
  /** Service port (the port on the cluster, external and LB IPs). */
  readonly port: number;
  /** null (or 0) when the port has no NodePort. */
  readonly nodePort: number | null;
  /** spec.externalIPs of this family. */
  readonly externalIPs: readonly string[];
  /** LoadBalancer ingress IPs of this family (VIP mode only, D.1.6). */
  readonly loadBalancerIPs: readonly string[];
  /** Masked CIDRs of this family allowed to reach the LB IPs; empty = everyone. */
  readonly loadBalancerSourceRanges: readonly string[];
  /** ClientIP affinity timeout; null without session affinity. */
  readonly sessionAffinityTimeoutSeconds: number | null;
  /** internalTrafficPolicy: Local (D.1.3). */
  readonly internalPolicyLocal: boolean;
  /** externalTrafficPolicy: Local on an externally accessible service (D.1.3). */
  readonly externalPolicyLocal: boolean;
  /** Health-check node port accepted in the filter table (iptables only); null when none. */
  readonly healthCheckNodePort: number | null;
  /** Endpoints for Cluster policy; null when the port does not use Cluster endpoints (D.3.6). */
  readonly clusterEndpoints: readonly DpEndpoint[] | null;
  /** Endpoints for Local policy; null when no Local policy applies (D.3.6). */
  readonly localEndpoints: readonly DpEndpoint[] | null;
  /** Any endpoint anywhere is ready or serving+terminating (D.3.4); false → REJECT everything. */
  readonly hasAnyEndpoints: boolean;
}

/** Everything one single-family proxy programs on one node. */
export interface DpState {
  readonly family: 'IPv4' | 'IPv6';
  /**
   * Addresses that accept NodePort traffic (nodePortAddresses). Empty means every local
   * address except loopback (iptables `addrtype LOCAL`, nftables `fib daddr type local`).
   * Also the IPVS NodePort virtual-server addresses (IPVS renders no NodePorts when empty).
   */
  readonly nodeIPs: readonly string[];
  /**
   * The node's own IP of this family. Used to let the node reach its own LoadBalancer IPs when
   * it lies inside a loadBalancerSourceRange (D.4.10). Absent: `nodeIPs[0]`, or none.
   */
  readonly primaryNodeIP?: string | null;
  /**
   * Local-traffic detector: sources inside this CIDR are pods. ClusterIP traffic from outside
   * is masqueraded and eTP=Local short-circuits pod traffic. null: no detector (only
   * `masqueradeAll` masquerades ClusterIP traffic, no pod short-circuit).
   */
  readonly podCIDR: string | null;
  /** Masquerade every ClusterIP connection. */
  readonly masqueradeAll: boolean;
  /** Bit of the packet mark requesting SNAT; kube-proxy's default is 14 (0x4000), ours 13 (0x2000). */
  readonly masqueradeBit: number;
  readonly servicePorts: readonly DpServicePort[];
}

/** kube-proxy's default masquerade bit (D.8): 0x4000; its drop mark is bit 15, 0x8000. */
export const DEFAULT_MASQUERADE_BIT = 14;

/**
 * Our default masquerade bit beside kube-proxy (D.4.15): 13, 0x2000, clear of kube-proxy's
 * masquerade (0x4000) and drop (0x8000) marks, so neither proxy's POSTROUTING or FORWARD rules
 * act on the other's packets.
 */
export const OWN_MASQUERADE_BIT = 13;

/** More endpoints than this switches iptables to large-cluster mode (D.4.13). */
export const LARGE_CLUSTER_ENDPOINTS_THRESHOLD = 1000;

/** `<ns>/<svc>:<portName>/<proto>`: the key renderers use for per-service bookkeeping. */
export function servicePortKey(sp: Pick<DpServicePort, 'servicePortName' | 'protocol'>): string {
  return `${sp.servicePortName}/${sp.protocol}`;
}

/** Upstream's ServicePortName text: `ns/name:port`, or `ns/name` for an unnamed port. */
export function upstreamPortName(servicePortName: string): string {
  return servicePortName.endsWith(':') ? servicePortName.slice(0, -1) : servicePortName;
}

/** Splits a service port name into namespace, service name and port name ('' if unnamed). */
export function splitPortName(servicePortName: string): { namespace: string; name: string; port: string } {
  const slash = servicePortName.indexOf('/');
  const colon = servicePortName.indexOf(':', slash + 1);
  const namespace = servicePortName.slice(0, slash);
  const name = colon < 0 ? servicePortName.slice(slash + 1) : servicePortName.slice(slash + 1, colon);
  const port = colon < 0 ? '' : servicePortName.slice(colon + 1);
  return { namespace, name, port };
}

/** `ip:port`, bracketing IPv6 (Go's net.JoinHostPort). */
export function joinHostPort(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/** The masquerade mark as kube-proxy prints it (`0x4000` for bit 14). */
export function masqueradeMark(bit: number): string {
  return `0x${(1 << bit >>> 0).toString(16)}`;
}

/** Keys that may name a service port in a partial sync: its key, its name, or its service. */
export function isServicePortChanged(sp: DpServicePort, changed: ReadonlySet<string>): boolean {
  if (changed.has(servicePortKey(sp)) || changed.has(sp.servicePortName)) return true;
  const { namespace, name } = splitPortName(sp.servicePortName);
  return changed.has(`${namespace}/${name}`);
}

/** Service ports in a stable order (by key) so output never depends on input order. */
export function sortedServicePorts(state: DpState): DpServicePort[] {
  const keyed = state.servicePorts.map((sp) => [servicePortKey(sp), sp] as const);
  keyed.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return keyed.map((k) => k[1]);
}
