// What a proxy reads of an EndpointSlice, and nothing else: the body of every zone view.
//
// kube-proxy programs from a slice's address type, ports, and per endpoint its addresses,
// conditions, node, zone and hints; it finds the Service by the service-name label, skips slices
// by two other labels (proxy-ignores.ts), and measures network programming from the trigger-time
// annotation. The rest — uid, generation, owner references, the labels copied from the Service,
// each endpoint's targetRef and hostname — is for the API's other readers, and was 40 % of every
// view entry's bytes that a thousand agents received and parsed (the fan-out bench, issue 10). The full slices stay in
// the `hinted` bucket, for the publisher and the CLI.

import type { Endpoint, EndpointSlice, ObjectMeta } from '@slicemesh/model';
import { ANNOTATION_TRIGGER_TIME, LABEL_HEADLESS, LABEL_SERVICE_NAME } from '@slicemesh/model';
import { LABEL_SERVICE_PROXY_NAME } from './proxy-ignores.ts';

const memo = new WeakMap<EndpointSlice, EndpointSlice>();

/** The slice labels a proxy reads: its Service, and the two that make kube-proxy skip it (proxy-ignores.ts). */
export const PROXY_SLICE_LABELS: readonly string[] = [LABEL_SERVICE_NAME, LABEL_SERVICE_PROXY_NAME, LABEL_HEADLESS];

function proxyLabels(labels: Readonly<Record<string, string>> | undefined): Record<string, string> | undefined {
  if (labels === undefined) return undefined;
  const out: Record<string, string> = {};
  let any = false;
  for (const k of PROXY_SLICE_LABELS) {
    const v = labels[k];
    if (v === undefined) continue;
    out[k] = v;
    any = true;
  }
  return any ? out : undefined;
}

function proxyEndpoint(e: Endpoint): Endpoint {
  return {
    addresses: e.addresses,
    conditions: e.conditions,
    ...(e.nodeName !== undefined ? { nodeName: e.nodeName } : {}),
    ...(e.zone !== undefined ? { zone: e.zone } : {}),
    ...(e.hints !== undefined ? { hints: e.hints } : {}),
  };
}

/**
 * `slice` as proxies read it: kind, apiVersion, name, namespace, PROXY_SLICE_LABELS, the
 * trigger-time annotation, address type, ports, and each endpoint's addresses, conditions, nodeName, zone and
 * hints. The same object for the same slice (memoised by identity), so views of one slice in
 * several zones share it.
 */
export function proxySlice(slice: EndpointSlice): EndpointSlice {
  const known = memo.get(slice);
  if (known !== undefined) return known;
  const m = slice.metadata;
  const time = m.annotations?.[ANNOTATION_TRIGGER_TIME];
  const labels = proxyLabels(m.labels);
  const metadata: ObjectMeta = {
    name: m.name,
    ...(m.namespace !== undefined ? { namespace: m.namespace } : {}),
    ...(labels !== undefined ? { labels } : {}),
    ...(time !== undefined ? { annotations: { [ANNOTATION_TRIGGER_TIME]: time } } : {}),
  };
  const out: EndpointSlice = {
    ...(slice.apiVersion !== undefined ? { apiVersion: slice.apiVersion } : {}),
    kind: slice.kind,
    metadata,
    addressType: slice.addressType,
    endpoints: slice.endpoints.map(proxyEndpoint),
    ports: slice.ports,
  };
  memo.set(slice, out);
  return out;
}
