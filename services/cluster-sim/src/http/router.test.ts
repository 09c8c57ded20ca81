import { describe, expect, it } from 'vitest';
import { parseRoute } from './router.ts';

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
