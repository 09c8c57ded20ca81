import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '@slicemesh/model';
import { deepFreeze } from '@slicemesh/testing';
import { TokenDecodeError, TokenEncodeError } from './errors.ts';
import {
  currentSlicesSubject,
  dlqSubject,
  fnv1a32,
  hintedKey,
  kubeKindFilter,
  kubeNodeSubject,
  kubeNodesFilter,
  kubeObjectSubject,
  kubePartitionFilter,
  legacySlicesFilter,
  misfiledPartition,
  parseHintedKey,
  parseKubeSubject,
  parseSlicesSubject,
  parseSvcKey,
  parseViewKey,
  partitionOf,
  slicesFilter,
  slicesPartitionFilter,
  slicesSubject,
  streamSubjects,
  svcClusterFilter,
  svcKey,
  viewKey,
  zoneViewsFilter,
} from './subjects.ts';
import type { HintedKeyAddress, KubeObjectAddress, SliceSubjectAddress, ViewKeyAddress } from './subjects.ts';

/** NATS subject matching (single filter), enough to check our filters against our subjects. */
function matches(filter: string, subject: string): boolean {
  const f = filter.split('.');
  const s = subject.split('.');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '>') return s.length > i;
    if (i >= s.length) return false;
    if (f[i] !== '*' && f[i] !== s[i]) return false;
  }
  return f.length === s.length;
}

describe('fnv1a32 (published FNV-1a 32-bit test vectors)', () => {
  const cases = [
    { name: 'empty string is the offset basis', input: '', want: 0x811c9dc5 },
    { name: '"a"', input: 'a', want: 0xe40c292c },
    { name: '"foobar"', input: 'foobar', want: 0xbf9cf968 },
  ];
  for (const tc of cases) it(tc.name, () => expect(fnv1a32(tc.input)).toBe(tc.want));
});

describe('partitionOf', () => {
  const cases = [
    // Pinned values: changing the hash silently re-partitions every deployment.
    { name: 'is pinned: "default" with 8 partitions is 6 (0x933b5bde % 8)', ns: 'default', p: 8, want: 6 },
    { name: 'is pinned: "kube-system" with 1000 partitions is 454', ns: 'kube-system', p: 1000, want: 454 },
    { name: 'the empty namespace hashes to the offset basis (0x811c9dc5 % 8 = 5)', ns: '', p: 8, want: 5 },
    { name: 'one partition puts everything in 0', ns: 'kube-system', p: 1, want: 0 },
    { name: 'hashes the raw UTF-8 name, not its token ("é" is 0x1e9de8c1)', ns: 'é', p: 1000, want: 217 },
  ];
  for (const tc of cases) it(tc.name, () => expect(partitionOf(tc.ns, tc.p)).toBe(tc.want));

  it('spreads 1000 namespaces over 8 partitions without an empty or overfull one', () => {
    const counts = new Array<number>(8).fill(0);
    for (let i = 0; i < 1000; i++) counts[partitionOf(`ns-${i}`, 8)]!++;
    for (const c of counts) expect(c).toBeGreaterThan(80);
    for (const c of counts) expect(c).toBeLessThan(170);
  });

  const bad = [0, -1, 1.5, Number.NaN, 10_001];
  for (const p of bad) {
    it(`rejects ${p} partitions`, () => expect(() => partitionOf('default', p)).toThrow(InvalidArgumentError));
  }
});

