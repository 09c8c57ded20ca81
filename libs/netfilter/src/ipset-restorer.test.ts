import { renderIpvsCompanion } from '@slicemesh/dataplane';
import { dpEndpoint as ep, dpServicePort as svc, dpState } from '@slicemesh/dataplane/testing';
import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { FakeIpset, RecordingExec } from '../testing/index.ts';
import { ApplyError } from './apply-error.ts';
import { IpsetRestorer, ipsetErrorLine } from './ipset-restorer.ts';

const state = deepFreeze(dpState([svc('ns1/web:http', { clusterIP: '172.30.0.41', nodePort: 30080, endpoints: [ep('10.180.0.1')] })]));

describe('D.5.4 IpsetRestorer', () => {
  it('applies the rendered sets with one ipset restore -exist, twice without complaint', async () => {
    const fake = new FakeIpset();
    const rec = new RecordingExec([fake]);
    const restorer = new IpsetRestorer({ exec: rec.exec });
    const script = renderIpvsCompanion(state).ipsetRestore;
    await restorer.restore(script);
    await restorer.restore(script);
    expect(rec.commandLines()).toEqual(['ipset restore -exist', 'ipset restore -exist']);
    expect([fake.members('SLICEMESH-CLUSTER-IP'), fake.members('SLICEMESH-NODE-PORT-TCP')]).toEqual([['172.30.0.41,tcp:80'], ['30080']]);
    expect(await restorer.setNames()).toContain('SLICEMESH-LOOP-BACK');
  });

  it('a later restore leaves exactly the new members', async () => {
    const fake = new FakeIpset();
    const restorer = new IpsetRestorer({ exec: new RecordingExec([fake]).exec });
    await restorer.restore(renderIpvsCompanion(state).ipsetRestore);
    await restorer.restore(renderIpvsCompanion({ ...state, servicePorts: [] }).ipsetRestore);
    expect(fake.members('SLICEMESH-CLUSTER-IP')).toEqual([]);
  });

  it('a refused script is an ApplyError quoting the line ipset names', async () => {
    const restorer = new IpsetRestorer({ exec: new RecordingExec([new FakeIpset()]).exec });
    const err = await restorer.restore('create A hash:ip\nadd B 10.0.0.1\n').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplyError);
    expect((err as ApplyError).line).toBe(2);
  });

  it('ipsetErrorLine reads the real tool\'s message', () => {
    expect([ipsetErrorLine('ipset v7.17: Error in line 2: Syntax error: cannot parse foo'), ipsetErrorLine('other')]).toEqual([2, null]);
  });
});
