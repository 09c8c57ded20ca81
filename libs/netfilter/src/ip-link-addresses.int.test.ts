// IpLink.localAddresses against the real `ip` in a throwaway namespace with a veth pair (the
// dummy link type is missing on our CI kernel, veth is not), and the fake agreeing. Skips with
// the reason when namespaces or veth links cannot be created.

import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeIpLink, RecordingExec } from '../testing/index.ts';
import { netnsExec, spawnExec } from './exec.ts';
import { IpLink } from './ip-link.ts';

const ns = `sm-addr-${randomUUID().slice(0, 8)}`;
let skipReason: string | null = null;

beforeAll(() => {
  const steps = [
    ['netns', 'add', ns],
    ['-n', ns, 'link', 'add', 'sm0', 'type', 'veth', 'peer', 'name', 'sm1'],
    ['-n', ns, 'addr', 'add', '192.168.7.2/24', 'dev', 'sm0'],
    ['-n', ns, 'addr', 'add', 'fd00:7::2/64', 'dev', 'sm0'],
    ['-n', ns, 'addr', 'add', '10.96.0.10/32', 'dev', 'sm1'],
    ['-n', ns, 'link', 'set', 'sm0', 'up'],
    ['-n', ns, 'link', 'set', 'sm1', 'up'],
    ['-n', ns, 'link', 'set', 'lo', 'up'],
  ];
  for (const args of steps) {
    const r = spawnSync('ip', args, { encoding: 'utf8' });
    if (r.status !== 0) {
      skipReason = `cannot set up the namespace (ip ${args.join(' ')}): ${r.stderr.trim() || r.error?.message}`;
      return;
    }
  }
});
afterAll(() => {
  spawnSync('ip', ['netns', 'delete', ns]);
});

describe('D.5.1 node addresses for IPVS NodePorts, on the real kernel', () => {
  it('every address but loopback, link-local and the excluded interface — and the fake agrees', async (ctx) => {
    if (skipReason !== null) ctx.skip(skipReason);
    const link = new IpLink({ exec: netnsExec(spawnExec(), ns) });
    const kernel = [await link.localAddresses('IPv4', ['sm1']), await link.localAddresses('IPv6', ['sm1']), await link.localAddresses('IPv4')];
    expect(kernel).toEqual([['192.168.7.2'], ['fd00:7::2'], ['10.96.0.10', '192.168.7.2']]);
    const fake = new FakeIpLink();
    fake.addHostAddress('lo', '127.0.0.1/8');
    fake.addHostAddress('sm0', '192.168.7.2/24');
    fake.addHostAddress('sm0', 'fd00:7::2/64');
    fake.addHostAddress('sm0', 'fe80::1/64');
    fake.addHostAddress('sm1', '10.96.0.10/32');
    const viaFake = new IpLink({ exec: new RecordingExec([fake]).exec });
    expect([await viaFake.localAddresses('IPv4', ['sm1']), await viaFake.localAddresses('IPv6', ['sm1']), await viaFake.localAddresses('IPv4')]).toEqual(kernel);
  });
});
