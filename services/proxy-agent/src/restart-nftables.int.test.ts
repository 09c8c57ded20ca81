// Issue 10 part 4 on the real kernel, nftables: an agent restarted on a programmed node keeps the
// rules the kernel holds. The table's generation set says it is the table the saved state
// describes; the first sync then changes only what differs. Rule handles prove it: a rebuilt
// table numbers its rules anew, a kept one shows the same handles. Skips with the reason when
// namespaces cannot be made or nft is missing.

import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Exec, ExecRequest } from '@slicemesh/netfilter';
import { NftApplier, netnsExec, spawnExec } from '@slicemesh/netfilter';
import { missingTools, netnsAddFailure } from '@slicemesh/netfilter/testing/netns-lab';
import { realClock } from '@slicemesh/runtime';
import { RESTART_PORTS, restartState, restartWeb } from './restart-fixture.ts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { NftablesBackend } from './backends/nftables-backend.ts';

const failure = netnsAddFailure();
const tools = missingTools(['nft']);
const unavailable = failure !== null ? `cannot create network namespaces: ${failure}` : tools.length > 0 ? `missing tools: ${tools.join(', ')}` : null;
const id = randomUUID().slice(0, 6);

const web = restartWeb;
const PORTS = RESTART_PORTS;
const state = restartState;

function nft(ns: string, args: readonly string[]): string {
  const r = spawnSync('ip', ['netns', 'exec', ns, 'nft', ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`nft ${args.join(' ')} in ${ns}: ${r.stderr.trim()}`);
  return r.stdout;
}

/** Our table as nft lists it, with rule handles (`-a`), the generation set's element left out. */
const listed = (ns: string, handles: boolean): string =>
  nft(ns, [...(handles ? ['-a'] : []), 'list', 'table', 'ip', 'slicemesh'])
    .replace(/(set sync-generation \{[^}]*?)elements = \{[^}]*\}/s, '$1')
    .replace(/ # handle \d+\n(\s*)(type mark)/, '\n$1$2');

function agent(ns: string, dir: string): { backend: NftablesBackend; scripts: () => string[] } {
  const calls: ExecRequest[] = [];
  const real = netnsExec(spawnExec(), ns);
  const exec: Exec = (req) => (calls.push(req), real(req));
  const file = join(dir, 'nftables-ip.json');
  const backend = new NftablesBackend({
    nft: new NftApplier({ exec }),
    clock: realClock,
    saveIntervalMs: 0,
    stateStore: {
      load: async () => (existsSync(file) ? readFileSync(file, 'utf8') : null),
      save: async (text) => writeFileSync(file, text),
    },
  });
  return { backend, scripts: () => calls.filter((c) => c.command === 'nft' && c.args[0] === '-f').map((c) => c.input ?? '') };
}

describe(`a restarted agent keeps what the kernel holds (nftables)${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  const [node, fresh] = [`smrn${id}n`, `smrn${id}f`];
  const dir = mkdtempSync(join(tmpdir(), 'smrn-'));
  const freshDir = mkdtempSync(join(tmpdir(), 'smrn-f-'));
  beforeAll(() => {
    if (unavailable) return;
    for (const ns of [node, fresh]) spawnSync('ip', ['netns', 'add', ns]);
  });
  afterAll(() => {
    for (const ns of [node, fresh]) spawnSync('ip', ['netns', 'delete', ns]);
    rmSync(dir, { recursive: true, force: true });
    rmSync(freshDir, { recursive: true, force: true });
  });
  const step = (name: string, fn: () => Promise<void>) =>
    it(name, async (ctx) => {
      if (unavailable) ctx.skip(unavailable);
      await fn();
    });

  step('the same services: nothing is written, every rule keeps its handle', async () => {
    await agent(node, dir).backend.sync({ state: state(PORTS), changedServices: null });
    await vi.waitFor(() => expect(existsSync(join(dir, 'nftables-ip.json'))).toBe(true), { timeout: 5000, interval: 20 });
    const before = listed(node, true);
    const restarted = agent(node, dir);
    const r = await restarted.backend.sync({ state: state(PORTS), changedServices: null });
    expect(r.detail).toMatchObject({ restored: true });
    expect(restarted.scripts()).toEqual([]);
    expect(listed(node, true)).toEqual(before);
  });

  step('changed while it was down: one transaction with only the difference, the rest keeps its handles, the result equals a fresh agent', async () => {
    const next = [web(2), ...PORTS.slice(1, -1)]; // one endpoint fewer for web, ns2/internal gone
    const dbRule = (text: string): string | undefined => text.split('\n').find((l) => l.includes('10.180.1.2'));
    const dbBefore = dbRule(listed(node, true));
    expect(dbBefore).toMatch(/# handle \d+/);
    const restarted = agent(node, dir);
    const r = await restarted.backend.sync({ state: state(next), changedServices: null });
    expect(r).toMatchObject({ mode: 'partial', detail: { restored: true } });
    const scripts = restarted.scripts();
    expect(scripts).toHaveLength(1);
    expect(scripts[0]).not.toContain('delete table');
    expect(scripts[0]).not.toContain('ns1/db');
    await agent(fresh, freshDir).backend.sync({ state: state(next), changedServices: null });
    expect(listed(node, false)).toEqual(listed(fresh, false));
    // A rule of an unchanged service keeps its handle.
    expect(dbRule(listed(node, true))).toEqual(dbBefore);
  });

  step('a table changed by someone else since the save (another generation) is rewritten in full', async () => {
    const before = agent(node, dir);
    await before.backend.sync({ state: state(PORTS), changedServices: null });
    await vi.waitFor(() => expect(readFileSync(join(dir, 'nftables-ip.json'), 'utf8')).toContain('10.180.6.1'), { timeout: 5000, interval: 20 });
    nft(node, ['flush', 'set', 'ip', 'slicemesh', 'sync-generation']);
    const restarted = agent(node, dir);
    const r = await restarted.backend.sync({ state: state(PORTS), changedServices: null });
    expect(r.mode).toBe('full');
    expect(restarted.scripts().join('')).toContain('delete table ip slicemesh');
  });
});
