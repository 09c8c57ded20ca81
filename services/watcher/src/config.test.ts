import { describe, expect, it } from 'vitest';
import { ConfigError } from '@slicemesh/runtime';
import { kubeConnectionOf, streamNamesOf, watcherConfig, watcherConfigWith } from './config.ts';

describe('watcher config', () => {
  it('documents a default for every optional setting: cluster local, 1 partition, production stream names', () => {
    const c = watcherConfig.parse([], {});
    expect([c.cluster, c.partitions, c.natsUrl, c.healthPort, c.publishWindow, c.maxObjectBytes]).toEqual(['local', 1, 'nats://127.0.0.1:4222', 9101, 256, 512 * 1024]);
    expect(streamNamesOf(c)).toEqual({ kube: 'KUBE', slices: 'SLICES', dlq: 'DLQ', prefix: '' });
  });

  const bad: { name: string; argv: string[]; env?: Record<string, string>; message: RegExp }[] = [
    { name: 'a cluster ID with "/" (it separates msgID parts)', argv: ['--cluster', 'a/b'], message: /^--cluster: "a\/b": must be 1..63 characters/ },
    { name: 'an empty-looking cluster ID', argv: ['--cluster', '-x'], message: /^--cluster/ },
    { name: 'zero partitions', argv: [], env: { PARTITIONS: '0' }, message: /^env PARTITIONS: 0 is below the minimum 1/ },
    { name: 'a KUBE_SERVER that is not a URL', argv: [], env: { KUBE_SERVER: 'localhost' }, message: /^env KUBE_SERVER: "localhost": not a URL/ },
    { name: 'a subject prefix without its final dot', argv: ['--subject-prefix', 'stage'], message: /^--subject-prefix/ },
    { name: 'a publish window of 0', argv: ['--publish-window', '0'], message: /below the minimum 1/ },
  ];
  for (const tc of bad) {
    it(`rejects ${tc.name}`, () => {
      const run = () => watcherConfig.parse(tc.argv, tc.env ?? {});
      expect(run).toThrow(ConfigError);
      expect(run).toThrow(tc.message);
    });
  }

  const connections: { name: string; overrides: Parameters<typeof watcherConfigWith>[0]; env?: Record<string, string>; want: unknown }[] = [
    { name: 'KUBE_SERVER wins over everything', overrides: { kubeServer: 'http://127.0.0.1:8001', kubeconfig: '/k', inCluster: true }, want: { type: 'server', url: 'http://127.0.0.1:8001' } },
    { name: 'KUBECONFIG (first entry of a list) and KUBE_CONTEXT', overrides: { kubeconfig: ':/a:/b', kubeContext: 'dev' }, want: { type: 'kubeconfig', path: '/a', context: 'dev' } },
    { name: 'KUBE_CONTEXT alone uses the default kubeconfig', overrides: { kubeContext: 'dev' }, want: { type: 'kubeconfig', context: 'dev' } },
    { name: 'explicit in-cluster', overrides: { inCluster: true }, want: { type: 'in-cluster' } },
    { name: 'in-cluster when running in a pod and nothing else is set', overrides: {}, env: { KUBERNETES_SERVICE_HOST: '10.96.0.1' }, want: { type: 'in-cluster' } },
    { name: '~/.kube/config otherwise', overrides: {}, want: { type: 'kubeconfig' } },
  ];
  for (const tc of connections) {
    it(`connects by ${tc.name}`, () => expect(kubeConnectionOf(watcherConfigWith(tc.overrides), tc.env ?? {})).toEqual(tc.want));
  }
});
