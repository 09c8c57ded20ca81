// Discovery documents: what kubectl and client libraries read to learn which resources exist,
// whether they are namespaced, their verbs and short names.
import { apiVersionOf, SERVED, servedGroupVersions } from '../store/kinds.ts';

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

export function apiVersions(serverAddress: string): Record<string, unknown> {
  return {
    kind: 'APIVersions',
    versions: servedGroupVersions().filter((gv) => gv.group === '').map((gv) => gv.version),
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupEntry(group: string): Record<string, unknown> {
  const versions = servedGroupVersions()
    .filter((gv) => gv.group === group)
    .map((gv) => ({ groupVersion: `${group}/${gv.version}`, version: gv.version }));
  return { name: group, versions, preferredVersion: versions[0] };
}

export function apiGroup(group: string): Record<string, unknown> {
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(group) };
}

export function apiGroupList(): Record<string, unknown> {
  const groups = [...new Set(servedGroupVersions().map((gv) => gv.group).filter((g) => g !== ''))];
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map(groupEntry) };
}

export function apiResourceList(group: string, version: string): Record<string, unknown> {
  const resources = SERVED.filter((k) => k.group === group && k.version === version).flatMap((k) => [
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
