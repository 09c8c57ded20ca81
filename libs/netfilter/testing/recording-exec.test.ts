import { describe, expect, it } from 'vitest';
import type { ExecRequest, ExecResult } from '../src/exec.ts';
import { RecordingExec } from './recording-exec.ts';

const echo = { handle: (req: ExecRequest): ExecResult | undefined => (req.command === 'echo' ? { code: 0, stdout: `${req.args.join(' ')}\n`, stderr: '' } : undefined) };

describe('RecordingExec', () => {
  it('records calls in order and lets the first fake that answers reply', async () => {
    const rec = new RecordingExec([echo]);
    expect((await rec.exec({ command: 'echo', args: ['a', 'b c'] })).stdout).toBe('a b c\n');
    expect(rec.commandLines()).toEqual(['echo a "b c"']);
  });

  it('unwraps ip netns exec and records the namespace', async () => {
    const rec = new RecordingExec([echo]);
    const r = await rec.exec({ command: 'ip', args: ['netns', 'exec', 'node-a', 'echo', 'hi'], input: 'x' });
    expect(r.stdout).toBe('hi\n');
    expect(rec.calls).toEqual([{ command: 'echo', args: ['hi'], input: 'x', netns: 'node-a' }]);
  });

  it('a call no fake answers exits 127', async () => {
    const rec = new RecordingExec([echo]);
    const r = await rec.exec({ command: 'ipvsadm', args: ['-L', '-n'] });
    expect(r.code).toBe(127);
    expect(r.stderr).toContain('ipvsadm: command not found');
  });

  it('failWhen fails the matching calls the given number of times, without reaching the fakes', async () => {
    let reached = 0;
    const counting = { handle: () => (reached++, { code: 0, stdout: '', stderr: '' }) };
    const rec = new RecordingExec([counting]);
    rec.failWhen((c) => c.command === 'nft', { code: 1, stderr: 'boom\n' }, 2);
    const codes: number[] = [];
    for (const command of ['nft', 'iptables', 'nft', 'nft']) codes.push((await rec.exec({ command, args: [] })).code);
    expect(codes).toEqual([1, 0, 1, 0]);
    expect(reached).toBe(2);
  });

  it('callsTo filters by program and clear forgets the calls', async () => {
    const rec = new RecordingExec([echo]);
    await rec.exec({ command: 'echo', args: ['1'] });
    await rec.exec({ command: 'true', args: [] });
    expect(rec.callsTo('echo')).toHaveLength(1);
    rec.clear();
    expect(rec.calls).toEqual([]);
  });
});
