import { KUBE_PROXY_CHAINS, renderIptables, renderIptablesJumps } from '@slicemesh/dataplane';
import { dpEndpoint as ep, dpServicePort as svc, dpState } from '@slicemesh/dataplane/testing';
import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { FakeIptables, RecordingExec } from '../testing/index.ts';
import { ApplyError } from './apply-error.ts';
import { netnsExec } from './exec.ts';
import { IptablesRestorer, splitRuleArgs } from './iptables-restorer.ts';

const state = deepFreeze(dpState([svc('ns1/web:http', { endpoints: [ep('10.180.0.1'), ep('10.180.0.2')] })]));

function setup(family: 'IPv4' | 'IPv6' = 'IPv4') {
  const fake = new FakeIptables({ family });
  const rec = new RecordingExec([fake]);
  return { fake, rec, restorer: new IptablesRestorer({ exec: rec.exec, family }) };
}

describe('splitRuleArgs', () => {
  const cases: { name: string; text: string; want: string[] }[] = [
    { name: 'blanks separate words', text: '-m conntrack --ctstate NEW -j KUBE-SERVICES', want: ['-m', 'conntrack', '--ctstate', 'NEW', '-j', 'KUBE-SERVICES'] },
    { name: 'double quotes group a comment', text: '-m comment --comment "kubernetes service portals" -j KUBE-SERVICES', want: ['-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES'] },
    { name: 'empty text has no words', text: '  ', want: [] },
  ];
  for (const tc of cases) it(tc.name, () => expect(splitRuleArgs(tc.text)).toEqual(tc.want));
});

describe('IptablesRestorer.restore', () => {
  it('D.4.12 applies the script with one iptables-restore --noflush -w, script on stdin', async () => {
    const { fake, rec, restorer } = setup();
    const script = renderIptables(state).script;
    await restorer.restore(script);
    expect(rec.calls.map((c) => [c.command, c.args, c.input])).toEqual([['iptables-restore', ['--noflush', '-w'], script]]);
    expect(fake.userChains('nat')).toContain('SLICEMESH-SERVICES');
  });

  it('IPv6 uses ip6tables-restore, and wait can be turned off', async () => {
    const fake = new FakeIptables({ family: 'IPv6' });
    const rec = new RecordingExec([fake]);
    await new IptablesRestorer({ exec: rec.exec, family: 'IPv6', wait: false }).restore('*filter\n:KUBE-X - [0:0]\nCOMMIT\n');
    expect(rec.commandLines()).toEqual(['ip6tables-restore --noflush']);
    expect(fake.userChains('filter')).toEqual(['KUBE-X']);
  });

  it('a failing script throws ApplyError with the failing line and three lines either side', async () => {
    const { fake, restorer } = setup();
    const lines = ['*nat', ':KUBE-A - [0:0]', '-A KUBE-A -j ACCEPT', '-A KUBE-A -j ACCEPT', '-A KUBE-A -j KUBE-MISSING', '-A KUBE-A -j ACCEPT', '-A KUBE-A -j ACCEPT', '-A KUBE-A -j ACCEPT', '-A KUBE-A -j ACCEPT', 'COMMIT'];
    const err = await restorer.restore(lines.join('\n')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplyError);
    const e = err as ApplyError;
    expect([e.tool, e.code, e.line]).toEqual(['iptables-restore', 1, 5]);
    expect(e.excerpt.map((l) => l.n)).toEqual([2, 3, 4, 5, 6, 7, 8]);
    expect(e.excerptText()).toContain('>     5  -A KUBE-A -j KUBE-MISSING');
    expect(fake.userChains('nat')).toEqual([]); // the table block never committed
  });

  it('runs inside the configured network namespace', async () => {
    const fake = new FakeIptables();
    const rec = new RecordingExec([fake]);
    await new IptablesRestorer({ exec: netnsExec(rec.exec, 'node-a') }).restore('*filter\nCOMMIT\n');
    expect(rec.calls.map((c) => c.netns)).toEqual(['node-a']);
  });
});

