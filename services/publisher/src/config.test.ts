import { describe, expect, it } from 'vitest';
import { ConfigError } from '@slicemesh/runtime';
import { kubeConnectionOf, parseManagedBy, publisherConfig, publisherConfigWith } from './config.ts';

describe('publisherConfig', () => {
  it("defaults: shadow mode, kube-controller-manager's QPS 20 and burst 30, both upstream managers owned, port 9104", () => {
    const c = publisherConfig.parse([], {});
    expect(c.mode).toBe('shadow');
    expect([c.kubeApiQps, c.kubeApiBurst]).toEqual([20, 30]);
    expect(c.managedBy).toEqual(['endpointslice-controller.k8s.io', 'endpointslicemirroring-controller.k8s.io']);
    expect(c.healthPort).toBe(9104);
  });

  it('reads flags over env', () => {
    const c = publisherConfig.parse(['--mode', 'write', '--kube-api-qps=50'], { MODE: 'shadow', KUBE_API_BURST: '100', MANAGED_BY: 'a, b ,a', KUBE_SERVER: 'http://127.0.0.1:8001' });
    expect(c).toMatchObject({ mode: 'write', kubeApiQps: 50, kubeApiBurst: 100, managedBy: ['a', 'b'], kubeServer: 'http://127.0.0.1:8001' });
  });

  const bad: readonly (readonly [string, Record<string, string>])[] = [
    ['an unknown mode', { MODE: 'yolo' }],
    ['QPS 0', { KUBE_API_QPS: '0' }],
    ['an empty MANAGED_BY', { MANAGED_BY: ' , ' }],
    ['a managed-by value that is no label value', { MANAGED_BY: 'not a label!' }],
    ['a bad schema', { DB_SCHEMA: 'Bad-Schema' }],
  ];
  for (const [name, env] of bad) {
    it(`rejects ${name}`, () => {
      expect(() => publisherConfig.parse([], env)).toThrow(ConfigError);
    });
  }

  it('documents every setting in usage()', () => {
    const usage = publisherConfig.usage();
    for (const flag of ['--mode', '--kube-api-qps', '--kube-api-burst', '--managed-by', '--kube-server', '--health-port']) expect(usage).toContain(flag);
  });

  it('parseManagedBy de-duplicates and keeps order', () => {
    expect(parseManagedBy('x,y,x')).toEqual(['x', 'y']);
  });

  it('connects like the watcher: KUBE_SERVER, kubeconfig, in-cluster, default kubeconfig', () => {
    expect(kubeConnectionOf(publisherConfigWith({ kubeServer: 'http://s:1' }), {})).toEqual({ type: 'server', url: 'http://s:1' });
    expect(kubeConnectionOf(publisherConfigWith({ kubeconfig: '/a:/b' }), {})).toEqual({ type: 'kubeconfig', path: '/a' });
    expect(kubeConnectionOf(publisherConfigWith(), { KUBERNETES_SERVICE_HOST: '10.0.0.1' })).toEqual({ type: 'in-cluster' });
    expect(kubeConnectionOf(publisherConfigWith(), {})).toEqual({ type: 'kubeconfig' });
  });
});
