// Objects kube-proxy never sees (D.2.10). Its informers list and watch Services and EndpointSlices with
// the label selector `!service.kubernetes.io/service-proxy-name,!service.kubernetes.io/headless`
// (cmd/kube-proxy/app/server.go), and its slice cache drops slices without the
// `kubernetes.io/service-name` label (pkg/proxy/endpointslicecache.go). So:
//
// - a Service labelled `service.kubernetes.io/service-proxy-name` (any value, "" included) is
//   meant for another proxy: it gets no rules, and neither do its slices, whoever wrote them;
// - a Service or slice labelled `service.kubernetes.io/headless` is not proxied (the
//   EndpointSlice controller puts that label on the slices of headless Services);
// - a slice without a non-empty service-name label belongs to no Service (D.2.1).
//
// The hints service applies these before it publishes anything, so the agents never receive
// what kube-proxy would not program.

import type { EndpointSlice, ObjectMeta, Service } from '@slicemesh/model';
import { LABEL_HEADLESS, LABEL_SERVICE_NAME } from '@slicemesh/model';

/** The label naming the proxy a Service is meant for (upstream's LabelServiceProxyName). */
export const LABEL_SERVICE_PROXY_NAME = 'service.kubernetes.io/service-proxy-name';

function labelledAway(meta: ObjectMeta): string | null {
  const labels = meta.labels;
  if (labels !== undefined && Object.hasOwn(labels, LABEL_SERVICE_PROXY_NAME)) {
    return `it is labelled ${LABEL_SERVICE_PROXY_NAME}=${JSON.stringify(labels[LABEL_SERVICE_PROXY_NAME])}: it is meant for another proxy, which kube-proxy leaves it to`;
  }
  if (labels !== undefined && Object.hasOwn(labels, LABEL_HEADLESS)) return `it is labelled ${LABEL_HEADLESS}, which kube-proxy never programs`;
  return null;
}

/**
 * Why kube-proxy does not see `service` at all, or null when it does (see the file comment).
 *
 * ### Examples
 * ```ts
 * proxyIgnoresService(svc({ labels: { 'service.kubernetes.io/service-proxy-name': 'cilium' } }));
 * // 'it is labelled service.kubernetes.io/service-proxy-name="cilium": it is meant for another proxy, …'
 * ```
 */
export function proxyIgnoresService(service: Service): string | null {
  return labelledAway(service.metadata);
}

/** Why kube-proxy does not program `slice`, or null when it does (see the file comment). */
export function proxyIgnoresSlice(slice: EndpointSlice): string | null {
  const away = labelledAway(slice.metadata);
  if (away !== null) return away;
  const service = slice.metadata.labels?.[LABEL_SERVICE_NAME];
  if (service === undefined || service === '') return `it has no ${LABEL_SERVICE_NAME} label, so it belongs to no Service`;
  return null;
}
