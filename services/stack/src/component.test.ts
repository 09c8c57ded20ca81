import { describe, expect, it } from 'vitest';
import type { Incarnation } from './component.ts';
import { restartableComponent } from './component.ts';

interface Fake extends Incarnation {
  readonly events: string[];
}

function fakes(withKill: boolean): { start: () => Incarnation; events: string[] } {
  const events: string[] = [];
  let n = 0;
  return {
    events,
    start: () => {
      const id = ++n;
      events.push(`start ${id}`);
      const inc: Fake = {
        events,
        ready: Promise.resolve(),
        isReady: () => true,
        healthPort: () => 9000 + id,
        ...(withKill ? { pid: 100 + id } : {}),
        stop: async () => void events.push(`stop ${id}`),
        ...(withKill ? { kill: async (s: NodeJS.Signals) => void events.push(`kill ${id} ${s}`) } : {}),
      };
      return inc;
    },
  };
}

describe('restartableComponent', () => {
  it('restart stops the running incarnation first and starts a new one with the same settings', async () => {
    const f = fakes(false);
    const c = restartableComponent('hints', 'in-process', f.start);
    expect(c.healthUrl()).toBe('http://127.0.0.1:9001');
    await c.restart();
    expect(f.events).toEqual(['start 1', 'stop 1', 'start 2']);
    expect(c.healthUrl()).toBe('http://127.0.0.1:9002');
  });

  it('kill signals a child process, marks it stopped, and restart does not stop it again', async () => {
    const f = fakes(true);
    const c = restartableComponent('slicer', 'process', f.start);
    expect(c.pid()).toBe(101);
    await c.kill('SIGKILL');
    expect(c.isStopped()).toBe(true);
    expect(c.isReady()).toBe(false);
    await c.restart();
    expect(f.events).toEqual(['start 1', 'kill 1 SIGKILL', 'start 2']);
    expect(c.pid()).toBe(102);
    expect(c.isStopped()).toBe(false);
  });

  it('an in-process service cannot be killed, only stopped; stopping twice stops once', async () => {
    const f = fakes(false);
    const c = restartableComponent('watcher', 'in-process', f.start);
    await expect(c.kill('SIGKILL')).rejects.toThrow(/cannot be killed/);
    await c.stop();
    await c.stop();
    expect(f.events).toEqual(['start 1', 'stop 1']);
  });
});
