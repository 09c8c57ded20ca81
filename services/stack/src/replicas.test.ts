import { describe, expect, it } from 'vitest';
import { ConfigError } from '@slicemesh/runtime';
import { stackConfig } from './config.ts';
import { formatReplicas, hasReplicas, parseReplicas, replicaKindOf, replicaNames, replicaReadiness } from './replicas.ts';

describe('--replicas', () => {
  const good = [
    { text: 'slicer=3,hints=2,watcher=2', want: { slicer: 3, hints: 2, watcher: 2 } },
    { text: 'slicer=3', want: { slicer: 3, hints: 1, watcher: 1 } },
    { text: ' watcher = 2 , Slicer=2 ', want: { slicer: 2, hints: 1, watcher: 2 } },
    { text: '', want: { slicer: 1, hints: 1, watcher: 1 } },
    { text: 'slicer=16', want: { slicer: 16, hints: 1, watcher: 1 } },
  ];
  for (const tc of good) it(`parses ${JSON.stringify(tc.text)}`, () => expect(parseReplicas(tc.text)).toEqual(tc.want));

  const bad = [
    { text: 'publisher=2', why: /unknown service "publisher": replicas are for slicer, hints, watcher/ },
    { text: 'agents=3', why: /unknown service "agents"/ },
    { text: 'slicer=0', why: /slicer=0: the count must be 1\.\.16/ },
    { text: 'slicer=17', why: /must be 1\.\.16/ },
    { text: 'slicer=-1', why: /whole number/ },
    { text: 'slicer=two', why: /whole number/ },
    { text: 'slicer=1.5', why: /whole number/ },
    { text: 'slicer=', why: /whole number/ },
    { text: 'slicer', why: /"slicer" is not kind=count/ },
    { text: 'slicer=2,,hints=1', why: /"" is not kind=count/ },
    { text: 'slicer:3', why: /not kind=count/ },
    { text: 'slicer=2,slicer=3', why: /slicer is named twice/ },
  ];
  for (const tc of bad) it(`rejects ${JSON.stringify(tc.text)}`, () => expect(() => parseReplicas(tc.text)).toThrow(tc.why));

  it('is a stack setting: flag and STACK_REPLICAS, a bad value is a ConfigError naming the flag', () => {
    expect(stackConfig.parse([], {}).replicas).toEqual({ slicer: 1, hints: 1, watcher: 1 });
    expect(stackConfig.parse(['--replicas', 'slicer=3,watcher=2'], {}).replicas).toEqual({ slicer: 3, hints: 1, watcher: 2 });
    expect(stackConfig.parse([], { STACK_REPLICAS: 'hints=2' }).replicas).toEqual({ slicer: 1, hints: 2, watcher: 1 });
    let caught: unknown;
    try {
      stackConfig.parse(['--replicas', 'proxy=2'], {});
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as Error).message).toMatch(/--replicas.*unknown service "proxy"/);
  });

  it('round-trips through formatReplicas', () => {
    const r = { slicer: 3, hints: 2, watcher: 2 };
    expect(formatReplicas(r)).toBe('slicer=3,hints=2,watcher=2');
    expect(parseReplicas(formatReplicas(r))).toEqual(r);
    expect(hasReplicas(r)).toBe(true);
    expect(hasReplicas(parseReplicas(''))).toBe(false);
  });
});

describe('replica names', () => {
  it('one replica keeps the bare name; several are numbered from 0', () => {
    expect(replicaNames('slicer', 1)).toEqual(['slicer']);
    expect(replicaNames('slicer', 3)).toEqual(['slicer-0', 'slicer-1', 'slicer-2']);
    expect(replicaNames('watcher', 2)).toEqual(['watcher-0', 'watcher-1']);
  });

  it('names map back to their kind; other components have none', () => {
    expect(['slicer', 'slicer-2', 'hints-0', 'watcher', 'publisher', 'agent/worker-a-1', 'slicer-x'].map(replicaKindOf)).toEqual(['slicer', 'slicer', 'hints', 'watcher', undefined, undefined, undefined]);
  });

  it('readiness per kind counts ready and run replicas', () => {
    const c = (name: string, ready: boolean) => ({ name, isReady: () => ready });
    expect(replicaReadiness([c('watcher-0', true), c('watcher-1', true), c('slicer-0', true), c('slicer-1', false), c('slicer-2', true), c('hints', true), c('publisher', false)])).toEqual([
      { kind: 'slicer', ready: 2, total: 3 },
      { kind: 'hints', ready: 1, total: 1 },
      { kind: 'watcher', ready: 2, total: 2 },
    ]);
  });
});
