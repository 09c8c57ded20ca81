// The adapters against the real tools and kernel, in throwaway network namespaces, and the
// fakes checked against the same sequences (habit 10: fakes are tested, here against the
// real thing). Skips with the reason when namespaces cannot be created. The IPVS case runs
// only where `ipvsadm -L -n` works and says plainly when it is skipped.

import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { renderIptables, renderIptablesJumps, renderNftablesFull, renderNftablesUpdate, renderIpvs, diffIpvs } from '@slicemesh/dataplane';
import { dpEndpoint as ep, dpServicePort as svc, dpState } from '@slicemesh/dataplane/testing';
import { deepFreeze } from '@slicemesh/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeIptables, FakeNft, RecordingExec } from '../testing/index.ts';
import { ApplyError } from './apply-error.ts';
import type { Exec } from './exec.ts';
import { netnsExec, spawnExec } from './exec.ts';
import { IptablesRestorer } from './iptables-restorer.ts';
import { IpvsClient } from './ipvs-client.ts';
import { NftApplier } from './nft-applier.ts';

const ns = `sm-nf-${randomUUID().slice(0, 8)}`;
let nsError: string | null = null;
const real: Exec = netnsExec(spawnExec(), ns);

const v1 = deepFreeze(dpState([svc('ns1/web:http', { clusterIP: '172.30.0.41', endpoints: [ep('10.180.0.1'), ep('10.180.0.2')] }), svc('ns1/db:pg', { clusterIP: '172.30.0.42', port: 5432, endpoints: [ep('10.180.1.1', { port: 5432 })] })]));
const v2 = deepFreeze({ ...v1, servicePorts: v1.servicePorts.filter((sp) => sp.servicePortName === 'ns1/web:http') });

beforeAll(() => {
  const r = spawnSync('ip', ['netns', 'add', ns], { encoding: 'utf8' });
  if (r.status !== 0) nsError = `cannot create a network namespace: ${r.stderr.trim() || r.error?.message}`;
});
afterAll(() => {
  if (nsError === null) spawnSync('ip', ['netns', 'delete', ns]);
});

/** The same steps against the kernel and against the fake; returns what each observed. */
async function iptablesScenario(exec: Exec) {
  const r = new IptablesRestorer({ exec });
  const first = renderIptables(v1);
  await r.restore(first.script);
  const inserted1 = (await r.ensureJumps(renderIptablesJumps())).length;
  const inserted2 = (await r.ensureJumps(renderIptablesJumps())).length;
  const chains1 = (await r.userChains('nat')).sort();
  // A partial sync dropping a service deletes its chains.
  await r.restore(renderIptables(v2, { previous: first, changedServicePorts: new Set(['ns1/db']) }).script);
  const chains2 = (await r.userChains('nat')).sort();
  const bad = ['*nat', ':KUBE-SVC-BROKEN - [0:0]', '-A KUBE-SVC-BROKEN -m nosuchmatch -j ACCEPT', 'COMMIT', ''].join('\n');
  const err = await r.restore(bad).catch((e: unknown) => e);
  const chains3 = (await r.userChains('nat')).sort();
  return { inserted1, inserted2, chains1, chains2, chains3, err };
}

describe('netfilter adapters on the real kernel', () => {
  it('iptables: restore, ensure jumps, partial sync, a rejected script — and the fake agrees', async (ctx) => {
    if (nsError !== null) ctx.skip(nsError);
    const kernel = await iptablesScenario(real);
    const fake = await iptablesScenario(new RecordingExec([new FakeIptables()]).exec);
    expect(kernel.inserted1).toBe(renderIptablesJumps().length);
    expect(kernel.inserted2).toBe(0);
    expect(kernel.chains1.filter((c) => c.startsWith('SLICEMESH-SEP-'))).toHaveLength(3);
    expect(kernel.chains2.filter((c) => c.startsWith('SLICEMESH-SEP-'))).toHaveLength(2);
    expect(kernel.err).toBeInstanceOf(ApplyError);
    expect((kernel.err as ApplyError).line).toBe(3);
    expect((kernel.err as ApplyError).excerptText()).toContain('>     3  -A KUBE-SVC-BROKEN');
    expect(kernel.chains3).toEqual(kernel.chains2); // the failed block left nothing behind
    // The fake models the same outcomes (its error wording differs; the line does not matter here).
    expect({ ...fake, err: fake.err instanceof ApplyError }).toEqual({ ...kernel, err: true });
  });

  it('nftables: a full table, an update transaction, a rejected transaction — and the fake agrees', async (ctx) => {
    if (nsError !== null) ctx.skip(nsError);
    const run = async (exec: Exec) => {
      const nft = new NftApplier({ exec });
      await nft.apply(renderNftablesFull(v1));
      await nft.apply(renderNftablesUpdate(v1, v2).script);
      const err = await nft.apply('add chain ip slicemesh x\nadd rule ip slicemesh x jump nowhere\n').catch((e: unknown) => e);
      await nft.deleteTable('ip', 'slicemesh');
      await nft.deleteTable('ip', 'slicemesh');
      return err;
    };
    const kernelErr = await run(real);
    const fakeErr = await run(new RecordingExec([new FakeNft()]).exec);
    for (const e of [kernelErr, fakeErr]) {
      expect(e).toBeInstanceOf(ApplyError);
      expect((e as ApplyError).line).toBe(2);
    }
    const listed = await real({ command: 'nft', args: ['list', 'tables'] });
    expect(listed.stdout).not.toContain('slicemesh');
  });

  it('IPVS: virtual servers from a diff (runs only where ipvsadm -L -n works)', async (ctx) => {
    if (nsError !== null) ctx.skip(nsError);
    const client = new IpvsClient({ exec: real, interface: 'sm-ipvs0' });
    const reason = await client.unavailableReason();
    if (reason !== null) {
      ctx.skip(`IPVS is not usable here (ipvsadm -L -n: ${reason.split('\n')[0]}); the IPVS client is covered by unit tests with the fake`);
    }
    await client.ensureInterface();
    const desired = renderIpvs(v1, { interface: 'sm-ipvs0' });
    await client.apply(diffIpvs({ virtualServers: [], boundAddresses: [] }, desired));
    const seen = { virtualServers: await client.virtualServers(), boundAddresses: await client.boundAddresses() };
    expect(diffIpvs(seen, desired)).toEqual([]);
  });
});
