import { describe, expect, it } from 'vitest';
import { longestGap, natsStatusLines, reconnectOf, summarizeNatsKills, warnLineTimes } from './nats-figures.ts';

describe('the longest stall: the longest time without a stored message across a window', () => {
  const times = [1000, 2000, 2500, 9000, 9500, 10_000];
  it('takes the gap that overlaps the window, whole', () => expect(longestGap(times, 3000, 4000, 20_000)).toBe(6500));
  it('ignores gaps outside the window', () => expect(longestGap(times, 9200, 9800, 20_000)).toBe(500));
  it('a stream that stops storing stalls until the end (churn stopped)', () => expect(longestGap(times, 12_000, 13_000, 15_000)).toBe(5000));
  it("no message at all: the whole window", () => expect(longestGap([], 1000, 2000, 4000)).toBe(3000));
  it("a message after churn stopped counts from then: the gap up to the end", () => expect(longestGap([1000, 9000], 3000, 4000, 6000)).toBe(5000));
});

const line = (o: object): string => JSON.stringify(o);
const LOG = [
  line({ level: 'info', time: '2026-01-01T00:00:10.000Z', component: 'slicer', nats: 'disconnect', detail: '127.0.0.1:4222', msg: 'NATS connection status' }),
  line({ level: 'info', time: '2026-01-01T00:00:10.500Z', component: 'slicer', nats: 'reconnecting', msg: 'NATS connection status' }),
  line({ level: 'info', time: '2026-01-01T00:00:11.250Z', component: 'slicer', nats: 'reconnect', detail: '127.0.0.1:4223', msg: 'NATS connection status' }),
  line({ level: 'info', time: '2026-01-01T00:00:11.300Z', component: 'watcher', nats: { type: 'update' }, msg: 'NATS status' }),
  line({ level: 'info', time: '2026-01-01T00:00:11.400Z', component: 'hints', natsStatus: 'disconnect', msg: 'nats status' }),
  line({ level: 'info', time: '2026-01-01T00:00:11.600Z', component: 'proxy-agent', event: 'reconnect', msg: 'nats status' }),
  line({ level: 'warn', time: '2026-01-01T00:00:12.000Z', component: 'watcher', msg: 'publish failed' }),
  line({ level: 'error', time: '2026-01-01T00:00:13.000Z', component: 'watcher', msg: 'publish failed' }),
  'not json',
  line({ level: 'info', time: '2026-01-01T00:00:14.000Z', msg: 'reconciled' }),
].join('\n');
const T0 = Date.parse('2026-01-01T00:00:09.000Z');

describe("the services' NATS status lines", () => {
  it('reads every wording the services use, with its type and time', () => {
    expect(natsStatusLines(LOG).map((l) => [l.type, l.timeMs - T0])).toEqual([['disconnect', 1000], ['reconnecting', 1500], ['reconnect', 2250], ['update', 2300], ['disconnect', 2400], ['reconnect', 2600]]);
    expect(warnLineTimes(LOG).map((t) => t - T0)).toEqual([3000, 4000]);
  });

  it('a reconnect: from the kill to the first reconnect after a disconnect, and the lines counted in the window', () => {
    const r = reconnectOf('slicer-0', natsStatusLines(LOG), warnLineTimes(LOG), T0, T0 + 3500);
    expect(r).toEqual({ component: 'slicer-0', reconnectS: 2.25, disconnectLines: 2, reconnectLines: 2, warnLines: 1 });
    expect(reconnectOf('x', [], [], T0, T0 + 1000)).toEqual({ component: 'x', disconnectLines: 0, reconnectLines: 0, warnLines: 0 });
  });

  it('summarizes: the longest stall, the max and median reconnect, the most lines of one service', () => {
    const s = summarizeNatsKills([
      { server: 'nats-1', wasKubeLeader: true, atMs: 1, leaderElectedS: 3.14159, absorbedS: 2, stallS: { KUBE: 4.5, SLICES: 1 }, services: [reconnectOf('a', natsStatusLines(LOG), warnLineTimes(LOG), T0, T0 + 9000)] },
      { server: 'nats-2', wasKubeLeader: false, atMs: 2, stallS: { KUBE: 0.5 }, services: [{ component: 'b', reconnectS: 0.5, disconnectLines: 1, reconnectLines: 1, warnLines: 0 }, { component: 'c', reconnectS: 0.25, disconnectLines: 1, reconnectLines: 1, warnLines: 0 }] },
    ]);
    expect(s).toEqual({ maxStallS: 4.5, maxReconnectS: 2.25, medianReconnectS: 0.5, reconnects: 3, maxReconnectLines: 2, maxWarnLines: 2, noisiest: 'a', maxLeaderElectedS: 3.14, maxAbsorbedS: 2 });
  });
});
