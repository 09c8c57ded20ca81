import { deepFreeze, prng } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import type { KubeObj } from '../store/types.ts';
import { desiredEndpoints, firstK, MAX_ENDPOINT_ADDRESSES } from './endpoints-desired.ts';

function svc(spec: Record<string, unknown> = {}): KubeObj {
  return deepFreeze({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'ns' }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }], ...spec } });
}

interface PodOpts { ip?: string; ready?: boolean; terminating?: boolean; phase?: string; port?: number | null; hostname?: string }
function pod(name: string, o: PodOpts = {}): KubeObj {
  return deepFreeze({
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, ...(o.terminating ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: { nodeName: 'n1', ...(o.hostname ? { hostname: o.hostname, subdomain: 'web' } : {}), containers: [{ name: 'c', ports: o.port === null ? [] : [{ name: 'http', containerPort: o.port ?? 8080, protocol: 'TCP' }] }] },
    status: { phase: o.phase ?? 'Running', ...(o.ip === '' ? {} : { podIP: o.ip ?? `10.0.0.${name.slice(1)}` }), conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] },
  });
}

const ips = (list: readonly { ip: string }[] | undefined) => (list ?? []).map((a) => a.ip);

describe('desiredEndpoints', () => {
  it('ready pods are addresses, unready ones notReadyAddresses, sorted by IP, one subset per port set', () => {
    const { subsets } = desiredEndpoints(svc(), [pod('p3'), pod('p1'), pod('p2', { ready: false })]);
    expect(subsets).toHaveLength(1);
    expect([ips(subsets[0]!.addresses), ips(subsets[0]!.notReadyAddresses), subsets[0]!.ports]).toEqual([['10.0.0.1', '10.0.0.3'], ['10.0.0.2'], [{ name: 'http', port: 8080, protocol: 'TCP' }]]);
    expect(subsets[0]!.addresses![0]).toEqual({ ip: '10.0.0.1', nodeName: 'n1', targetRef: { kind: 'Pod', namespace: 'ns', name: 'p1', uid: 'uid-p1' } });
  });

  const exclusions: readonly { name: string; pod: KubeObj }[] = [
    { name: 'without an IP', pod: pod('p1', { ip: '' }) },
    { name: 'terminating', pod: pod('p1', { terminating: true }) },
    { name: 'Succeeded', pod: pod('p1', { phase: 'Succeeded' }) },
    { name: 'Failed', pod: pod('p1', { phase: 'Failed' }) },
    { name: 'lacking the named target port', pod: pod('p1', { port: null }) },
  ];
  for (const tc of exclusions) it(`leaves out a pod ${tc.name}`, () => expect(desiredEndpoints(svc(), [tc.pod]).subsets).toEqual([]));

  it('publishNotReadyAddresses includes unready and terminating pods as ready addresses', () => {
    const { subsets } = desiredEndpoints(svc({ publishNotReadyAddresses: true }), [pod('p1', { ready: false }), pod('p2', { terminating: true })]);
    expect([ips(subsets[0]!.addresses), subsets[0]!.notReadyAddresses]).toEqual([['10.0.0.1', '10.0.0.2'], undefined]);
  });

  it('pods resolving a named port differently land in different subsets', () => {
    const { subsets } = desiredEndpoints(svc(), [pod('p1', { port: 8080 }), pod('p2', { port: 9090 })]);
    expect(subsets.map((s) => [ips(s.addresses), s.ports![0]!.port])).toEqual([[['10.0.0.1'], 8080], [['10.0.0.2'], 9090]]);
  });

  it('a numeric targetPort needs no container port; a service without ports lists addresses only', () => {
    expect(desiredEndpoints(svc({ ports: [{ port: 80, targetPort: 9000, protocol: 'TCP' }] }), [pod('p1', { port: null })]).subsets[0]!.ports).toEqual([{ port: 9000, protocol: 'TCP' }]);
    expect(desiredEndpoints(svc({ ports: [] }), [pod('p1')]).subsets).toEqual([{ addresses: [expect.objectContaining({ ip: '10.0.0.1' })] }]);
  });

  it('sets hostname when the pod subdomain is the service name', () => {
    expect(desiredEndpoints(svc(), [pod('p1', { hostname: 'db-0' })]).subsets[0]!.addresses![0]!.hostname).toBe('db-0');
  });

  it(`truncates past ${MAX_ENDPOINT_ADDRESSES} addresses, ready ones first`, () => {
    const pods = Array.from({ length: 1002 }, (_, i) => pod(`p${i}`, { ip: `10.1.${Math.floor(i / 250)}.${i % 250}`, ready: i !== 5 }));
    const { subsets, truncated } = desiredEndpoints(svc(), pods);
    expect([truncated, subsets[0]!.addresses!.length, subsets[0]!.notReadyAddresses]).toEqual([true, 1000, undefined]);
  });

  it('no pods yields no subsets', () => {
    expect(desiredEndpoints(svc(), [])).toEqual({ subsets: [], truncated: false });
  });
});

describe('firstK', () => {
  const byAddress = (a: { ip: string; uid: string }, b: { ip: string; uid: string }) => a.ip.localeCompare(b.ip) || a.uid.localeCompare(b.uid);
  it('equals sorting everything and keeping the first k, for random lists, shared IPs and every kind of k', () => {
    const rnd = prng(17);
    for (let round = 0; round < 300; round++) {
      const n = Math.floor(rnd() * 60);
      const list = Array.from({ length: n }, (_, i) => ({ ip: `10.0.${Math.floor(rnd() * 3)}.${Math.floor(rnd() * 12)}`, uid: `u-${Math.floor(rnd() * 1000)}-${i}` }));
      for (const k of [0, 1, 5, n - 1, n, n + 3]) {
        expect(firstK(list, k), `round ${round}, k ${k}`).toEqual([...list].sort(byAddress).slice(0, Math.max(0, k)));
      }
    }
  });
});
