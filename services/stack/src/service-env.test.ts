import { describe, expect, it } from 'vitest';
import { hintsConfig } from '@slicemesh/hints';
import { parseProxyAgentConfig } from '@slicemesh/proxy-agent';
import { publisherConfig } from '@slicemesh/publisher';
import { slicerConfig } from '@slicemesh/slicer';
import { watcherConfig } from '@slicemesh/watcher';
import { deepFreeze } from '@slicemesh/testing';
import { freshRunNames } from './run-names.ts';
import type { StackLayout } from './service-env.ts';
import { agentEnv, hintsEnv, publisherEnv, slicerEnv, watcherEnv } from './service-env.ts';

const LAYOUT: StackLayout = deepFreeze({
  natsUrl: 'nats://127.0.0.1:4222',
  databaseUrl: 'postgres://postgres@127.0.0.1:5432/postgres',
  schema: 'slicemesh_r1',
  cluster: 'local',
  partitions: 3,
  names: freshRunNames('r1').names,
  kubeServer: 'http://127.0.0.1:8001',
  batchPeriodMs: 100,
  ackWaitMs: 3000,
  logLevel: 'warn',
});

// Each env goes through the service's own config: what the stack sets is what the service reads.
describe('service environments', () => {
  it('watcher: cluster, API server, partitions, stream names and prefix', () => {
    const c = watcherConfig.parse([], watcherEnv(LAYOUT, 0));
    expect(c).toMatchObject({ cluster: 'local', kubeServer: 'http://127.0.0.1:8001', partitions: 3, kubeStream: 'KUBE_r1', slicesStream: 'SLICES_r1', dlqStream: 'DLQ_r1', subjectPrefix: 'rr1.', healthPort: 0, logLevel: 'warn' });
  });

  it('slicer: the same partitions and streams, the run schema, the batching window and a short ack wait', () => {
    const c = slicerConfig.parse([], slicerEnv(LAYOUT, 9102));
    expect(c).toMatchObject({ databaseUrl: LAYOUT.databaseUrl, dbSchema: 'slicemesh_r1', cluster: 'local', partitions: 3, kubeStream: 'KUBE_r1', subjectPrefix: 'rr1.', batchPeriod: 100, ackWait: 3000, healthPort: 9102 });
  });

  it('hints: the same schema, partitions and streams, the run buckets, and a name per replica', () => {
    const c = hintsConfig.parse([], hintsEnv(LAYOUT, 0));
    expect(c).toMatchObject({ dbSchema: 'slicemesh_r1', cluster: 'local', partitions: 3, slicesStream: 'SLICES_r1', subjectPrefix: 'rr1.', svcBucket: 'svc_r1', viewsBucket: 'views_r1', replicaId: 'hints-0' });
    expect(hintsConfig.parse([], hintsEnv(LAYOUT, 0, 2)).replicaId).toBe('hints-2');
  });

  it('publisher: the mode asked for, the same schema, streams and API server, default QPS and burst', () => {
    const c = publisherConfig.parse([], publisherEnv(LAYOUT, 'write', 9104));
    expect(c).toMatchObject({ mode: 'write', dbSchema: 'slicemesh_r1', cluster: 'local', slicesStream: 'SLICES_r1', subjectPrefix: 'rr1.', kubeServer: 'http://127.0.0.1:8001', kubeApiQps: 20, kubeApiBurst: 30, healthPort: 9104 });
    expect(publisherConfig.parse([], publisherEnv(LAYOUT, 'shadow', 0)).mode).toBe('shadow');
  });

  it('proxy agent: dry-run iptables rules for its node, the same cluster and buckets, the run\'s KUBE stream and prefix', () => {
    const c = parseProxyAgentConfig([], agentEnv(LAYOUT, { node: 'a-1', zone: 'zone-a', nodeIPs: ['172.18.0.10'], rulesFile: '/run/a-1.rules' }, 0));
    expect(c).toMatchObject({ cluster: 'local', nodeName: 'a-1', nodeIPs: ['172.18.0.10'], backend: 'dry-run', dryRunFile: '/run/a-1.rules', dryRunFormat: 'iptables', svcBucket: 'svc_r1', viewsBucket: 'views_r1', kubeStream: 'KUBE_r1', subjectPrefix: 'rr1.' });
  });

  it('proxy agent: no NODE_ZONE, zoned node or not — the agent follows its Node\'s label', () => {
    for (const zone of ['zone-a', '']) expect(parseProxyAgentConfig([], agentEnv(LAYOUT, { node: 'x', zone, nodeIPs: [], rulesFile: '/r' }, 0)).nodeZone, zone).toBe('');
  });

  it('NATS_REPLICAS: every service that creates streams or buckets gets the layout\'s count (unset: not passed, existing counts kept); the agent creates none', () => {
    const three = { ...LAYOUT, natsReplicas: 3, natsUrl: 'nats://127.0.0.1:14221,nats://127.0.0.1:14222,nats://127.0.0.1:14223' };
    const parsed = [watcherConfig.parse([], watcherEnv(three, 0)), slicerConfig.parse([], slicerEnv(three, 0)), hintsConfig.parse([], hintsEnv(three, 0)), publisherConfig.parse([], publisherEnv(three, 'write', 0))];
    for (const c of parsed) expect(c).toMatchObject({ natsReplicas: 3, natsUrl: three.natsUrl });
    for (const c of [watcherConfig.parse([], watcherEnv(LAYOUT, 0)), hintsConfig.parse([], hintsEnv(LAYOUT, 0))]) expect(c.natsReplicas).toBeUndefined();
    const agent = agentEnv(three, { node: 'x', zone: '', nodeIPs: [], rulesFile: '/r' }, 0);
    expect(agent['NATS_REPLICAS']).toBeUndefined();
    expect(parseProxyAgentConfig([], agent).natsUrl).toBe(three.natsUrl);
  });

  it('locked down: each service gets its own role\'s seed file, which its config reads; open: none', () => {
    const locked = { ...LAYOUT, natsAuthDir: '/keys' };
    const agentSpec = { node: 'x', zone: '', nodeIPs: [], rulesFile: '/r' };
    const cases = [
      { name: 'watcher', seed: watcherConfig.parse([], watcherEnv(locked, 0)).natsNkeySeedFile, open: watcherConfig.parse([], watcherEnv(LAYOUT, 0)).natsNkeySeedFile },
      { name: 'slicer', seed: slicerConfig.parse([], slicerEnv(locked, 0)).natsNkeySeedFile, open: slicerConfig.parse([], slicerEnv(LAYOUT, 0)).natsNkeySeedFile },
      { name: 'hints', seed: hintsConfig.parse([], hintsEnv(locked, 0)).natsNkeySeedFile, open: hintsConfig.parse([], hintsEnv(LAYOUT, 0)).natsNkeySeedFile },
      { name: 'publisher', seed: publisherConfig.parse([], publisherEnv(locked, 'write', 0)).natsNkeySeedFile, open: publisherConfig.parse([], publisherEnv(LAYOUT, 'write', 0)).natsNkeySeedFile },
      { name: 'agent', seed: parseProxyAgentConfig([], agentEnv(locked, agentSpec, 0)).natsNkeySeedFile, open: parseProxyAgentConfig([], agentEnv(LAYOUT, agentSpec, 0)).natsNkeySeedFile },
    ];
    for (const c of cases) {
      expect(c.seed, c.name).toBe(`/keys/${c.name}.nk`);
      expect(c.open, c.name).toBeUndefined();
    }
  });
});
