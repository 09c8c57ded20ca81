import { diffIpvs, renderIpvs } from '@slicemesh/dataplane';
import type { DpState } from '@slicemesh/dataplane';
import { dpEndpoint as ep, dpServicePort as svc, dpState } from '@slicemesh/dataplane/testing';
import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { FakeIpLink, FakeIpvs, NO_IPVS_MESSAGE, RecordingExec } from '../testing/index.ts';
import { ApplyError } from './apply-error.ts';
import { IpvsClient, parseIpvsadmList } from './ipvs-client.ts';

describe('parseIpvsadmList', () => {
  const listing = [
    'IP Virtual Server version 1.2.1 (size=4096)',
    'Prot LocalAddress:Port Scheduler Flags',
    '  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn',
    'TCP  10.96.0.10:80 rr persistent 300',
    '  -> 10.244.1.2:8080              Masq    1      3          1',
    '  -> 10.244.2.2:8080              Masq    0      0          7',
    'UDP  10.96.0.10:53 lc',
    'FWM  12 rr',
    '  -> 10.244.9.9:0                 Masq    1      0          0',
    'TCP  [fd00::10]:443 sh',
    '  -> [fd00:10::2]:8443            Masq    1      0          0',
    '',
  ].join('\n');
  const cases: { name: string; text: string; want: unknown }[] = [
    {
      name: 'D.5.3 reads scheduler, persistence, weights and connection counts',
      text: listing,
      want: [
        {
          protocol: 'TCP', address: '10.96.0.10', port: 80, scheduler: 'rr', persistenceTimeout: 300,
          realServers: [
            { address: '10.244.1.2', port: 8080, weight: 1, activeConnections: 3, inactiveConnections: 1 },
            { address: '10.244.2.2', port: 8080, weight: 0, activeConnections: 0, inactiveConnections: 7 },
          ],
        },
        { protocol: 'UDP', address: '10.96.0.10', port: 53, scheduler: 'lc', persistenceTimeout: null, realServers: [] },
        {
          protocol: 'TCP', address: 'fd00::10', port: 443, scheduler: 'sh', persistenceTimeout: null,
          realServers: [{ address: 'fd00:10::2', port: 8443, weight: 1, activeConnections: 0, inactiveConnections: 0 }],
        },
      ],
    },
    { name: 'a listing without services is empty', text: listing.split('\n').slice(0, 3).join('\n'), want: [] },
    { name: 'empty text is empty', text: '', want: [] },
  ];
  for (const tc of cases) it(tc.name, () => expect(parseIpvsadmList(tc.text)).toEqual(tc.want));
});

const v1: DpState = deepFreeze(
  dpState([
    svc('ns1/web:http', { clusterIP: '10.96.0.10', endpoints: [ep('10.244.1.2', { port: 8080 }), ep('10.244.2.2', { port: 8080 })], sessionAffinityTimeoutSeconds: 600 }),
    svc('ns1/dns:dns', { clusterIP: '10.96.0.53', port: 53, protocol: 'UDP', endpoints: [ep('10.244.1.3', { port: 53 })] }),
  ]),
);
const v2: DpState = deepFreeze({ ...v1, servicePorts: v1.servicePorts.map((sp) => ({ ...sp, clusterEndpoints: (sp.clusterEndpoints ?? []).slice(0, 1) })) });

function setup(available = true) {
  const ipvs = new FakeIpvs({ available });
  const link = new FakeIpLink();
  const rec = new RecordingExec([ipvs, link]);
  return { ipvs, link, rec, client: new IpvsClient({ exec: rec.exec }) };
}

async function observe(client: IpvsClient) {
  return { virtualServers: await client.virtualServers(), boundAddresses: await client.boundAddresses() };
}

describe('IpvsClient', () => {
  const availability = [
    { name: 'available when ipvsadm -L -n succeeds', available: true, want: [true, null] },
    { name: 'unavailable on a kernel without IPVS, with ipvsadm\'s reason', available: false, want: [false, NO_IPVS_MESSAGE.trim()] },
  ];
  for (const tc of availability) {
    it(tc.name, async () => {
      const { client } = setup(tc.available);
      expect([await client.available(), await client.unavailableReason()]).toEqual(tc.want);
    });
  }

  it('D.5.1–D.5.3 applies a diff from nothing: addresses bound, servers created with scheduler and persistence', async () => {
    const { ipvs, link, client } = setup();
    await client.ensureInterface();
    const desired = renderIpvs(v1, { scheduler: 'lc' });
    await client.apply(diffIpvs(await observe(client), desired));
    expect(link.addresses('kube-ipvs0')).toEqual(['10.96.0.10/32', '10.96.0.53/32']);
    expect(ipvs.dump()).toEqual([
      'TCP/10.96.0.10:80 lc persistent 600',
      '  -> 10.244.1.2:8080 weight 1',
      '  -> 10.244.2.2:8080 weight 1',
      'UDP/10.96.0.53:53 lc',
      '  -> 10.244.1.3:53 weight 1',
    ]);
    // Observing again and diffing against the same desired state finds nothing to do.
    expect(diffIpvs(await observe(client), desired)).toEqual([]);
  });

  it('D.5.5 a removed TCP real server with connections is quiesced (weight 0), then deleted once idle', async () => {
    const { ipvs, client } = setup();
    await client.ensureInterface();
    await client.apply(diffIpvs(await observe(client), renderIpvs(v1)));
    ipvs.setConnections('TCP/10.96.0.10:80', '10.244.2.2:8080', 2, 1);
    const count = (o: Awaited<ReturnType<typeof observe>>) => (vs: { address: string; port: number; protocol: string }, rs: { address: string; port: number }) => {
      const v = o.virtualServers.find((x) => x.address === vs.address && x.port === vs.port && x.protocol === vs.protocol);
      const r = v?.realServers.find((x) => x.address === rs.address && x.port === rs.port);
      return (r?.activeConnections ?? 0) + (r?.inactiveConnections ?? 0);
    };
    let seen = await observe(client);
    await client.apply(diffIpvs(seen, renderIpvs(v2), { activeConnections: count(seen) }));
    expect(ipvs.dump()).toContain('  -> 10.244.2.2:8080 weight 0');
    ipvs.setConnections('TCP/10.96.0.10:80', '10.244.2.2:8080', 0, 0);
    seen = await observe(client);
    await client.apply(diffIpvs(seen, renderIpvs(v2), { activeConnections: count(seen) }));
    expect(ipvs.dump().some((l) => l.includes('10.244.2.2'))).toBe(false);
  });

  it('a failing batch throws ApplyError naming the line', async () => {
    const { client } = setup();
    const e = (await client.restore('-A -t 10.0.0.1:80 -s rr\n-A -t 10.0.0.1:80 -s rr\n').catch((x: unknown) => x)) as ApplyError;
    expect(e).toBeInstanceOf(ApplyError);
    expect([e.tool, e.line]).toEqual(['ipvsadm', 2]);
  });

  it('boundAddresses is empty before the interface exists', async () => {
    const { client } = setup();
    expect(await client.boundAddresses()).toEqual([]);
  });
});
