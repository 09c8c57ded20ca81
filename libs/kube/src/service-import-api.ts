// ServiceImport calls (MCS, multicluster.x-k8s.io/v1alpha1), for the publisher's import writer:
// get, list by label, create, replace (PUT with the resourceVersion read), the status as a JSON
// merge patch of the status subresource, and delete with preconditions. Failures are
// KubeWriteError, like the EndpointSlice and Event calls, so the same retry rules apply.

import type { KubeConfig } from '@kubernetes/client-node';
import type { ServiceImport, ServiceImportStatus } from '@slicemesh/model';
import { apiCaller } from './api-caller.ts';
import { KubeWriteError, kubeWriteErrorOf } from './slice-api.ts';

/** The calls the import writer makes. Implementations: serviceImportApi, and wrappers in tests. */
export interface ServiceImportApi {
  /** Undefined when there is none (404). */
  get(namespace: string, name: string): Promise<ServiceImport | undefined>;
  /** Every ServiceImport of every namespace that `labelSelector` selects (all pages). */
  list(labelSelector: string): Promise<ServiceImport[]>;
  /** Creates it; a real API server drops the status of a create (the status subresource is separate). */
  create(serviceImport: ServiceImport): Promise<ServiceImport>;
  /** Replaces it; metadata.resourceVersion, when set, makes it conditional (409 Conflict when stale). */
  replace(serviceImport: ServiceImport): Promise<ServiceImport>;
  /** Sets status.clusters (a merge patch replaces the list whole; conditions are left). False when there is no such ServiceImport. */
  patchStatus(namespace: string, name: string, status: ServiceImportStatus): Promise<boolean>;
  /** Deletes that very object (uid and resourceVersion preconditions). False when it is already gone. */
  delete(namespace: string, name: string, pre: { readonly uid: string; readonly resourceVersion: string }): Promise<boolean>;
}

const GROUP_VERSION = '/apis/multicluster.x-k8s.io/v1alpha1';
const collectionPath = (namespace: string): string => `${GROUP_VERSION}/namespaces/${encodeURIComponent(namespace)}/serviceimports`;

/** A ServiceImport's path, or its status subresource's. */
export function serviceImportPath(namespace: string, name: string, subresource?: 'status'): string {
  return `${collectionPath(namespace)}/${encodeURIComponent(name)}${subresource === undefined ? '' : `/${subresource}`}`;
}

const PAGE = 500;

export function serviceImportApi(kc: KubeConfig, opts: { readonly timeoutMs?: number; readonly userAgent?: string } = {}): ServiceImportApi {
  const { send, object } = apiCaller(kc, { timeoutMs: opts.timeoutMs ?? 30_000, userAgent: opts.userAgent ?? 'slicemesh-publisher' });
  const asImport = (verb: 'get' | 'create' | 'replace', path: string, res: Parameters<typeof object>[2]): ServiceImport => object(verb, path, res) as unknown as ServiceImport;
  return {
    async get(namespace, name) {
      const path = serviceImportPath(namespace, name);
      const res = await send('get', 'GET', path);
      if (res.status === 404) return undefined;
      if (res.status !== 200) throw kubeWriteErrorOf('get', path, res);
      return asImport('get', path, res);
    },
    async list(labelSelector) {
      const out: ServiceImport[] = [];
      let token = '';
      do {
        const query = new URLSearchParams({ labelSelector, limit: String(PAGE) });
        if (token !== '') query.set('continue', token);
        const path = `${GROUP_VERSION}/serviceimports?${query}`;
        const res = await send('list', 'GET', path);
        if (res.status !== 200) throw kubeWriteErrorOf('list', path, res);
        const body = object('list', path, res);
        const items = body['items'] ?? [];
        if (!Array.isArray(items)) throw new KubeWriteError('list', path, res.status, '', '"items" is not an array');
        out.push(...(items as ServiceImport[]));
        const meta = body['metadata'] as { continue?: unknown } | undefined;
        token = typeof meta?.continue === 'string' ? meta.continue : '';
      } while (token !== '');
      return out;
    },
    async create(serviceImport) {
      const path = collectionPath(serviceImport.metadata.namespace ?? 'default');
      const res = await send('create', 'POST', path, serviceImport);
      if (res.status !== 201 && res.status !== 200) throw kubeWriteErrorOf('create', path, res);
      return asImport('create', path, res);
    },
    async replace(serviceImport) {
      const path = serviceImportPath(serviceImport.metadata.namespace ?? 'default', serviceImport.metadata.name);
      const res = await send('replace', 'PUT', path, serviceImport);
      if (res.status !== 200 && res.status !== 201) throw kubeWriteErrorOf('replace', path, res);
      return asImport('replace', path, res);
    },
    async patchStatus(namespace, name, status) {
      const path = serviceImportPath(namespace, name, 'status');
      const res = await send('patch', 'PATCH', path, { status: { clusters: status.clusters } }, 'application/merge-patch+json');
      if (res.status === 404) return false;
      if (res.status !== 200) throw kubeWriteErrorOf('patch', path, res);
      return true;
    },
    async delete(namespace, name, pre) {
      const path = serviceImportPath(namespace, name);
      const res = await send('delete', 'DELETE', path, { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: pre.uid, resourceVersion: pre.resourceVersion } });
      if (res.status === 404) return false;
      if (res.status !== 200 && res.status !== 202) throw kubeWriteErrorOf('delete', path, res);
      return true;
    },
  };
}
