// A restarted nftables agent keeps the rules already in the kernel when the table still holds
// the generation of the state it saved, and falls back to a full sync on any doubt.

import type { DpServicePort, DpState } from '@slicemesh/dataplane';
import { renderNftablesFull } from '@slicemesh/dataplane';
import { applyNft, dpEndpoint as ep, dpServicePort as svc, dpState, dumpNft } from '@slicemesh/dataplane/testing';
import { NftApplier } from '@slicemesh/netfilter';
import { FakeNft, RecordingExec } from '@slicemesh/netfilter/testing';
import { FakeClock } from '@slicemesh/runtime';
import { describe, expect, it } from 'vitest';
import type { NftStateStore } from './nftables-backend.ts';
import { NftablesBackend } from './nftables-backend.ts';

const web = (n: number): DpServicePort => svc('ns1/web:http', { clusterIP: '172.30.0.41', endpoints: Array.from({ length: n }, (_, i) => ep(`10.180.0.${i + 1}`)) });
const db = svc('ns1/db:pg', { clusterIP: '172.30.0.42', port: 5432, sessionAffinityTimeoutSeconds: 60, endpoints: [ep('10.180.1.1', { port: 5432 })] });
const api = svc('ns2/api:http', { clusterIP: '172.30.0.43', endpoints: [ep('10.180.2.1')] });

class MemoryStore implements NftStateStore {
  text: string | null = null;
  async load(): Promise<string | null> {
    return this.text;
  }
  async save(text: string): Promise<void> {
    this.text = text;
  }
}

interface Node {
  readonly fake: FakeNft;
  readonly store: MemoryStore;
  readonly clock: FakeClock;
  readonly errors: unknown[];
  agent(): NftablesBackend;
}

function node(): Node {
  const fake = new FakeNft();
  const store = new MemoryStore();
  const clock = new FakeClock(0);
  const errors: unknown[] = [];
  return {
    fake, store, clock, errors,
    agent: () => new NftablesBackend({ nft: new NftApplier({ exec: new RecordingExec([fake]).exec }), stateStore: store, clock, onStateError: (e) => errors.push(e) }),
  };
}

/** Lets the throttled save run. */
async function flushSave(n: Node): Promise<void> {
  n.clock.advance(10_000);
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

/** Our table as dumped, without the generation set (which only the agent's scripts add). */
function table(n: Node): string[] {
  const t = n.fake.ruleset.get('ip slicemesh');
  if (t === undefined) return [];
  const containers = new Map([...t.containers].filter(([name]) => name !== 'sync-generation'));
  return dumpNft(new Map([['ip slicemesh', { ...t, containers }]]), 'ip slicemesh');
}
const rendered = (state: DpState): string[] => dumpNft(applyNft(new Map(), renderNftablesFull(state)), 'ip slicemesh');

describe('a restarted nftables agent', () => {
  const s1 = dpState([web(3), db, api]);
  const s2 = dpState([web(4), db]);
  const cases: { name: string; prepare: (n: Node) => Promise<void> | void; next: DpState; want: 'kept' | 'full' }[] = [
    { name: 'with the same services writes nothing', prepare: () => {}, next: s1, want: 'kept' },
    { name: 'with one service changed and one gone writes only their objects', prepare: () => {}, next: s2, want: 'kept' },
    {
      name: 'after a crash between an apply and its save (the table is a generation ahead) syncs in full',
      prepare: async (n) => {
        const a = n.agent();
        await a.sync({ state: s1, changedServices: null });
        await flushSave(n);
        await a.sync({ state: s2, changedServices: new Set(['ns1/web', 'ns2/api']) }); // applied, not yet saved
      },
      next: s2,
      want: 'full',
    },
    { name: 'without a saved state syncs in full', prepare: (n) => void (n.store.text = null), next: s1, want: 'full' },
    {
      name: 'with a saved state of the other family syncs in full',
      prepare: (n) => {
        const saved = JSON.parse(n.store.text ?? '{}') as { state: DpState };
        n.store.text = JSON.stringify({ ...saved, state: { ...saved.state, family: 'IPv6' } });
      },
      next: s1,
      want: 'full',
    },
    { name: 'with an unreadable saved state syncs in full and says why', prepare: (n) => void (n.store.text = '{not json'), next: s1, want: 'full' },
    { name: 'on a node whose table was deleted syncs in full', prepare: (n) => void n.fake.handle({ command: 'nft', args: ['-f', '-'], input: 'delete table ip slicemesh\n' }), next: s1, want: 'full' },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const n = node();
      const first = n.agent();
      await first.sync({ state: s1, changedServices: null });
      await flushSave(n);
      await c.prepare(n);
      const before = n.fake.scripts.length;
      const r = await n.agent().sync({ state: c.next, changedServices: null });
      const scripts = n.fake.scripts.slice(before);
      expect(table(n)).toEqual(rendered(c.next));
      if (c.want === 'kept') {
        expect(r.mode).toBe('partial');
        expect(r.detail).toMatchObject({ restored: true });
        expect(scripts.join('')).not.toContain('delete table');
        if (c.next === s1) expect(scripts).toEqual([]);
        else expect(scripts.join('')).toContain('10.180.0.4');
      } else {
        expect(r.mode).toBe('full');
        expect(scripts.join('')).toContain('delete table ip slicemesh');
      }
      if (c.name.includes('unreadable')) expect(n.errors).toHaveLength(1);
    });
  }

  it('keeps the generation in the table in step with the saved state across syncs', async () => {
    const n = node();
    const a = n.agent();
    await a.sync({ state: s1, changedServices: null });
    await a.sync({ state: s2, changedServices: new Set(['ns1/web', 'ns2/api']) });
    await flushSave(n);
    const saved = JSON.parse(n.store.text ?? '{}') as { generation: number; state: DpState };
    expect(saved.state).toEqual(s2);
    const listed = await new NftApplier({ exec: new RecordingExec([n.fake]).exec }).listSetElements('ip', 'slicemesh', 'sync-generation');
    expect(listed).toEqual([String(saved.generation)]);
  });
});
