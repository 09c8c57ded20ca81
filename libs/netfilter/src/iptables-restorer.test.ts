import { KUBE_PROXY_CHAINS, renderIptables, renderIptablesJumps } from '@slicemesh/dataplane';
import { dpEndpoint as ep, dpServicePort as svc, dpState } from '@slicemesh/dataplane/testing';
import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { FakeIptables, RecordingExec } from '../testing/index.ts';
import { ApplyError } from './apply-error.ts';
import { netnsExec } from './exec.ts';
import { IptablesRestorer, parseIptablesSave, splitRuleArgs, withTableListing } from './iptables-restorer.ts';

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
  it('D.4.1 lists each built-in chain once, confirms an absent jump with -C and inserts the missing ones in order', async () => {
    const { fake, rec, restorer } = setup();
    await restorer.restore(renderIptables(state).script);
    rec.clear();
    const jumps = renderIptablesJumps();
    const inserted = await restorer.ensureJumps(jumps);
    expect(inserted).toEqual(jumps);
    expect(rec.callsTo('iptables').filter((c) => c.args.includes('-S')).map((c) => c.args.slice(1).join(' '))).toEqual([
      '-t filter -S INPUT',
      '-t filter -S FORWARD',
      '-t filter -S OUTPUT',
      '-t nat -S PREROUTING',
      '-t nat -S OUTPUT',
      '-t nat -S POSTROUTING',
    ]);
    expect(rec.callsTo('iptables').filter((c) => c.args.includes('-C'))).toHaveLength(jumps.length);
    // All inserts in one restore.
    expect(rec.callsTo('iptables').filter((c) => c.args.includes('-I'))).toEqual([]);
    expect(rec.callsTo('iptables-restore')).toHaveLength(1);
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
    // Six listings, no -C: each -C would read the target chain's rules as well.
    expect(rec.calls.map((c) => c.args.includes('-S'))).toEqual(Array(6).fill(true));
  });

  it('checks a jump missing from the listing with -C before inserting it', async () => {
    const { fake, rec, restorer } = setup();
    await restorer.restore(renderIptables(state).script);
    await restorer.ensureJumps(renderIptablesJumps());
    rec.clear();
    // Another word order is another rule to the listing; -C has the last word (the kernel's
    // -C matches on meaning, the fake's on words, so here it is inserted).
    const jump = { table: 'nat', chain: 'OUTPUT', target: 'SLICEMESH-SERVICES', args: '-j SLICEMESH-SERVICES -m comment --comment "kubernetes service portals"' } as const;
    expect(await restorer.ensureJumps([jump])).toEqual([jump]);
    expect(rec.commandLines().map((l) => l.split(' ').slice(0, 6).join(' '))).toEqual(['iptables -w -t nat -S OUTPUT', 'iptables -w -t nat -C OUTPUT', 'iptables-restore --noflush -w']);
    expect(fake.rules('nat', 'OUTPUT')).toHaveLength(2);
  });

  it('with an observation from before the restore, needs no listing and no -C for chains that did not exist then', async () => {
    const { fake, rec, restorer } = setup();
    const observed = await restorer.observe();
    await restorer.restore(renderIptables(state).script);
    rec.clear();
    expect(await restorer.ensureJumps(renderIptablesJumps(), observed)).toEqual(renderIptablesJumps());
    expect(rec.commandLines()).toEqual(['iptables-restore --noflush -w']);
    expect(fake.rules('filter', 'INPUT')).toHaveLength(3);
    // Observed again: every jump listed word for word, nothing run at all.
    const again = await restorer.observe();
    rec.clear();
    expect(await restorer.ensureJumps(renderIptablesJumps(), again)).toEqual([]);
    expect(rec.calls).toEqual([]);
  });

  it('with an observation, a jump absent although its target chain existed is checked with -C', async () => {
    const { rec, restorer } = setup();
    await restorer.restore(renderIptables(state).script);
    const observed = await restorer.observe();
    rec.clear();
    expect(await restorer.ensureJumps(renderIptablesJumps(), observed)).toEqual(renderIptablesJumps());
    expect(rec.callsTo('iptables').filter((c) => c.args.includes('-C'))).toHaveLength(renderIptablesJumps().length);
  });
});

describe('parseIptablesSave', () => {
  it('keeps user chains per table, the words of built-in chains\' rules and the text of user chains\' rules', () => {
    const text = [
      '# Generated by iptables-save',
      '*nat',
      ':PREROUTING ACCEPT [0:0]',
      ':KUBE-SVC-A - [0:0]',
      '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
      '-A KUBE-SVC-A -j KUBE-SEP-B',
      'COMMIT',
      '*filter',
      ':INPUT DROP [3:180]',
      'COMMIT',
      '',
    ].join('\n');
    const seen = parseIptablesSave(text);
    expect([...seen.tables.keys()]).toEqual(['nat', 'filter']);
    expect(seen.tables.get('nat')?.userChains).toEqual(['KUBE-SVC-A']);
    expect([...(seen.tables.get('nat')?.builtinRules ?? [])]).toEqual([['PREROUTING', [['-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES']]]]);
    expect([...(seen.tables.get('nat')?.userRules ?? [])]).toEqual([['KUBE-SVC-A', ['-j KUBE-SEP-B']]]);
    expect(seen.tables.get('filter')?.userChains).toEqual([]);
  });
});

describe('withTableListing', () => {
  const decl = (n: number, table: string) => [`*${table}`, ...Array.from({ length: n }, (_, i) => `:C${i} - [0:0]`), 'COMMIT'];
  const cases: { name: string; script: string[]; threshold: number; want: string[] }[] = [
    { name: 'a block declaring fewer chains than the threshold is sent as it is', script: decl(3, 'nat'), threshold: 4, want: decl(3, 'nat') },
    { name: 'a block declaring as many chains as the threshold starts with -S', script: decl(4, 'nat'), threshold: 4, want: ['*nat', '-S', ...decl(4, 'nat').slice(1)] },
    {
      name: 'jump targets do not count (a rewritten dispatch chain declares one chain)',
      script: ['*nat', ':A - [0:0]', '-A A -j B', '-A A -j C', '-A A -j D', 'COMMIT'],
      threshold: 4,
      want: ['*nat', ':A - [0:0]', '-A A -j B', '-A A -j C', '-A A -j D', 'COMMIT'],
    },
    { name: 'each table block is judged on its own', script: [...decl(1, 'filter'), ...decl(5, 'nat'), ''], threshold: 4, want: [...decl(1, 'filter'), '*nat', '-S', ...decl(5, 'nat').slice(1), ''] },
  ];
  for (const tc of cases) it(tc.name, () => expect(withTableListing(tc.script.join('\n'), tc.threshold).script.split('\n')).toEqual(tc.want));

  it('a large restore sends -S first, and a failing line is quoted from the text sent', async () => {
    const fake = new FakeIptables();
    const rec = new RecordingExec([fake]);
    const restorer = new IptablesRestorer({ exec: rec.exec, listTableAbove: 2 });
    const err = await restorer.restore(['*nat', ':KUBE-A - [0:0]', ':KUBE-B - [0:0]', '-A KUBE-A -j KUBE-MISSING', 'COMMIT'].join('\n')).catch((e: unknown) => e);
    expect(rec.calls[0]?.input?.split('\n').slice(0, 2)).toEqual(['*nat', '-S']);
    expect((err as ApplyError).excerptText()).toContain('>     5  -A KUBE-A -j KUBE-MISSING');
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
