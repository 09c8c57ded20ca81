// The web view's one adapter to the history engine (@slicemesh/history): the same calls the
// `slicemesh log` commands make — resolvePoint, timeline, stateAt, whyNode — on the same
// sources (openLogFile, openLiveLog), with their answers turned into the page's JSON
// (page-data.ts). Nothing here computes state of its own.
import type { EndpointSlice } from '@slicemesh/model';
import type { LogSource, ServiceState, StateAt, WhyReport } from '@slicemesh/history';
import { HistoryInputError, openLogFile, resolvePoint, stateAt, timeline, whyNode } from '@slicemesh/history';
import type { LiveLogOptions } from '../log/live-log.ts';
import { openLiveLog } from '../log/live-log.ts';
import type { PageBucket, PageEndpoint, PageEndpointNode, PageEndpointWhy, PagePoint, PageService, PageSlice, PageState, PageSummary, PageWhy } from './page-data.ts';
import { UiInputError, UiNotFoundError } from './ui-errors.ts';

export interface UiEngine {
  /** What is shown: the file path, or `live: <stream> on <server>`. */
  readonly source: string;
  summary(): Promise<PageSummary>;
  timeline(buckets: number): Promise<PageBucket[]>;
  /** The state at `at` (a point as `log at` takes it). */
  state(at: string): Promise<PageState>;
  why(at: string, node: string, service: { readonly namespace: string; readonly name: string }): Promise<PageWhy>;
  /** Which nodes send to the endpoint `ip` of `service` at `at`, and why. */
  endpoint(at: string, service: { readonly namespace: string; readonly name: string }, ip: string): Promise<PageEndpointWhy>;
  close(): Promise<void>;
}

/** An exported log (`file`) or the live streams (`live`). */
export type UiSourceOptions = { readonly file: string } | { readonly live: LiveLogOptions };

const point = (p: { seq: number; time: string }): PagePoint => ({ seq: p.seq, time: p.time });

function pageSlice(s: EndpointSlice): PageSlice {
  const endpoints: PageEndpoint[] = s.endpoints.flatMap((e) =>
    e.addresses.map((address) => ({
      address,
      ...(e.targetRef?.kind === 'Pod' && e.targetRef.name ? { pod: e.targetRef.name } : {}),
      ...(e.nodeName ? { node: e.nodeName } : {}),
      ...(e.zone ? { zone: e.zone } : {}),
      // Unset conditions mean ready and serving, as kube-proxy reads them.
      ready: e.conditions.ready ?? true,
      serving: e.conditions.serving ?? e.conditions.ready ?? true,
      terminating: e.conditions.terminating ?? false,
      hints: (e.hints?.forZones ?? []).map((z) => z.name),
    })),
  );
  return { name: s.metadata.name, addressType: s.addressType, endpoints };
}

function pageService(s: ServiceState): PageService {
  return {
    namespace: s.namespace,
    name: s.name,
    exists: s.service !== null,
    slices: s.slices.map(pageSlice),
    decisions: s.decisions.map((d) => ({ addressType: d.addressType, outcome: d.enabled ? 'enabled' : 'disabled', reason: d.reason })),
    zoneViews: Object.entries(s.zoneViews)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([zone, slices]) => ({ zone, endpoints: [...new Set(slices.flatMap((x) => x.endpoints.flatMap((e) => e.addresses)))] })),
  };
}

function pageState(s: StateAt): PageState {
  return { at: point(s.at), services: s.services.map(pageService), nodes: s.nodes.map((n) => (n.zone === '' ? { name: n.name } : { name: n.name, zone: n.zone })) };
}

/** `10.1.0.2:8080` → `10.1.0.2`; `[fd00::2]:8080` → `fd00::2`. */
export function ipOfEndpoint(address: string): string {
  if (address.startsWith('[')) return address.slice(1, address.indexOf(']'));
  const colon = address.lastIndexOf(':');
  return colon < 0 ? address : address.slice(0, colon);
}

function pageWhy(w: WhyReport, service: { readonly namespace: string; readonly name: string }): PageWhy {
  return {
    at: point(w.at),
    node: w.node,
    ...(w.zone !== '' ? { zone: w.zone } : {}),
    service: { namespace: service.namespace, name: service.name },
    notes: w.notes,
    ports: w.ports.map((p) => ({ servicePort: p.servicePort, selection: p.selection })),
    endpoints: w.endpoints.map((e) => ({ address: e.address, ip: ipOfEndpoint(e.address), ...(e.pod ? { pod: e.pod } : {}), ...(e.zone ? { zone: e.zone } : {}), sends: e.sends, reasons: e.reasons })),
  };
}

