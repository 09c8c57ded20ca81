// The KV buckets' entries: `svc` holds each Service's spec under svcKey, `views` the per-zone
// endpoint views (zone-filtered EndpointSlices, as proxies read them: proxySlice in
// @slicemesh/proxy-state) under viewKey. The hints service writes them;
// the agents read them through these parsers, which check that key and value agree.

import type { EndpointSlice, Service } from '@slicemesh/model';
import { LABEL_SERVICE_NAME, validateEndpointSlice, validateService } from '@slicemesh/model';
import type { Parsed } from './kube-event.ts';
import type { ServiceKeyAddress, ViewKeyAddress } from './subjects.ts';
import { parseSvcKey, parseViewKey } from './subjects.ts';

const problem = (e: unknown): string => (e instanceof Error ? e.message : String(e));
const fail = <T>(reason: string, field?: string): Parsed<T> => ({ ok: false, rejection: field === undefined ? { reason } : { reason, field } });

/** An entry of the `svc` bucket of `cluster`: the Service it holds must be the one its key names. */
export function parseServiceSpec(key: string, value: unknown, cluster: string): Parsed<{ readonly addr: ServiceKeyAddress; readonly service: Service }> {
  let addr: ServiceKeyAddress;
  let service: Service;
  try {
    addr = parseSvcKey(key);
    service = validateService(value, `svc ${key}`);
  } catch (e) {
    return fail(problem(e));
  }
  if (addr.cluster !== cluster) return fail(`svc ${key}: cluster ${addr.cluster} is not ${cluster}`, 'key');
  if ((service.metadata.namespace ?? 'default') !== addr.namespace || service.metadata.name !== addr.name) {
    return fail(`svc ${key}: holds Service ${service.metadata.namespace}/${service.metadata.name}`, 'metadata');
  }
  return { ok: true, value: { addr, service } };
}

/** An entry of the `views` bucket for `cluster`'s view `zone`: the slice must be the one its key names. */
export function parseZoneView(key: string, value: unknown, at: { readonly cluster: string; readonly zone: string }): Parsed<{ readonly addr: ViewKeyAddress; readonly slice: EndpointSlice }> {
  let addr: ViewKeyAddress;
  let slice: EndpointSlice;
  try {
    addr = parseViewKey(key);
    slice = validateEndpointSlice(value, `view ${key}`);
  } catch (e) {
    return fail(problem(e));
  }
  if (addr.cluster !== at.cluster || addr.zone !== at.zone) return fail(`view ${key}: not in view ${at.cluster}/${at.zone}`, 'key');
  const ns = slice.metadata.namespace ?? 'default';
  const svc = slice.metadata.labels?.[LABEL_SERVICE_NAME];
  if (ns !== addr.namespace || slice.metadata.name !== addr.slice || svc !== addr.service) {
    return fail(`view ${key}: holds slice ${ns}/${slice.metadata.name} of service ${svc ?? '(none)'}`, 'metadata');
  }
  return { ok: true, value: { addr, slice } };
}
