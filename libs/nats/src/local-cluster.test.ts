import { describe, expect, it } from 'vitest';
import { natsServerArgs, planLocalCluster } from './local-cluster.ts';

describe('planLocalCluster / natsServerArgs', () => {
  const three = [
    { client: 14221, cluster: 16221 },
    { client: 14222, cluster: 16222 },
    { client: 14223, cluster: 16223 },
  ];

  it('plans three servers, each routing to the other two, with a store of its own', () => {
    const specs = planLocalCluster({ size: 3, dir: '/tmp/c', ports: three });
    expect(specs.map((s) => s.name)).toEqual(['nats-1', 'nats-2', 'nats-3']);
    expect(specs.map((s) => s.storeDir)).toEqual(['/tmp/c/nats-1', '/tmp/c/nats-2', '/tmp/c/nats-3']);
    expect(specs.map((s) => s.routes)).toEqual([
      [16222, 16223],
      [16221, 16223],
      [16221, 16222],
    ]);
    expect(natsServerArgs(specs[1]!)).toEqual([
      '-a', '127.0.0.1', '-p', '14222', '--server_name', 'nats-2', '-js', '-sd', '/tmp/c/nats-2', '-l', '/tmp/c/nats-2.log',
      '--cluster_name', 'slicemesh', '--cluster', 'nats://127.0.0.1:16222', '--routes', 'nats://127.0.0.1:16221,nats://127.0.0.1:16223',
    ]);
  });

  it('size 1 is a plain single server: no cluster options', () => {
    const [only] = planLocalCluster({ size: 1, dir: '/d', ports: [{ client: 4300, cluster: 4300 }], namePrefix: 'solo' });
    expect(natsServerArgs(only!)).toEqual(['-a', '127.0.0.1', '-p', '4300', '--server_name', 'solo-1', '-js', '-sd', '/d/solo-1', '-l', '/d/solo-1.log']);
  });

  it.each([
    [{ size: 0, dir: '/d', ports: [] }, /size must be an integer >= 1/],
    [{ size: 2, dir: '/d', ports: three }, /cluster of 2 needs 2 port pairs, got 3/],
    [{ size: 2, dir: '/d', ports: [{ client: 1, cluster: 2 }, { client: 2, cluster: 3 }] }, /ports must all differ/],
  ])('refuses %o', (opts, message) => {
    expect(() => planLocalCluster(opts)).toThrow(message);
  });

  it('a monitoring port becomes -m, and must differ from the others', () => {
    const [only] = planLocalCluster({ size: 1, dir: '/d', ports: [{ client: 4300, cluster: 4300, monitor: 8300 }] });
    expect(natsServerArgs(only!)).toEqual(['-a', '127.0.0.1', '-p', '4300', '--server_name', 'nats-1', '-js', '-sd', '/d/nats-1', '-l', '/d/nats-1.log', '-m', '8300']);
    expect(() => planLocalCluster({ size: 1, dir: '/d', ports: [{ client: 4300, cluster: 4300, monitor: 4300 }] })).toThrow(/ports must all differ/);
  });

  it('a custom cluster name is used', () => {
    const specs = planLocalCluster({ size: 2, dir: '/d', ports: three.slice(0, 2), clusterName: 'c9' });
    expect(natsServerArgs(specs[0]!)).toContain('c9');
  });

  it('a locked-down server reads a config file of its own (the authorization block) before its flags', () => {
    const [only] = planLocalCluster({ size: 1, dir: '/d', ports: [{ client: 4300, cluster: 4300 }], withConfigFile: true });
    expect(only!.configFile).toBe('/d/nats-1.conf');
    expect(natsServerArgs(only!).slice(0, 4)).toEqual(['-c', '/d/nats-1.conf', '-a', '127.0.0.1']);
  });
});
