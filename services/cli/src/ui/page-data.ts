// The JSON the web view's page reads. The engine adapter (engine.ts) turns the history engine's
// results into these shapes, so the page and the routes never depend on the engine's own types.

/** A position in the log: the KUBE sequence and the time of the event there. */
export interface PagePoint {
  readonly seq: number;
  readonly time: string;
}

/** GET /api/summary: what is being looked at and its extent. */
export interface PageSummary {
  /** e.g. `incident.slog`, or `live (stream KUBE, schema slicemesh)`. */
  readonly source: string;
  readonly first: PagePoint;
  readonly latest: PagePoint;
}

/** GET /api/timeline: events per bucket, oldest first. */
export interface PageBucket {
  readonly from: PagePoint;
  readonly to: PagePoint;
  readonly events: number;
}

export interface PageEndpoint {
  readonly address: string;
  readonly pod?: string;
  readonly node?: string;
  readonly zone?: string;
  readonly ready: boolean;
  readonly serving: boolean;
  readonly terminating: boolean;
  /** Zones the endpoint is hinted for; empty without hints. */
  readonly hints: readonly string[];
}

export interface PageSlice {
  readonly name: string;
  readonly addressType: string;
  readonly endpoints: readonly PageEndpoint[];
}

/** One hints decision of a Service, per address type, with upstream's reason in words. */
export interface PageDecision {
  readonly addressType: string;
  readonly outcome: string;
  readonly reason: string;
}

/** What the nodes of one zone are sent for a Service (zone `_`: nodes without a zone). */
export interface PageZoneView {
  readonly zone: string;
  readonly endpoints: readonly string[];
}

export interface PageService {
  readonly namespace: string;
  readonly name: string;
  /** False when the Service object is gone at this point but slices of it remain. */
  readonly exists: boolean;
  readonly slices: readonly PageSlice[];
  readonly decisions: readonly PageDecision[];
  readonly zoneViews: readonly PageZoneView[];
}

export interface PageNode {
  readonly name: string;
  /** Undefined: the node has no zone label. */
  readonly zone?: string;
}

/** GET /api/state?at=SPEC: the cluster as of a point. */
export interface PageState {
  readonly at: PagePoint;
  readonly services: readonly PageService[];
  readonly nodes: readonly PageNode[];
}

export interface PageWhyEndpoint {
  /** `ip:port` (`[ip]:port` for IPv6), per service port as the node programs it. */
  readonly address: string;
  /** The address without the port: what the slices list. */
  readonly ip: string;
  readonly pod?: string;
  readonly zone?: string;
  readonly sends: boolean;
  readonly reasons: readonly string[];
}

/** GET /api/why?at=SPEC&node=N&service=NS/NAME: why node N sends (or not) to each endpoint. */
export interface PageWhy {
  readonly at: PagePoint;
  readonly node: string;
  readonly zone?: string;
  readonly service: { readonly namespace: string; readonly name: string };
  /** Service-level facts: the hints decisions, traffic policies, why nothing is programmed. */
  readonly notes: readonly string[];
  /** Per service port, how the node picks among the ready endpoints. */
  readonly ports: readonly { readonly servicePort: string; readonly selection: string }[];
  /** Every endpoint once; `sends` when any port sends to it. */
  readonly endpoints: readonly PageWhyEndpoint[];
}

/** One node's answer for one endpoint. */
export interface PageEndpointNode {
  readonly node: string;
  readonly zone?: string;
  /** True when the node sends to the endpoint on any port. */
  readonly sends: boolean;
  readonly reasons: readonly string[];
}

/** GET /api/endpoint?at=SPEC&service=NS/NAME&ip=IP: which nodes send to one endpoint, and why. */
export interface PageEndpointWhy {
  readonly at: PagePoint;
  readonly service: { readonly namespace: string; readonly name: string };
  readonly ip: string;
  /** Every node at the point, by name. */
  readonly nodes: readonly PageEndpointNode[];
}
