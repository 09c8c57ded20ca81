import { describe, expect, it } from 'vitest';
import { parseRoute } from './router.ts';
import { MCS_GROUP, servedWithout } from '../store/kinds.ts';
import type { KindInfo } from '../store/kinds.ts';

describe('parseRoute', () => {
  const cases: readonly { path: string; want: Record<string, unknown> }[] = [
    { path: '/api', want: { type: 'apiVersions' } },
    { path: '/api/v1', want: { type: 'resourceList', group: '', version: 'v1' } },
    { path: '/apis', want: { type: 'groupList' } },
    { path: '/apis/discovery.k8s.io/v1', want: { type: 'resourceList', group: 'discovery.k8s.io', version: 'v1' } },
    { path: '/version', want: { type: 'version' } },
    { path: '/healthz', want: { type: 'health', check: 'healthz' } },
    { path: '/livez', want: { type: 'health', check: 'livez' } },
    { path: '/readyz', want: { type: 'health', check: 'readyz' } },
    { path: '/metrics', want: { type: 'metrics' } },
    { path: '/metrics/extra', want: { type: 'notFound' } },
    { path: '/openapi/v3/api/v1', want: { type: 'openapiGroupVersion', group: '', version: 'v1' } },
    { path: '/api/v1/pods', want: { type: 'resource', kind: 'Pod' } },
    { path: '/api/v1/namespaces/shop/pods', want: { type: 'resource', kind: 'Pod', namespace: 'shop', name: undefined } },
    { path: '/api/v1/namespaces/shop/pods/web-1/status', want: { type: 'resource', kind: 'Pod', namespace: 'shop', name: 'web-1', subresource: 'status' } },
    { path: '/api/v1/nodes/n1', want: { type: 'resource', kind: 'Node', name: 'n1' } },
    { path: '/api/v1/namespaces', want: { type: 'resource', kind: 'Namespace', name: undefined } },
    { path: '/api/v1/namespaces/shop', want: { type: 'resource', kind: 'Namespace', name: 'shop' } },
    { path: '/api/v1/namespaces/shop/status', want: { type: 'resource', kind: 'Namespace', name: 'shop', subresource: 'status' } },
    { path: '/api/v1/watch/namespaces/shop/services', want: { type: 'resource', kind: 'Service', namespace: 'shop', watchPrefix: true } },
    { path: '/apis/discovery.k8s.io/v1/namespaces/a/endpointslices/s', want: { type: 'resource', kind: 'EndpointSlice', namespace: 'a', name: 's' } },
    { path: '/api/v1/pods/x', want: { type: 'notFound' } },
    { path: '/api/v2/pods', want: { type: 'notFound' } },
    { path: '/api/v1/namespaces/a/nodes/n1', want: { type: 'notFound' } },
    { path: '/apis/apps/v1/deployments', want: { type: 'notFound' } },
  ];
  for (const tc of cases) {
    it(`${tc.path} -> ${JSON.stringify(tc.want)}`, () => {
      const route = parseRoute(tc.path);
      const view = route.type === 'resource' ? { ...route, kind: route.info.kind } : route;
      expect(view).toMatchObject(tc.want);
    });
  }
});

describe('parseRoute on a server without the MCS CRDs (servedWithout)', () => {
  const without = servedWithout([MCS_GROUP]);
  const cases: readonly { path: string; served: Record<string, unknown>; withoutMcs: Record<string, unknown> }[] = [
    { path: '/apis/multicluster.x-k8s.io', served: { type: 'group', group: MCS_GROUP }, withoutMcs: { type: 'notFound' } },
    { path: '/apis/multicluster.x-k8s.io/v1alpha1', served: { type: 'resourceList', group: MCS_GROUP }, withoutMcs: { type: 'notFound' } },
    { path: '/apis/multicluster.x-k8s.io/v1alpha1/serviceexports', served: { type: 'resource', kind: 'ServiceExport' }, withoutMcs: { type: 'notFound' } },
    { path: '/apis/multicluster.x-k8s.io/v1alpha1/namespaces/shop/serviceexports/web', served: { type: 'resource', kind: 'ServiceExport', namespace: 'shop', name: 'web' }, withoutMcs: { type: 'notFound' } },
    { path: '/apis/multicluster.x-k8s.io/v1alpha1/serviceimports', served: { type: 'resource', kind: 'ServiceImport' }, withoutMcs: { type: 'notFound' } },
    { path: '/apis/multicluster.x-k8s.io/v1alpha1/namespaces/shop/serviceimports/web/status', served: { type: 'resource', kind: 'ServiceImport', namespace: 'shop', name: 'web', subresource: 'status' }, withoutMcs: { type: 'notFound' } },
    { path: '/openapi/v3/apis/multicluster.x-k8s.io/v1alpha1', served: { type: 'openapiGroupVersion' }, withoutMcs: { type: 'notFound' } },
    { path: '/api/v1/services', served: { type: 'resource', kind: 'Service' }, withoutMcs: { type: 'resource', kind: 'Service' } },
  ];
  const view = (path: string, served?: readonly KindInfo[]): Record<string, unknown> => {
    const route = parseRoute(path, served);
    return route.type === 'resource' ? { ...route, kind: route.info.kind } : route;
  };
  for (const tc of cases) {
    it(`${tc.path}: ${String(tc.served['type'])} when served, ${String(tc.withoutMcs['type'])} without`, () => {
      expect(view(tc.path)).toMatchObject(tc.served);
      expect(view(tc.path, without)).toMatchObject(tc.withoutMcs);
    });
  }
});