/**
 * The endpoint `ip` as every node sees it: `whyNode` for each node of the state, reduced to that
 * endpoint (it sends when any port does; the reasons are the first port's). Undefined when no
 * node's answer holds the address, i.e. it is no endpoint of the Service.
 */
export function endpointAcrossNodes(state: StateAt, service: { readonly namespace: string; readonly name: string }, ip: string): PageEndpointNode[] | undefined {
  let found = false;
  const nodes = state.nodes.map((n) => {
    const mine = whyNode(state, n.name, service).endpoints.filter((e) => ipOfEndpoint(e.address) === ip);
    if (mine.length > 0) found = true;
    return { node: n.name, ...(n.zone !== '' ? { zone: n.zone } : {}), sends: mine.some((e) => e.sends), reasons: mine[0]?.reasons ?? [] };
  });
  return found ? nodes : undefined;
}

/** The engine's "that is not in the log" errors are the caller's to fix: 400 for the routes. */
async function asInput<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof HistoryInputError) throw new UiInputError(err.message, { cause: err });
    throw err;
  }
}

/** `state` when it holds `service`; else a 404 naming the point (whyNode's own error would be a 400). */
function withService(state: StateAt, service: { readonly namespace: string; readonly name: string }): StateAt {
  if (state.services.some((x) => x.namespace === service.namespace && x.name === service.name)) return state;
  throw new UiNotFoundError(`service ${service.namespace}/${service.name} is not in the log at sequence ${state.at.seq}`);
}

/** States kept per point: moving back and forth on the timeline, and the "why" of a shown state, replay nothing. */
const STATES_KEPT = 16;

/** The web view's engine over an open LogSource; close() closes the source. */
export function uiEngineOf(src: LogSource): UiEngine {
  const states = new Map<number, Promise<StateAt>>();
  const stateOfSpec = async (spec: string): Promise<StateAt> => {
    const at = await asInput(() => resolvePoint(src, spec));
    let s = states.get(at.seq);
    if (s === undefined) {
      s = stateAt(src, at);
      s.catch(() => states.delete(at.seq));
      states.set(at.seq, s);
      if (states.size > STATES_KEPT) states.delete(states.keys().next().value as number);
    }
    return asInput(() => s);
  };
  const timelines = new Map<string, Promise<PageBucket[]>>();
  const source = src.kind === 'file' ? src.description : `live: ${src.description}`;
  return {
    source,
    summary: async () => {
      const b = await src.bounds();
      if (b === null) throw new UiInputError(`the log (${src.description}) holds no events yet`);
      return { source, first: point(b.first), latest: point(b.last) };
    },
    timeline: async (buckets) => {
      // Counting reads the whole log: count again only when it has grown (a live log).
      const last = (await src.bounds())?.last.seq ?? 0;
      const key = `${last}/${buckets}`;
      let t = timelines.get(key);
      if (t === undefined) {
        t = asInput(() => timeline(src, buckets)).then((bs) => bs.map((b) => ({ from: point(b.from), to: point(b.to), events: b.events })));
        t.catch(() => timelines.delete(key));
        timelines.set(key, t);
        if (timelines.size > 4) timelines.delete(timelines.keys().next().value as string);
      }
      return t;
    },
    state: async (at) => pageState(await stateOfSpec(at)),
    why: async (at, node, service) => {
      const s = withService(await stateOfSpec(at), service);
      return pageWhy(whyNode(s, node, service), service);
    },
    endpoint: async (at, service, ip) => {
      const s = withService(await stateOfSpec(at), service);
      const nodes = endpointAcrossNodes(s, service, ip);
      if (nodes === undefined) throw new UiNotFoundError(`${ip} is not an endpoint of ${service.namespace}/${service.name} that a node programs at sequence ${s.at.seq}`);
      return { at: point(s.at), service: { namespace: service.namespace, name: service.name }, ip, nodes };
    },
    close: () => src.close(),
  };
}

/** Opens the log the view reads; HistoryInputError (a missing or malformed file) becomes UiInputError. */
export async function openUiEngine(opts: UiSourceOptions): Promise<UiEngine> {
  const src = 'file' in opts ? await asInput(() => openLogFile(opts.file)) : await openLiveLog(opts.live);
  return uiEngineOf(src);
}