describe('kube subjects', () => {
  const objects: readonly { name: string; a: KubeObjectAddress; subject: string }[] = deepFreeze([
    { name: 'a plain service', a: { cluster: 'c1', partition: 3, kind: 'Service', namespace: 'default', name: 'web' }, subject: 'kube.c1.3.service.default.web' },
    { name: 'a pod whose name has dots becomes one token', a: { cluster: 'c1', partition: 0, kind: 'Pod', namespace: 'ns', name: 'web.v1.abc' }, subject: 'kube.c1.0.pod.ns.web=2Ev1=2Eabc' },
    { name: 'a service export', a: { cluster: 'c1', partition: 1, kind: 'ServiceExport', namespace: 'shop', name: 'web' }, subject: 'kube.c1.1.serviceexport.shop.web' },
    { name: 'endpoints with wildcard characters in the cluster name', a: { cluster: 'a*b>', partition: 12, kind: 'Endpoints', namespace: 'x', name: 'y' }, subject: 'kube.a=2Ab=3E.12.endpoints.x.y' },
  ]);
  for (const tc of objects) {
    it(`${tc.name}: builds and parses back`, () => {
      expect(kubeObjectSubject(tc.a)).toBe(tc.subject);
      expect(parseKubeSubject(tc.subject)).toEqual({ type: 'object', ...tc.a });
    });
  }

  it('a node subject has no partition and parses back', () => {
    const s = kubeNodeSubject({ cluster: 'c1', name: 'node-1.example.com' });
    expect(s).toBe('kube.c1.node.node-1=2Eexample=2Ecom');
    expect(parseKubeSubject(s)).toEqual({ type: 'node', cluster: 'c1', name: 'node-1.example.com' });
  });

  it('the prefix is prepended and required when parsing', () => {
    const opts = { prefix: 't1a2b.' };
    const s = kubeObjectSubject({ cluster: 'c', partition: 1, kind: 'Pod', namespace: 'n', name: 'p' }, opts);
    expect(s).toBe('t1a2b.kube.c.1.pod.n.p');
    expect(parseKubeSubject(s, opts)).toMatchObject({ type: 'object', name: 'p' });
    expect(() => parseKubeSubject(s)).toThrow(TokenDecodeError);
    expect(kubeNodeSubject({ cluster: 'c', name: 'n' }, opts)).toBe('t1a2b.kube.c.node.n');
  });

  const badPrefixes = ['t1', '.t1.', 't 1.', 't*.', 't1..'];
  for (const prefix of badPrefixes) {
    it(`rejects the prefix ${JSON.stringify(prefix)}`, () => {
      expect(() => kubeNodeSubject({ cluster: 'c', name: 'n' }, { prefix })).toThrow(InvalidArgumentError);
    });
  }

  const badSubjects = [
    { name: 'another stream', subject: 'slices.c.n.s' },
    { name: 'too few tokens', subject: 'kube.c.1.pod.n' },
    { name: 'too many tokens', subject: 'kube.c.1.pod.n.p.x' },
    { name: 'non-canonical partition', subject: 'kube.c.01.pod.n.p' },
    { name: 'partition out of range', subject: 'kube.c.10000.pod.n.p' },
    { name: 'unknown kind', subject: 'kube.c.1.secret.n.p' },
    { name: 'a non-canonical name token', subject: 'kube.c.1.pod.n.=41' },
  ];
  for (const tc of badSubjects) {
    it(`parse rejects ${tc.name}`, () => expect(() => parseKubeSubject(tc.subject)).toThrow(TokenDecodeError));
  }

  it('rejects names that cannot be encoded, never publishing a broken subject', () => {
    expect(() => kubeObjectSubject({ cluster: 'c', partition: 0, kind: 'Pod', namespace: 'n', name: 'x'.repeat(254) })).toThrow(TokenEncodeError);
  });

  const badPartitions = [-1, 1.5, 10_000];
  for (const partition of badPartitions) {
    it(`rejects partition ${partition}`, () => {
      expect(() => kubeObjectSubject({ cluster: 'c', partition, kind: 'Pod', namespace: 'n', name: 'p' })).toThrow(InvalidArgumentError);
    });
  }
});

