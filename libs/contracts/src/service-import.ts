// The `serviceimports` KV bucket of one cluster: the MCS ServiceImport each import of the cluster
// set should have in this cluster (its spec: ClusterSet IP, type, merged ports, session affinity;
// its status: the exporting clusters), as the multi-cluster service computes it. The publisher
// watches it and writes the ServiceImports to the Kubernetes API, the one writer to the API.
//
//   <cluster>.<ns>.<name>   ServiceImportEntry   (name: the exported Service's, not the derived one's)

import type { ServiceImport, ServiceImportSpec, ServiceImportStatus } from '@slicemesh/model';
import type { Parsed } from './kube-event.ts';
import { clusterEntryBody, fail, isObject } from './cluster-entry.ts';
import { svcClusterFilter, svcKey } from './subjects.ts';

export const SERVICE_IMPORT_VERSION = 1;

export interface ServiceImportEntry {
  readonly v: typeof SERVICE_IMPORT_VERSION;
  readonly namespace: string;
  readonly name: string;
  readonly spec: ServiceImportSpec;
  readonly status: ServiceImportStatus;
}

/**
 * The label of every ServiceImport written from this bucket: the publisher deletes only those the
 * bucket no longer has, never one written by someone else.
 */
export const LABEL_APP_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const SERVICE_IMPORT_MANAGED_BY = 'slicemesh-mcs';

/** The ServiceImport of an entry, as written to the API (labelled as ours). */
export function serviceImportObject(entry: ServiceImportEntry): ServiceImport {
  return {
    apiVersion: 'multicluster.x-k8s.io/v1alpha1',
    kind: 'ServiceImport',
    metadata: { name: entry.name, namespace: entry.namespace, labels: { [LABEL_APP_MANAGED_BY]: SERVICE_IMPORT_MANAGED_BY } },
    spec: entry.spec,
    status: entry.status,
  };
}

/** Same layout as the svc bucket: `<cluster>.<ns>.<name>`. */
export function serviceImportKey(a: { readonly cluster: string; readonly namespace: string; readonly name: string }): string {
  return svcKey(a);
}

/** Watch filter for one cluster's entries. */
export const serviceImportFilter = svcClusterFilter;

const isPort = (v: unknown): boolean => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65_535;

/** Why `spec` is not a ServiceImport spec the API would take, or undefined. */
function specProblem(spec: unknown): string | undefined {
  if (!isObject(spec)) return 'spec is not an object';
  if (spec['type'] !== 'ClusterSetIP' && spec['type'] !== 'Headless') return 'spec.type is not ClusterSetIP or Headless';
  const ips = spec['ips'];
  if (!Array.isArray(ips) || ips.length > 2 || ips.some((ip) => typeof ip !== 'string')) return 'spec.ips is not a list of at most two IPs';
  if (spec['type'] === 'Headless' && ips.length > 0) return 'spec.ips of a Headless import is not empty';
  if (spec['sessionAffinity'] !== 'None' && spec['sessionAffinity'] !== 'ClientIP') return 'spec.sessionAffinity is not None or ClientIP';
  const ports = spec['ports'];
  if (!Array.isArray(ports)) return 'spec.ports is not a list';
  for (const [i, p] of ports.entries()) {
    if (!isObject(p) || !isPort(p['port']) || !['TCP', 'UDP', 'SCTP'].includes(p['protocol'] as string)) return `spec.ports[${i}] needs a port (1-65535) and protocol TCP|UDP|SCTP`;
    if (p['name'] !== undefined && typeof p['name'] !== 'string') return `spec.ports[${i}].name is not a string`;
  }
  return undefined;
}

/** Parses an entry of `cluster`: its key and body must name the same import. Never throws. */
export function parseServiceImportEntry(key: string, value: unknown, cluster: string): Parsed<ServiceImportEntry> {
  const head = clusterEntryBody(key, value, cluster, SERVICE_IMPORT_VERSION, 'service import');
  if (!head.ok) return head as Parsed<ServiceImportEntry>;
  const body = head.value;
  const problem = specProblem(body['spec']);
  if (problem !== undefined) return fail(`${key}: ${problem}`, 'spec');
  const status = body['status'];
  const clusters = isObject(status) ? status['clusters'] : undefined;
  if (!Array.isArray(clusters) || clusters.some((c) => !isObject(c) || typeof c['cluster'] !== 'string' || c['cluster'] === '')) return fail(`${key}: status.clusters is not a list of {cluster}`, 'status');
  return { ok: true, value: body as unknown as ServiceImportEntry };
}
