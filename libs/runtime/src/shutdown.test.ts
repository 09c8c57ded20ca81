import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { FakeClock } from './clock.ts';
import { onShutdown } from './shutdown.ts';

type Hook = 'ok' | 'fail' | 'hang' | 'slow';

interface Case {
  readonly name: string;
  readonly hooks: readonly Hook[];
  readonly signals?: readonly string[];
  readonly emit: readonly string[];
  readonly timeoutMs?: number;
  readonly advanceMs: number;
  /** Hooks that started, by index. */
  readonly ran: readonly number[];
  readonly exits: readonly number[];
  readonly errorMsgs: readonly string[];
}

const cases: readonly Case[] = [
  { name: 'SIGTERM runs every hook in order, then exits 0', hooks: ['ok', 'slow', 'ok'], emit: ['SIGTERM'], advanceMs: 1000, ran: [0, 1, 2], exits: [0], errorMsgs: [] },
  { name: 'SIGINT does the same', hooks: ['ok'], emit: ['SIGINT'], advanceMs: 0, ran: [0], exits: [0], errorMsgs: [] },
  { name: 'repeated signals run the hooks once and exit once', hooks: ['slow', 'ok'], emit: ['SIGTERM', 'SIGINT', 'SIGTERM'], advanceMs: 1000, ran: [0, 1], exits: [0], errorMsgs: [] },
  { name: 'a failing hook is reported, later hooks still run, exit is 1', hooks: ['fail', 'ok'], emit: ['SIGTERM'], advanceMs: 0, ran: [0, 1], exits: [1], errorMsgs: ['shutdown hook failed', 'shutdown complete'] },
  { name: 'hooks that outlive the timeout exit 1 at the deadline', hooks: ['ok', 'hang', 'ok'], emit: ['SIGTERM'], timeoutMs: 5000, advanceMs: 60_000, ran: [0, 1], exits: [1], errorMsgs: ['shutdown timed out'] },
  { name: 'hooks finishing before the timeout exit 0', hooks: ['slow'], emit: ['SIGTERM'], timeoutMs: 5000, advanceMs: 60_000, ran: [0], exits: [0], errorMsgs: [] },
  { name: 'only the configured signals trigger shutdown', hooks: ['ok'], signals: ['SIGUSR2'], emit: ['SIGTERM', 'SIGUSR2'], advanceMs: 0, ran: [0], exits: [0], errorMsgs: [] },
  { name: 'an unrelated signal does nothing', hooks: ['ok'], emit: ['SIGHUP'], advanceMs: 10_000, ran: [], exits: [], errorMsgs: [] },
  { name: 'no hooks exits 0 at once', hooks: [], emit: ['SIGTERM'], advanceMs: 0, ran: [], exits: [0], errorMsgs: [] },
];

describe('onShutdown', () => {
  for (const tc of cases) {
    it(tc.name, async () => {
      const clock = new FakeClock(0);
      const proc = new EventEmitter();
      const ran: number[] = [];
      const exits: number[] = [];
      const errorMsgs: string[] = [];
      const hooks = tc.hooks.map((kind, i) => async (): Promise<void> => {
        ran.push(i);
        if (kind === 'fail') throw new Error(`hook ${i} failed`);
        if (kind === 'slow') await new Promise<void>((done) => clock.setTimer(done, 1000));
        if (kind === 'hang') await new Promise<void>(() => {});
      });
      onShutdown(hooks, {
        process: proc,
        exit: (code) => exits.push(code),
        clock,
        log: { info: () => {}, error: (_obj, msg) => errorMsgs.push(msg ?? '') },
        ...(tc.signals ? { signals: tc.signals } : {}),
        ...(tc.timeoutMs === undefined ? {} : { timeoutMs: tc.timeoutMs }),
      });
      for (const s of tc.emit) proc.emit(s);
      await clock.advanceAsync(tc.advanceMs);
      expect(ran).toEqual(tc.ran);
      expect(exits).toEqual(tc.exits);
      expect(errorMsgs).toEqual(tc.errorMsgs);
    });
  }

  it('trigger() shuts down like a signal and resolves with the exit code, once', async () => {
    const exits: number[] = [];
    const proc = new EventEmitter();
    const handle = onShutdown([async () => {}], { process: proc, exit: (c) => exits.push(c), clock: new FakeClock() });
    const first = handle.trigger('fatal: consumer deleted');
    proc.emit('SIGTERM');
    await expect(first).resolves.toBe(0);
    await expect(handle.trigger('again')).resolves.toBe(0);
    expect(exits).toEqual([0]);
  });

  it('dispose() stops listening for the signals', () => {
    const proc = new EventEmitter();
    const handle = onShutdown([], { process: proc, exit: () => {}, clock: new FakeClock() });
    expect([proc.listenerCount('SIGINT'), proc.listenerCount('SIGTERM')]).toEqual([1, 1]);
    handle.dispose();
    expect([proc.listenerCount('SIGINT'), proc.listenerCount('SIGTERM')]).toEqual([0, 0]);
  });

  it('cancels its deadline timer after a clean exit', async () => {
    const clock = new FakeClock();
    const handle = onShutdown([async () => {}], { process: new EventEmitter(), exit: () => {}, clock });
    await handle.trigger('test');
    expect(clock.pending()).toBe(0);
  });
});