describe('IptablesRestorer.ensureJumps', () => {
  it('D.4.1 checks every jump with -C and inserts the missing ones so the built-in chains list them in order', async () => {
    const { fake, rec, restorer } = setup();
    await restorer.restore(renderIptables(state).script);
    rec.clear();
    const jumps = renderIptablesJumps();
    const inserted = await restorer.ensureJumps(jumps);
    expect(inserted).toEqual(jumps);
    expect(rec.callsTo('iptables').filter((c) => c.args.includes('-C'))).toHaveLength(jumps.length);
    expect(fake.rules('nat', 'PREROUTING')).toEqual(['-m comment --comment kubernetes service portals -j SLICEMESH-SERVICES']);
    const forward = jumps.filter((j) => j.table === 'filter' && j.chain === 'FORWARD').map((j) => j.target);
    expect(fake.rules('filter', 'FORWARD').map((r) => r.split(' -j ')[1])).toEqual(forward);
  });

  it('inserts nothing when every jump is present (a second sync only checks)', async () => {
    const { rec, restorer } = setup();
    await restorer.restore(renderIptables(state).script);
    await restorer.ensureJumps(renderIptablesJumps());
    rec.clear();
    expect(await restorer.ensureJumps(renderIptablesJumps())).toEqual([]);
    expect(rec.calls.every((c) => c.args.includes('-C'))).toBe(true);
  });

  it('re-inserts only a jump someone deleted', async () => {
    const { fake, rec, restorer } = setup();
    await restorer.restore(renderIptables(state).script);
    await restorer.ensureJumps(renderIptablesJumps());
    const gone = renderIptablesJumps().find((j) => j.table === 'nat' && j.chain === 'OUTPUT');
    if (!gone) throw new Error('nat OUTPUT jump expected');
    expect((await rec.exec({ command: 'iptables', args: ['-t', 'nat', '-D', 'OUTPUT', ...splitRuleArgs(gone.args)] })).code).toBe(0);
    expect(fake.rules('nat', 'OUTPUT')).toEqual([]);
    expect(await restorer.ensureJumps(renderIptablesJumps())).toEqual([gone]);
    expect(fake.rules('nat', 'OUTPUT')).toHaveLength(1);
  });

  it('throws ApplyError when a target chain does not exist yet (restore first)', async () => {
    const { restorer } = setup();
    await expect(restorer.ensureJumps(renderIptablesJumps())).rejects.toBeInstanceOf(ApplyError);
  });
});

describe('IptablesRestorer.userChains', () => {
  it('lists user chains from iptables-save, never the built-in ones', async () => {
    const { restorer } = setup();
    await restorer.restore('*nat\n:KUBE-SVC-AAA - [0:0]\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -j KUBE-SVC-AAA\nCOMMIT\n');
    expect((await restorer.userChains('nat')).sort()).toEqual(['KUBE-SERVICES', 'KUBE-SVC-AAA']);
    expect(await restorer.userChains('filter')).toEqual([]);
  });
});

describe('IptablesRestorer.deleteChains', () => {
  it('D.4.15 removes the jumps into the chains, then the chains, and leaves every other chain and rule', async () => {
    const { fake, rec, restorer } = setup();
    const ours = renderIptables(state, { includeJumps: true }).script;
    const theirs = renderIptables(state, { includeJumps: true, chains: KUBE_PROXY_CHAINS }).script;
    await restorer.restore(theirs);
    await restorer.restore(ours);
    const kubeBefore = (t: string) => fake.userChains(t).filter((c) => c.startsWith('KUBE-')).map((c) => [c, fake.rules(t, c)]);
    const before = { nat: kubeBefore('nat'), filter: kubeBefore('filter') };
    rec.clear();
    const nat = fake.userChains('nat').filter((c) => c.startsWith('SLICEMESH-'));
    expect(await restorer.deleteChains('nat', [...nat, 'SLICEMESH-NOT-THERE'])).toBe(nat.length);
    expect(rec.callsTo('iptables').map((c) => c.args.slice(0, 5).join(' '))).toEqual(['-w -t nat -D PREROUTING', '-w -t nat -D OUTPUT', '-w -t nat -D POSTROUTING']);
    expect(await restorer.deleteChains('filter', fake.userChains('filter').filter((c) => c.startsWith('SLICEMESH-')))).toBe(5);
    for (const t of ['nat', 'filter']) {
      expect(fake.userChains(t).filter((c) => c.startsWith('SLICEMESH-'))).toEqual([]);
      for (const builtin of ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING']) expect(fake.rules(t, builtin).join('\n')).not.toContain('SLICEMESH-');
    }
    expect({ nat: kubeBefore('nat'), filter: kubeBefore('filter') }).toEqual(before);
  });

  it('deletes nothing and restores nothing when none of the chains exist', async () => {
    const { rec, restorer } = setup();
    expect(await restorer.deleteChains('nat', ['SLICEMESH-SERVICES'])).toBe(0);
    expect(rec.callsTo('iptables-restore')).toEqual([]);
  });
});
