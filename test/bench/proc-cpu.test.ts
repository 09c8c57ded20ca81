import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { cpuMsOf } from '../../bench/proc-cpu.ts';

describe('cpuMsOf', () => {
  it('counts the time of children that exited and were waited for only when asked (reaped)', () => {
    const reapedOnly = () => cpuMsOf(process.pid, { reaped: true }) - cpuMsOf(process.pid);
    const before = reapedOnly();
    // A child that spins for 300 ms of CPU; spawnSync waits for it, so its time joins ours.
    const child = spawnSync(process.execPath, ['-e', 'const end = process.cpuUsage().user + 300_000; while (process.cpuUsage().user < end);']);
    expect(child.status).toBe(0);
    expect(reapedOnly() - before).toBeGreaterThanOrEqual(250);
  });

  it('is NaN for a process that does not exist or no pid', () => {
    expect(cpuMsOf(undefined)).toBeNaN();
    expect(cpuMsOf(2 ** 22 + 1, { reaped: true })).toBeNaN();
  });
});
