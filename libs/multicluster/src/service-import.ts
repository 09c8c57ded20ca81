// The MCS ServiceImport of an import (mcs-api v1alpha1): what `kubectl get serviceimports` shows
// in an importing cluster — the ClusterSet IP (none when Headless), the merged ports, the session
// affinity with precedence, and the exporting clusters. It describes what the derived Service
// (derived-service.ts) implements; both come from the same MergedImport.

import type { ServiceImportEntry } from '@slicemesh/contracts';
import { SERVICE_IMPORT_VERSION } from '@slicemesh/contracts';
import type { MergedImport } from './merge-exports.ts';

/** Kubernetes' default ClientIP affinity timeout (3 hours), as the derived Service gets it. */
const DEFAULT_AFFINITY_TIMEOUT_S = 10_800;

/**
 * The serviceimports entry of `merged` at `clusterSetIp` (null: headless). A Headless import
 * has no IPs, whatever IP the import holds; status.clusters keeps precedence order (oldest export first).
 */
export function serviceImportOf(merged: MergedImport, clusterSetIp: string | null): ServiceImportEntry {
  const headless = merged.type === 'Headless' || clusterSetIp === null;
  return {
    v: SERVICE_IMPORT_VERSION,
    namespace: merged.namespace,
    name: merged.name,
    spec: {
      ips: headless ? [] : [clusterSetIp],
      type: headless ? 'Headless' : 'ClusterSetIP',
      ports: merged.ports.map((p) => ({ ...(p.name !== undefined ? { name: p.name } : {}), protocol: p.protocol, ...(p.appProtocol !== undefined ? { appProtocol: p.appProtocol } : {}), port: p.port })),
      sessionAffinity: merged.sessionAffinity,
      ...(merged.sessionAffinity === 'ClientIP' ? { sessionAffinityConfig: { clientIP: { timeoutSeconds: merged.sessionAffinityTimeoutSeconds ?? DEFAULT_AFFINITY_TIMEOUT_S } } } : {}),
    },
    status: { clusters: merged.clusters.map((cluster) => ({ cluster })) },
  };
}
