import { describe, expect, it } from 'vitest';
import { ConfigError, isTerminal, TerminalError } from './errors.ts';

describe('isTerminal', () => {
  const cyclic = new Error('cycle');
  (cyclic as { cause?: unknown }).cause = cyclic;
  const cases: readonly { name: string; error: unknown; want: boolean }[] = [
    { name: 'habit 3: a TerminalError is terminal', error: new TerminalError('bad object'), want: true },
    { name: 'a plain Error is retryable', error: new Error('connection reset'), want: false },
    { name: 'a wrapped TerminalError stays terminal', error: new Error('reconcile default/web', { cause: new TerminalError('bad port') }), want: true },
    { name: 'a TerminalError two causes deep stays terminal', error: new Error('a', { cause: new Error('b', { cause: new TerminalError('c') }) }), want: true },
    { name: 'a ConfigError is not terminal', error: new ConfigError('--x', 'bad'), want: false },
    { name: 'a thrown string is not terminal', error: 'boom', want: false },
    { name: 'undefined is not terminal', error: undefined, want: false },
    { name: 'a cyclic cause chain ends without a TerminalError', error: cyclic, want: false },
  ];
  for (const tc of cases) it(tc.name, () => expect(isTerminal(tc.error)).toBe(tc.want));
});

describe('error classes', () => {
  it('ConfigError is one line naming the setting and reason', () => {
    const e = new ConfigError('--workers', '"abc": not an integer');
    expect(e.message).toBe('--workers: "abc": not an integer');
    expect(e.name).toBe('ConfigError');
    expect([e.setting, e.reason]).toEqual(['--workers', '"abc": not an integer']);
  });
  it('TerminalError keeps its cause', () => {
    const cause = new Error('root');
    const e = new TerminalError('outer', { cause });
    expect(e.cause).toBe(cause);
    expect(e.name).toBe('TerminalError');
    expect(e).toBeInstanceOf(Error);
  });
});
