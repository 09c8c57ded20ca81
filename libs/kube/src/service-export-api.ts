// ServiceExport status writes (MCS, multicluster.x-k8s.io/v1alpha1), for the publisher: the
// conditions the multi-cluster service decided, as a JSON merge patch of the status subresource.
// Failures are KubeWriteError, like the EndpointSlice and Event calls, so the same retry rules apply.

import type { KubeConfig } from '@kubernetes/client-node';
import type { ServiceExportCondition } from '@slicemesh/model';
import { apiCaller } from './api-caller.ts';
import { kubeWriteErrorOf } from './slice-api.ts';

/** The calls the status writer makes. Implementations: serviceExportApi, and fakes in tests. */
export interface ServiceExportApi {
  /**
   * Replaces the ServiceExport's status conditions (a merge patch replaces the list whole).
   * False when there is no such ServiceExport (404: deleted, or no MCS CRDs in the cluster).
   */
  patchStatus(namespace: string, name: string, conditions: readonly ServiceExportCondition[]): Promise<boolean>;
}

/** The status subresource's path. */
export function serviceExportStatusPath(namespace: string, name: string): string {
  return `/apis/multicluster.x-k8s.io/v1alpha1/namespaces/${encodeURIComponent(namespace)}/serviceexports/${encodeURIComponent(name)}/status`;
}

export function serviceExportApi(kc: KubeConfig, opts: { readonly timeoutMs?: number; readonly userAgent?: string } = {}): ServiceExportApi {
  const { send } = apiCaller(kc, { timeoutMs: opts.timeoutMs ?? 30_000, userAgent: opts.userAgent ?? 'slicemesh-publisher' });
  return {
    async patchStatus(namespace, name, conditions) {
      const path = serviceExportStatusPath(namespace, name);
      const res = await send('patch', 'PATCH', path, { status: { conditions } }, 'application/merge-patch+json');
      if (res.status === 404) return false;
      if (res.status !== 200) throw kubeWriteErrorOf('patch', path, res);
      return true;
    },
  };
}
