import { FakeClock, createLogger, settle } from '@slicemesh/runtime';
import { describe, expect, it } from 'vitest';
import { NodeFollower } from './node-follower.ts';
import type { ZoneDecision } from './node-zone.ts';
import { initialZoneDecision } from './node-zone.ts';
import { FakeNodeSource, nodeMessage } from './test-support.ts';

const C = 'c1';

function harness(o: { readonly override?: string; readonly prefix?: string } = {}) {
  const source = new FakeNodeSource();
  const clock = new FakeClock(0);
  const logs: Record<string, unknown>[] = [];
  const log = createLogger({ service: 'proxy-agent', destination: { write: (l: string) => void logs.push(JSON.parse(l) as Record<string, unknown>) } });
  const decisions: ZoneDecision[] = [];
  const follower = new NodeFollower({
    decode: { cluster: C, prefix: o.prefix ?? '' },
    nodeName: 'node-a1',
    source,
    initial: initialZoneDecision(o.override ?? ''),
    onDecision: (next) => void decisions.push(next),
    clock,
    log,
    restartDelay: () => 100,
  });
  const abort = new AbortController();
  let running: Promise<void> = Promise.resolve();
  const flush = async () => {
    for (let i = 0; i < 10; i++) await settle();
  };
  /** Starts following (after what the test stored first). */
  const start = async () => {
    running = follower.run(abort.signal);
    await flush();
  };
  const stop = async () => {
    abort.abort();
    await running;
  };
  return { source, clock, logs, decisions, follower, flush, start, stop };
}

describe('NodeFollower', () => {
  it('the stored Node gives the first decision; a relabel gives the next', async () => {
    const h = harness();
    h.source.publish(nodeMessage(C, 'node-a1', 'zone-a'));
    await h.start();
    expect(h.decisions).toEqual([{ zone: 'zone-a', source: 'node', node: 'present' }]);
    h.source.publish(nodeMessage(C, 'node-a1', 'zone-b'));
    await h.flush();
    expect(h.decisions.map((d) => d.zone)).toEqual(['zone-a', 'zone-b']);
    await h.stop();
  });

  it('a new version with the same zone decides nothing new', async () => {
    const h = harness();
    h.source.publish(nodeMessage(C, 'node-a1', 'zone-a'));
    await h.start();
    h.source.publish(nodeMessage(C, 'node-a1', 'zone-a'));
    await h.flush();
    expect(h.decisions).toHaveLength(1);
    await h.stop();
  });

  it('a Node KUBE does not hold yet: no zone, said once in the log; its first message then decides', async () => {
    const h = harness();
    await h.start();
    expect(h.decisions).toEqual([{ zone: '', source: 'node', node: 'unpublished' }]);
    expect(h.logs.filter((l) => l['level'] === 'warn').map((l) => l['msg'])).toEqual(['no zone (view _) kept: KUBE holds no Node node-a1 yet']);
    h.source.publish(nodeMessage(C, 'node-a1', 'zone-c'));
    await h.flush();
    expect(h.decisions.at(-1)).toEqual({ zone: 'zone-c', source: 'node', node: 'present' });
    await h.stop();
  });

  it('a deleted Node keeps its last zone and says so', async () => {
    const h = harness();
    h.source.publish(nodeMessage(C, 'node-a1', 'zone-a'));
    await h.start();
    h.source.publish(nodeMessage(C, 'node-a1', 'zone-a', { deleted: true }));
    await h.flush();
    expect(h.decisions.at(-1)).toEqual({ zone: 'zone-a', source: 'node', node: 'deleted' });
    expect(h.logs.some((l) => l['msg'] === 'zone zone-a kept: Node node-a1 was deleted')).toBe(true);
    await h.stop();
  });

  it('a failed read decides "unreachable" (no zone at start) and follows again after the delay', async () => {
    const h = harness();
    h.source.publish(nodeMessage(C, 'node-a1', 'zone-a'));
    await h.start();
    h.source.fail(new Error('connection lost'));
    await h.flush();
    expect(h.decisions.at(-1)).toEqual({ zone: 'zone-a', source: 'node', node: 'unreachable' });
    expect(h.source.follows).toBe(1);
    await h.clock.advanceAsync(100);
    await h.flush();
    expect(h.source.follows).toBe(2);
    expect(h.decisions.at(-1)).toEqual({ zone: 'zone-a', source: 'node', node: 'present' });
    await h.stop();
  });

  const unusable = [
    { name: 'a message of another cluster', msg: () => nodeMessage('other', 'node-a1', 'zone-b') },
    { name: 'a body that is not JSON', msg: () => ({ subject: nodeMessage(C, 'node-a1', 'zone-b').subject, data: undefined, parseError: 'Unexpected token' }) },
    { name: 'a body naming another node', msg: () => ({ ...nodeMessage(C, 'node-b1', 'zone-b'), subject: nodeMessage(C, 'node-a1', 'zone-b').subject }) },
  ];
  for (const tc of unusable) {
    it(`${tc.name} is logged and changes nothing`, async () => {
      const h = harness();
      h.source.publish(nodeMessage(C, 'node-a1', 'zone-a'));
      await h.start();
      h.source.publish(tc.msg());
      await h.flush();
      expect(h.decisions).toEqual([{ zone: 'zone-a', source: 'node', node: 'present' }]);
      expect(h.logs.some((l) => l['msg'] === 'ignored an unreadable message of this node')).toBe(true);
      await h.stop();
    });
  }

  it('an unusable stored message counts as no Node (the agent is not left waiting)', async () => {
    const h = harness();
    h.source.publish(nodeMessage('other', 'node-a1', 'zone-b'));
    await h.start();
    expect(h.decisions).toEqual([{ zone: '', source: 'node', node: 'unpublished' }]);
    await h.stop();
  });

  it('subjects carry the configured prefix', async () => {
    const h = harness({ prefix: 't1.' });
    h.source.publish(nodeMessage(C, 'node-a1', 'zone-a', { prefix: 't1.' }));
    await h.start();
    expect(h.decisions).toEqual([{ zone: 'zone-a', source: 'node', node: 'present' }]);
    await h.stop();
  });
});
