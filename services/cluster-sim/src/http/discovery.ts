// Discovery documents: what kubectl and client libraries read to learn which resources exist,
// whether they are namespaced, their verbs and short names.
import { apiVersionOf, SERVED, servedGroupVersions } from '../store/kinds.ts';
import type { KindInfo } from '../store/kinds.ts';

/** The Kubernetes version the simulator reports; its behaviour follows 1.32-era semantics. */
export const SIM_VERSION = { major: '1', minor: '32', gitVersion: 'v1.32.0-slicemesh-sim' } as const;

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export function versionInfo(): Record<string, unknown> {
  return {
    ...SIM_VERSION,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2026-01-01T00:00:00Z',
    goVersion: 'n/a (cluster-sim, Node.js)',
    compiler: 'n/a',
    platform: 'linux/amd64',
  };
}

// `served` in each: the resources this server offers (SERVED, or fewer: see servedWithout).

export function apiVersions(serverAddress: string, served: readonly KindInfo[] = SERVED): Record<string, unknown> {
  return {
    kind: 'APIVersions',
    versions: servedGroupVersions(served).filter((gv) => gv.group === '').map((gv) => gv.version),
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupEntry(group: string, served: readonly KindInfo[]): Record<string, unknown> {
  const versions = servedGroupVersions(served)
    .filter((gv) => gv.group === group)
    .map((gv) => ({ groupVersion: `${group}/${gv.version}`, version: gv.version }));
  return { name: group, versions, preferredVersion: versions[0] };
}

export function apiGroup(group: string, served: readonly KindInfo[] = SERVED): Record<string, unknown> {
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(group, served) };
}

export function apiGroupList(served: readonly KindInfo[] = SERVED): Record<string, unknown> {
  const groups = [...new Set(servedGroupVersions(served).map((gv) => gv.group).filter((g) => g !== ''))];
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map((g) => groupEntry(g, served)) };
}

export function apiResourceList(group: string, version: string, served: readonly KindInfo[] = SERVED): Record<string, unknown> {
  const resources = served.filter((k) => k.group === group && k.version === version).flatMap((k) => [
    {
      name: k.resource,
      singularName: k.singular,
      namespaced: k.namespaced,
      kind: k.kind,
      verbs: VERBS,
      ...(k.shortNames.length > 0 ? { shortNames: k.shortNames } : {}),
      ...(k.categories.length > 0 ? { categories: k.categories } : {}),
    },
    ...(k.statusSubresource
      ? [{ name: `${k.resource}/status`, singularName: '', namespaced: k.namespaced, kind: k.kind, verbs: ['get', 'patch', 'update'] }]
      : []),
  ]);
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources };
}

/** Every served kind with its apiVersion, e.g. for logging what the server offers. */
export function servedKinds(): readonly string[] {
  return SERVED.map((k) => `${apiVersionOf(k)}/${k.kind}`);
}
