import { describe, expect, it } from 'vitest';
import { pickNatsVictim, serviceConnections } from './nats-victim.ts';

const idle = ['stack-r1', 'chaos-probe'];
const busy = ['slicer-slicer-0', 'stack-r1'];

describe('pickNatsVictim: a nats-kill hits a server that holds service connections', () => {
  const cases: { name: string; drawn: number; servers: { name: string; clients: string[] | undefined }[]; want: string; redirected: boolean }[] = [
    { name: 'the drawn server when it holds a service connection', drawn: 1, servers: [{ name: 'n1', clients: busy }, { name: 'n2', clients: busy }, { name: 'n3', clients: idle }], want: 'n2', redirected: false },
    { name: 'another server when the drawn one holds only the campaign\'s own', drawn: 2, servers: [{ name: 'n1', clients: idle }, { name: 'n2', clients: busy }, { name: 'n3', clients: idle }], want: 'n2', redirected: true },
    { name: 'the draw wraps around the servers', drawn: 4, servers: [{ name: 'n1', clients: busy }, { name: 'n2', clients: busy }, { name: 'n3', clients: busy }], want: 'n2', redirected: false },
    { name: 'the drawn server when nothing is known about it', drawn: 0, servers: [{ name: 'n1', clients: undefined }, { name: 'n2', clients: busy }], want: 'n1', redirected: false },
    { name: 'the drawn server when no server holds a service connection', drawn: 0, servers: [{ name: 'n1', clients: idle }, { name: 'n2', clients: [] }], want: 'n1', redirected: false },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect(pickNatsVictim(tc.drawn, tc.servers)).toEqual({ name: tc.want, redirected: tc.redirected });
    });
  }

  it('refuses an empty cluster', () => {
    expect(() => pickNatsVictim(0, [])).toThrow(/no servers/);
  });

  it('counts service connections, not the campaign\'s own', () => {
    expect(serviceConnections(['watcher-c1', 'hints-c1-hints-0', 'stack-abc', 'chaos-probe', 'slicemesh-preflight'])).toBe(2);
  });
});