describe('filters select exactly what they promise', () => {
  const svc = kubeObjectSubject({ cluster: 'c.1', partition: 2, kind: 'Service', namespace: 'default', name: 'web' });
  const pod = kubeObjectSubject({ cluster: 'c.1', partition: 2, kind: 'Pod', namespace: 'default', name: 'web-1' });
  const otherPart = kubeObjectSubject({ cluster: 'c.1', partition: 3, kind: 'Service', namespace: 'other', name: 'db' });
  const otherCluster = kubeObjectSubject({ cluster: 'c', partition: 2, kind: 'Service', namespace: 'default', name: 'web' });
  const node = kubeNodeSubject({ cluster: 'c.1', name: 'n1' });
  const exp = kubeObjectSubject({ cluster: 'c.1', partition: 2, kind: 'ServiceExport', namespace: 'default', name: 'web' });
  const cases = [
    { name: 'partition filter: its partition only, no nodes', filter: kubePartitionFilter('c.1', 2), want: [svc, pod, exp] },
    { name: 'nodes filter: nodes only', filter: kubeNodesFilter('c.1'), want: [node] },
    { name: 'service filter: services of every partition', filter: kubeKindFilter('c.1', 'Service'), want: [svc, otherPart] },
    { name: 'service export filter: service exports only', filter: kubeKindFilter('c.1', 'ServiceExport'), want: [exp] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect([svc, pod, exp, otherPart, otherCluster, node].filter((s) => matches(tc.filter, s))).toEqual(tc.want);
    });
  }
  it('stream subjects capture every subject built with the same prefix', () => {
    const opts = { prefix: 'x.y.' };
    const subjects = streamSubjects(opts);
    expect(subjects).toEqual({ kube: 'x.y.kube.>', slices: 'x.y.slices.>', dlq: 'x.y.dlq.>' });
    expect(matches(subjects.kube, kubeNodeSubject({ cluster: 'c', name: 'n' }, opts))).toBe(true);
    expect(matches(subjects.slices, slicesSubject({ cluster: 'c', partition: 3, namespace: 'n', service: 's' }, opts))).toBe(true);
    expect(matches(subjects.dlq, dlqSubject('c', 'watcher', opts))).toBe(true);
    expect(matches(slicesFilter('c', opts), slicesSubject({ cluster: 'c', partition: 3, namespace: 'n', service: 's' }, opts))).toBe(true);
  });
  // Which SLICES filter takes which subject: a partition's filter only its own current-form
  // subjects, the older-form filter only subjects without the token, the cluster filter both.
  const current = (partition: number, namespace: string) => slicesSubject({ cluster: 'c', partition, namespace, service: 's' });
  const older = slicesSubject({ cluster: 'c', partition: null, namespace: 'n', service: 's' });
  const elsewhere = slicesSubject({ cluster: 'd', partition: 1, namespace: 'n', service: 's' });
  const slicesCases: { name: string; filter: string; want: string[] }[] = [
    { name: "a partition's filter takes its own subjects only", filter: slicesPartitionFilter('c', 1), want: [current(1, 'n')] },
    { name: 'the older-form filter takes token-less subjects only', filter: legacySlicesFilter('c'), want: [older] },
    { name: "the cluster's filter takes both forms of its own cluster", filter: slicesFilter('c'), want: [current(1, 'n'), current(2, 'n'), older] },
  ];
  for (const tc of slicesCases) {
    it(tc.name, () => {
      expect([current(1, 'n'), current(2, 'n'), older, elsewhere].filter((s) => matches(tc.filter, s))).toEqual(tc.want);
    });
  }
});

describe('slices and dlq subjects', () => {
  const slicesForms: { name: string; address: SliceSubjectAddress; subject: string }[] = [
    { name: 'the current form carries the partition token', address: { cluster: 'c', partition: 7, namespace: 'a.b', service: '' }, subject: 'slices.c.7.a=2Eb.=' },
    { name: 'the older form has none and parses with partition null', address: { cluster: 'c', partition: null, namespace: 'a.b', service: '' }, subject: 'slices.c.a=2Eb.=' },
  ];
  for (const tc of slicesForms) {
    it(`slices subject: ${tc.name}, and parses back`, () => {
      const a = deepFreeze(tc.address);
      expect(slicesSubject(a)).toBe(tc.subject);
      expect(parseSlicesSubject(tc.subject)).toEqual(a);
    });
  }
  it.each(['slices.c.n', 'slices.c.01.n.s', 'slices.c.x.n.s', 'slices.c.1.n.s.extra', 'kube.c.n.s'])('%s is not a slices subject', (subject) => {
    expect(() => parseSlicesSubject(subject)).toThrow(TokenDecodeError);
  });
  const misfiled: { name: string; partition: number | null; partitions: number | undefined; want: number | undefined }[] = [
    { name: "a token that is the namespace's", partition: partitionOf('shop', 8), partitions: 8, want: undefined },
    { name: 'a token of another partition names the right one', partition: (partitionOf('shop', 8) + 1) % 8, partitions: 8, want: partitionOf('shop', 8) },
    { name: 'the older form has no token to be wrong', partition: null, partitions: 8, want: undefined },
    { name: 'PARTITIONS unknown: nothing to check against', partition: 7, partitions: undefined, want: undefined },
  ];
  for (const tc of misfiled) {
    it(`misfiledPartition: ${tc.name}`, () => {
      expect(misfiledPartition({ cluster: 'c', partition: tc.partition, namespace: 'shop', service: 'web' }, tc.partitions)).toBe(tc.want);
    });
  }
  it('an older-form subject is rewritten with its namespace partition; a current one is kept', () => {
    const older = slicesSubject({ cluster: 'c', partition: null, namespace: 'shop', service: 'web' }, { prefix: 'p.' });
    const want = slicesSubject({ cluster: 'c', partition: partitionOf('shop', 8), namespace: 'shop', service: 'web' }, { prefix: 'p.' });
    expect(currentSlicesSubject(older, 8, { prefix: 'p.' })).toBe(want);
    expect(currentSlicesSubject(want, 8, { prefix: 'p.' })).toBe(want);
    expect(() => currentSlicesSubject('p.dlq.c.slicer', 8, { prefix: 'p.' })).toThrow(TokenDecodeError);
  });
  it('dlq subject is dlq.<cluster>.<source>', () => {
    expect(dlqSubject('c 1', 'watcher')).toBe('dlq.c=201.watcher');
  });
});

describe('KV keys', () => {
  it('svc key round-trips and the cluster filter matches it', () => {
    const a = deepFreeze({ cluster: 'c', namespace: 'kube-system', name: 'kube-dns' });
    const k = svcKey(a);
    expect(k).toBe('c.kube-system.kube-dns');
    expect(parseSvcKey(k)).toEqual(a);
    expect(matches(svcClusterFilter('c'), k)).toBe(true);
    expect(() => parseSvcKey('c.n')).toThrow(TokenDecodeError);
  });

  const views: readonly { name: string; a: ViewKeyAddress; key: string }[] = deepFreeze([
    { name: 'a zoned view', a: { cluster: 'c', zone: 'us-east-1a', namespace: 'default', service: 'web', slice: 'web-abc12' }, key: 'c.us-east-1a.default.web.web-abc12' },
    { name: 'the unzoned view token "_" stays literal', a: { cluster: 'c', zone: '_', namespace: 'default', service: 'web', slice: 'web-x' }, key: 'c._.default.web.web-x' },
    { name: 'a zone with dots and slashes stays one token', a: { cluster: 'c', zone: 'eu/west.1', namespace: 'n', service: 's', slice: 'x' }, key: 'c.eu=2Fwest=2E1.n.s.x' },
  ]);
  for (const tc of views) {
    it(`${tc.name}: view key round-trips and only its zone filter matches`, () => {
      const k = viewKey(tc.a);
      expect(k).toBe(tc.key);
      expect(k).toMatch(/^[-/=.\w]+$/); // @nats-io/kv key rule
      expect(parseViewKey(k)).toEqual(tc.a);
      expect(matches(zoneViewsFilter(tc.a.cluster, tc.a.zone), k)).toBe(true);
      expect(matches(zoneViewsFilter(tc.a.cluster, `${tc.a.zone}x`), k)).toBe(false);
    });
  }
  it('parseViewKey rejects a key with the wrong number of tokens', () => {
    expect(() => parseViewKey('c.z.n.s')).toThrow(TokenDecodeError);
  });

  const hinted: readonly { name: string; a: HintedKeyAddress; key: string }[] = deepFreeze([
    { name: 'a plain slice', a: { cluster: 'c', namespace: 'default', service: 'web', slice: 'web-abc12' }, key: 'c.default.web.web-abc12' },
    { name: 'a cluster name with a dot stays one token', a: { cluster: 'eu.west', namespace: 'n', service: 's', slice: 'x' }, key: 'eu=2Ewest.n.s.x' },
  ]);
  for (const tc of hinted) {
    it(`${tc.name}: hinted key round-trips and its cluster filter matches`, () => {
      const k = hintedKey(tc.a);
      expect(k).toBe(tc.key);
      expect(parseHintedKey(k)).toEqual(tc.a);
      expect(matches(svcClusterFilter(tc.a.cluster), k)).toBe(true);
      expect(matches(svcClusterFilter(`${tc.a.cluster}x`), k)).toBe(false);
    });
  }
  it('parseHintedKey rejects a view key (five tokens) and a spec key (three)', () => {
    expect(() => parseHintedKey('c.z.n.s.x')).toThrow(TokenDecodeError);
    expect(() => parseHintedKey('c.n.s')).toThrow(TokenDecodeError);
  });
});
