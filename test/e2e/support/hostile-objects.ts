// A seeded, deterministic campaign of hostile input for the live pipeline: objects a broken or
// malicious API server could serve (each in place of a valid placeholder `hx-<n>` the simulator
// holds) and rogue KUBE messages a misbehaving publisher could write. Every case carries what
// must happen to it: the field and reason of its rejection, or `accepted` for input that looks
// hostile but that the Kubernetes API accepts. Expectations are built by construction (a
// character no rule allows is injected, a limit is passed by one), never by asking the
// validators under test.

import { kubeNodeSubject, kubeObjectSubject, partitionOf } from '@slicemesh/nats';

export type ServedKind = 'Service' | 'Pod' | 'Node' | 'Endpoints';

export const CATEGORIES = [
  'nats-tokens', 'jetstream-api', 'unicode', 'over-long', 'invalid-ip', 'oversized', 'prototype-keys',
  'wrong-types', 'missing-fields', 'duplicate-ports', 'malformed-json', 'rogue-subject', 'rogue-envelope', 'valid-looking',
] as const;
export type Category = (typeof CATEGORIES)[number];

export interface Rejection {
  /** The dead letter's `field`: exact, or a pattern for map keys and list positions. */
  readonly field: string | RegExp;
  readonly reason: RegExp;
}

/** Served by the API through the rewriting proxy; the watcher must dead-letter or publish it. */
export interface ServedCase {
  /** Name of the simulator's placeholder this object replaces. */
  readonly id: string;
  readonly category: Category;
  readonly kind: ServedKind;
  /** Text of the served JSON within its first 64 KiB (the part a dead letter keeps). */
  readonly marker: string;
  /** The served body, given the placeholder's first resourceVersion (kept so a watch can resume). */
  readonly body: (resourceVersion: string) => unknown;
  readonly expect: Rejection | 'accepted';
}

/** Published straight to KUBE; the slicer must dead-letter it. */
export interface RogueCase {
  readonly id: string;
  readonly category: Category;
  /** Without the run's subject prefix (prepend it to publish). */
  readonly subject: string;
  /** The raw message body (not always JSON, not always UTF-8). */
  readonly data: string | Uint8Array;
  readonly expect: Rejection;
}

export interface Campaign {
  readonly served: readonly ServedCase[];
  readonly rogue: readonly RogueCase[];
}

export interface CampaignOptions {
  readonly seed: string;
  /** Served plus rogue cases. */
  readonly count: number;
  readonly cluster: string;
  readonly partitions: number;
}

/** The namespace of every placeholder and hostile object (no Service there selects anything). */
export const HOSTILE_NS = 'hostile';
export const PLACEHOLDER_PREFIX = 'hx-';
/** Node name hostile Pods are bound to: not a node, so the simulator never schedules or starts them. */
export const NOWHERE_NODE = 'hx-nowhere';

/** mulberry32 seeded from the FNV-1a hash of the seed text. */
function rngOf(seed: string): () => number {
  let h = 0x811c9dc5;
  for (const c of seed) h = Math.imul(h ^ (c.codePointAt(0) ?? 0), 0x01000193) >>> 0;
  let a = h;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

type Rng = () => number;
const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)] as T;
const int = (rng: Rng, lo: number, hi: number): number => lo + Math.floor(rng() * (hi - lo + 1));

/** A legal lowercase stem: valid as any kind of name, label key or label value. */
function stem(rng: Rng, len = int(rng, 3, 10)): string {
  const a = 'abcdefghijklmnopqrstuvwxyz';
  const an = `${a}0123456789`;
  let s = pick(rng, [...a]);
  for (let i = 1; i < len - 1; i++) s += pick(rng, [...`${an}-`]);
  return len > 1 ? s + pick(rng, [...an]) : s;
}

/** Inserts `bad` inside a legal stem, or makes it the whole string. */
function inject(rng: Rng, bad: string): string {
  const s = stem(rng);
  if (rng() < 0.2) return bad;
  const at = int(rng, 0, s.length);
  return s.slice(0, at) + bad + s.slice(at);
}

// Text no name, label key or label value may hold anywhere (NATS tokens and wildcards among them).
// ('..' is not among them: label keys and values may hold it; see the nats-tokens extras.)
const NATS_BAD = ['*', '>', ' ', '\t', '\n', '\r', '.*', '.>', '>.', '*.', '$', '\u0000', '\u007f', '"', '\\', '/*', '=2E'];
const JS_API = [
  '$JS.API.STREAM.DELETE.KUBE', '$JS.API.STREAM.PURGE.SLICES', '$JS.API.CONSUMER.DELETE.KUBE.slicer', '$JS.API.STREAM.UPDATE.DLQ',
  '$KV.views.>', '$KV.svc.*', '$SYS.REQ.SERVER.PING', '_INBOX.>', '$JS.ACK.KUBE.slicer.1.1.1.1.0', '$JS.EVENT.ADVISORY.>',
];
// Lookalikes and invisible characters: each has no place in a DNS name or a label. U+2028 and
// U+2029 go out raw in the served JSON (a Go API server would escape them): the watcher's own
// stream reader (libs/kube watch-stream.ts) must not split an event at them.
const UNICODE_BAD = [
  'ѕ', 'е', 'о', 'ｗ', '\u200b', '\u200d', '\ufeff', '\u202e', '\u0301', 'é', 'ß', 'İ', '🙂', '\u2024', '\uff0e', '\u3002', '\u00a0', '\u0085', '\u2028', '\u2029',
];

/** A string no name, namespace, label key or label value may be: it holds one of `bad`. */
const invalidName = (rng: Rng, bad: readonly string[]): string => inject(rng, pick(rng, bad));

const IPV4_BAD = ['10.0.0.256', '1.2.3', '1.2.3.4.5', '1..2.3', '0x7f.0.0.1', '10.0.0.1/24', ' 10.0.0.1', '10.0.0.1 ', '1.2.3.-4', '١٠.0.0.1', '10.0.0.1.', '+1.2.3.4', '1.2.3.4\n'];
const IPV6_BAD = ['::g', '1::2::3', '1:2:3:4:5:6:7:8:9', 'fe80::1%eth0', '[::1]', '::ffff:1.2.3.256', '2001:db8::/64', '2001:db8:::1', ':::', '12345::1', '::1.2.3', '2001:db8::1 '];
const MIXED_BAD = ['10.0.0.1,10.0.0.2', 'localhost', 'not-an-ip', '0', '*', '$JS.API.STREAM.DELETE.KUBE', '10.0.0.0/8', '::/0'];
const invalidIP = (rng: Rng): string => pick(rng, pick(rng, [IPV4_BAD, IPV6_BAD, MIXED_BAD]));

interface Ident {
  readonly kind: ServedKind;
  readonly name: string;
  readonly marker: string;
}

/** A valid object of `kind`, identified by `marker` (its uid, early in the text). */
function baseObject(id: Ident, rv: string): Record<string, unknown> {
  const metadata: Record<string, unknown> = { uid: id.marker, name: id.name, resourceVersion: rv };
  if (id.kind !== 'Node') metadata['namespace'] = HOSTILE_NS;
  const head = { apiVersion: 'v1', kind: id.kind, metadata };
  switch (id.kind) {
    case 'Service':
      return { ...head, spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }] } };
    case 'Pod':
      return { ...head, spec: { nodeName: NOWHERE_NODE, containers: [{ name: 'c', ports: [{ name: 'http', containerPort: 8080 }] }] }, status: { phase: 'Pending' } };
    case 'Node':
      return { ...head, spec: { unschedulable: true } };
    case 'Endpoints':
      return { ...head, subsets: [{ addresses: [{ ip: '10.99.0.1' }], ports: [{ name: 'http', port: 80 }] }] };
  }
}

type Edit = (o: Record<string, unknown>) => unknown;
const meta = (o: Record<string, unknown>): Record<string, unknown> => o['metadata'] as Record<string, unknown>;
const spec = (o: Record<string, unknown>): Record<string, unknown> => o['spec'] as Record<string, unknown>;
/** Parses JSON text, so `__proto__` becomes an own key as it does for any JSON reader. */
const ownKeys = (text: string): Record<string, unknown> => JSON.parse(text) as Record<string, unknown>;

interface Variant {
  readonly kind: ServedKind;
  readonly edit: Edit;
  readonly expect: Rejection | 'accepted';
  /** When the object cannot carry the marker as its uid (it has no metadata), where it goes instead. */
  readonly markerIn?: 'body';
}

const nameRule = (kind: ServedKind): RegExp => (kind === 'Service' ? /DNS-1035/ : /DNS-1123 subdomain/);
const KINDS: readonly ServedKind[] = ['Service', 'Pod', 'Node', 'Endpoints'];
const NAMESPACED: readonly ServedKind[] = ['Service', 'Pod', 'Endpoints'];

/** Hostile text placed where each kind reads names, labels and annotations. */
function stringPlacements(rng: Rng, bad: string): Variant[] {
  const kind = pick(rng, KINDS);
  const ns = pick(rng, NAMESPACED);
  return [
    { kind, edit: (o) => ((meta(o)['name'] = bad), o), expect: { field: 'metadata.name', reason: nameRule(kind) } },
    { kind: ns, edit: (o) => ((meta(o)['namespace'] = bad), o), expect: { field: 'metadata.namespace', reason: /DNS-1123 label/ } },
    { kind, edit: (o) => ((meta(o)['labels'] = { app: 'x', [bad]: 'v' }), o), expect: { field: /^metadata\.labels\[/, reason: /qualified name|prefix/ } },
    { kind, edit: (o) => ((meta(o)['labels'] = { app: bad }), o), expect: { field: /^metadata\.labels\["app"\]$/, reason: /label value/ } },
    { kind, edit: (o) => ((meta(o)['annotations'] = { [bad]: 'v' }), o), expect: { field: /^metadata\.annotations\[/, reason: /qualified name|prefix/ } },
    { kind: 'Service', edit: (o) => (((spec(o)['ports'] as Record<string, unknown>[])[0]!['name'] = bad), o), expect: { field: 'spec.ports[0].name', reason: /DNS-1123 label/ } },
    { kind: 'Pod', edit: (o) => ((spec(o)['nodeName'] = bad), o), expect: { field: 'spec.nodeName', reason: /DNS-1123 subdomain/ } },
  ];
}

/** Each category's variants; `rng` draws the hostile values. */
const GENERATORS: Partial<Record<Category, (rng: Rng) => Variant[]>> = {
  'nats-tokens': (rng) => stringPlacements(rng, invalidName(rng, NATS_BAD)).concat([
    // '.' is legal in subdomain names but never in a Service name or a namespace.
    { kind: 'Service', edit: (o) => ((meta(o)['name'] = `${stem(rng)}.${stem(rng)}`), o), expect: { field: 'metadata.name', reason: /DNS-1035/ } },
    { kind: pick(rng, NAMESPACED), edit: (o) => ((meta(o)['namespace'] = `${stem(rng)}.${stem(rng)}`), o), expect: { field: 'metadata.namespace', reason: /DNS-1123 label/ } },
    // An empty dot-separated part: no subdomain has one (a label key or value may, see valid-looking).
    { kind: pick(rng, ['Pod', 'Node', 'Endpoints'] as const), edit: (o) => ((meta(o)['name'] = `${stem(rng)}..${stem(rng)}`), o), expect: { field: 'metadata.name', reason: /DNS-1123 subdomain/ } },
  ]),
  'jetstream-api': (rng) => stringPlacements(rng, pick(rng, JS_API)),
  unicode: (rng) => stringPlacements(rng, invalidName(rng, UNICODE_BAD)).concat([
    // Free text Postgres cannot hold: legal for the API in an annotation (NUL) or impossible from
    // it (a lone surrogate, which Go decodes to U+FFFD), dead-lettered rather than stalling writes.
    { kind: pick(rng, KINDS), edit: (o) => ((meta(o)['annotations'] = { note: inject(rng, '\u0000') }), o), expect: { field: 'metadata.annotations["note"]', reason: /U\+0000/ } },
    { kind: pick(rng, KINDS), edit: (o) => ((meta(o)['annotations'] = { note: inject(rng, pick(rng, ['\ud800', '\udfff', '\ud83d'])) }), o), expect: { field: 'metadata.annotations["note"]', reason: /surrogate/ } },
  ]),
  'over-long': (rng) => {
    const label64 = 'l'.repeat(64);
    const sub254 = `${'s'.repeat(63)}.${'s'.repeat(63)}.${'s'.repeat(63)}.${'s'.repeat(62)}`;
    return [
      { kind: 'Service', edit: (o) => ((meta(o)['name'] = `s${'e'.repeat(63)}`), o), expect: { field: 'metadata.name', reason: /at most 63/ } },
      { kind: pick(rng, ['Pod', 'Node', 'Endpoints'] as const), edit: (o) => ((meta(o)['name'] = sub254), o), expect: { field: 'metadata.name', reason: /at most 253/ } },
      { kind: pick(rng, KINDS), edit: (o) => ((meta(o)['name'] = 'n'.repeat(int(rng, 1025, 5000))), o), expect: { field: 'metadata.name', reason: /at most/ } },
      { kind: pick(rng, NAMESPACED), edit: (o) => ((meta(o)['namespace'] = label64), o), expect: { field: 'metadata.namespace', reason: /at most 63/ } },
      { kind: pick(rng, KINDS), edit: (o) => ((meta(o)['labels'] = { [label64]: 'v' }), o), expect: { field: /^metadata\.labels\[/, reason: /at most 63/ } },
      { kind: pick(rng, KINDS), edit: (o) => ((meta(o)['labels'] = { [`${sub254}/app`]: 'v' }), o), expect: { field: /^metadata\.labels\[/, reason: /prefix must be at most 253/ } },
      { kind: pick(rng, KINDS), edit: (o) => ((meta(o)['labels'] = { app: label64 }), o), expect: { field: /^metadata\.labels\[/, reason: /at most 63/ } },
      { kind: pick(rng, KINDS), edit: (o) => ((meta(o)['annotations'] = { note: 'x'.repeat(256 * 1024 - 3) }), o), expect: { field: 'metadata.annotations', reason: /total size/ } },
      { kind: pick(rng, KINDS), edit: (o) => ((meta(o)['uid'] = `${String(meta(o)['uid'])}${'u'.repeat(129)}`), o), expect: { field: 'metadata.uid', reason: /at most 128/ } },
      { kind: 'Pod', edit: (o) => (((spec(o)['containers'] as Record<string, unknown>[])[0]!['ports'] = [{ name: 'abcdefghijklmnop', containerPort: 80 }]), o), expect: { field: 'spec.containers[0].ports[0].name', reason: /at most 15/ } },
    ];
  },
  'invalid-ip': (rng) => {
    const ip = invalidIP(rng);
    return [
      { kind: 'Pod', edit: (o) => ((o['status'] = { podIP: ip, podIPs: [{ ip }] }), o), expect: { field: 'status.podIP', reason: /valid IP/ } },
      { kind: 'Pod', edit: (o) => ((o['status'] = { podIPs: [{ ip }] }), o), expect: { field: 'status.podIPs[0].ip', reason: /valid IP/ } },
      { kind: 'Pod', edit: (o) => ((o['status'] = { podIP: '10.1.0.1', podIPs: [{ ip: '10.1.0.1' }, { ip: '10.1.0.2' }] }), o), expect: { field: 'status.podIPs', reason: /one address per IP family/ } },
      { kind: 'Pod', edit: (o) => ((o['status'] = { podIP: '10.1.0.1', podIPs: [{ ip: '10.1.0.2' }] }), o), expect: { field: 'status.podIPs[0].ip', reason: /must equal status\.podIP/ } },
      { kind: 'Service', edit: (o) => ((spec(o)['clusterIP'] = ip), o), expect: { field: 'spec.clusterIP', reason: /valid IP/ } },
      { kind: 'Service', edit: (o) => ((spec(o)['externalIPs'] = ['192.0.2.1', ip]), o), expect: { field: 'spec.externalIPs[1]', reason: /valid IP/ } },
      { kind: 'Service', edit: (o) => ((spec(o)['clusterIPs'] = ['10.96.0.1', '10.96.0.2']), o), expect: { field: 'spec.clusterIPs', reason: /one address per IP family/ } },
      { kind: 'Service', edit: (o) => ((spec(o)['loadBalancerSourceRanges'] = [pick(rng, ['10.0.0.0/33', '10.0.0.0', '10.0.0.0/8/8', '::/129', '10.0.0.0/-1', 'any'])]), o), expect: { field: 'spec.loadBalancerSourceRanges[0]', reason: /CIDR/ } },
      { kind: 'Service', edit: (o) => ((o['status'] = { loadBalancer: { ingress: [{ ip }] } }), o), expect: { field: 'status.loadBalancer.ingress[0].ip', reason: /valid IP/ } },
    ];
  },
  oversized: (rng) => [
    // Valid piece by piece, 0.6-1.1 MB in all: over the watcher's 512 KiB object limit.
    { kind: 'Service', edit: (o) => ((spec(o)['ports'] = Array.from({ length: int(rng, 10_000, 15_000) }, (_, i) => ({ name: `p-${i}`, port: i + 1, protocol: 'TCP', targetPort: i + 1 }))), o), expect: { field: '<object>', reason: /byte limit/ } },
    { kind: 'Endpoints', edit: (o) => ((o['subsets'] = [{ addresses: Array.from({ length: int(rng, 15_000, 19_000) }, (_, i) => ({ ip: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, nodeName: `node-${i % 50}` })), ports: [{ port: 80 }] }]), o), expect: { field: '<object>', reason: /byte limit/ } },
    { kind: 'Pod', edit: (o) => ((spec(o)['containers'] = Array.from({ length: 1000 }, (_, i) => ({ name: `c${i}-${'x'.repeat(50)}`, ports: Array.from({ length: 16 }, (_, j) => ({ name: `p${j}`, containerPort: 1000 + j })) }))), o), expect: { field: '<object>', reason: /byte limit/ } },
  ],
  'prototype-keys': (rng) => {
    const key = pick(rng, ['__proto__', '__defineGetter__', '__lookupSetter__']);
    return [
      { kind: pick(rng, KINDS), edit: (o) => ((meta(o)['labels'] = ownKeys(`{"app":"x","${key}":{"polluted":"yes"}}`)), o), expect: { field: /^metadata\.labels\["__/, reason: /qualified name/ } },
      { kind: pick(rng, KINDS), edit: (o) => ((meta(o)['labels'] = ownKeys(`{"${key}":"v"}`)), o), expect: { field: /^metadata\.labels\["__/, reason: /qualified name/ } },
      { kind: pick(rng, KINDS), edit: (o) => ((meta(o)['annotations'] = ownKeys(`{"${key}":"v"}`)), o), expect: { field: /^metadata\.annotations\["__/, reason: /qualified name/ } },
      { kind: pick(rng, KINDS), edit: (o) => ((meta(o)['labels'] = { app: key }), o), expect: { field: 'metadata.labels["app"]', reason: /label value/ } },
      { kind: pick(rng, KINDS), edit: (o) => ((meta(o)['name'] = key), o), expect: { field: 'metadata.name', reason: /DNS-1/ } },
      { kind: pick(rng, NAMESPACED), edit: (o) => ((meta(o)['namespace'] = key), o), expect: { field: 'metadata.namespace', reason: /DNS-1123 label/ } },
      { kind: 'Service', edit: (o) => ((spec(o)['selector'] = ownKeys(`{"${key}":"x"}`)), o), expect: { field: /^spec\.selector\["__/, reason: /qualified name/ } },
      // Name and namespace only under an own "__proto__": nothing to key the object by.
      { kind: pick(rng, KINDS), edit: (o) => ({ ...o, metadata: ownKeys(`{"uid":${JSON.stringify(meta(o)['uid'])},"__proto__":{"name":"evil","namespace":"kube-system"}}`) }), expect: { field: 'metadata', reason: /metadata\.name/ } },
      { kind: 'Service', edit: (o) => ((o['spec'] = ownKeys('{"__proto__":{"ports":[{"port":80}]}, "ports": "x"}')), o), expect: { field: 'spec.ports', reason: /must be an array/ } },
    ];
  },
  'wrong-types': (rng) => {
    const kind = pick(rng, KINDS);
    const junk = pick(rng, [42, true, 'text', ['a'], { a: 1 }, 1.5, -1]);
    const notString = typeof junk === 'string' ? 7 : junk;
    const notObject = typeof junk === 'object' && !Array.isArray(junk) ? 'text' : junk;
    const notArray = Array.isArray(junk) ? 'text' : junk;
    return [
      { kind: 'Service', edit: (o) => ((o['spec'] = notObject), o), expect: { field: 'spec', reason: /must be an object/ } },
      { kind: 'Pod', edit: (o) => ((o['spec'] = notObject), o), expect: { field: 'spec', reason: /must be an object/ } },
      { kind, edit: (o) => ((meta(o)['labels'] = notObject), o), expect: { field: 'metadata.labels', reason: /must be an object/ } },
      { kind, edit: (o) => ((meta(o)['labels'] = { app: notString }), o), expect: { field: 'metadata.labels["app"]', reason: /must be a string/ } },
      { kind: 'Service', edit: (o) => ((spec(o)['ports'] = notArray), o), expect: { field: 'spec.ports', reason: /must be an array/ } },
      { kind: 'Service', edit: (o) => (((spec(o)['ports'] as Record<string, unknown>[])[0]!['port'] = pick(rng, ['80', 80.5, 0, 65536, -80, true])), o), expect: { field: 'spec.ports[0].port', reason: /integer|between 1 and 65535/ } },
      { kind: 'Pod', edit: (o) => ((spec(o)['containers'] = notArray), o), expect: { field: 'spec.containers', reason: /must be an array/ } },
      { kind: 'Pod', edit: (o) => ((o['status'] = { podIP: pick(rng, [167772161, ['10.0.0.1'], { ip: '10.0.0.1' }]) }), o), expect: { field: 'status.podIP', reason: /must be a string/ } },
      { kind, edit: (o) => ((o['kind'] = kind === 'Pod' ? 'Service' : 'Pod'), o), expect: { field: 'kind', reason: /must be/ } },
      { kind, edit: (o) => ((o['apiVersion'] = pick(rng, ['v2', 'discovery.k8s.io/v1', 'apps/v1'])), o), expect: { field: 'apiVersion', reason: /must be v1/ } },
      { kind, edit: (o) => ((meta(o)['creationTimestamp'] = pick(rng, ['yesterday', '2026-13-01T00:00:00Z', '1700000000'])), o), expect: { field: 'metadata.creationTimestamp', reason: /RFC 3339/ } },
      { kind, edit: (o) => ((meta(o)['resourceVersion'] = 12345), o), expect: { field: 'metadata.resourceVersion', reason: /must be a string/ } },
      // No string name at all: the watch reports it as malformed.
      { kind, edit: (o) => ((meta(o)['name'] = pick(rng, [12345, null, ['a'], { first: 'a' }])), o), expect: { field: 'metadata', reason: /metadata\.name/ } },
      { kind, edit: (o) => ({ ...o, metadata: `${String(meta(o)['uid'])}` }), expect: { field: 'metadata', reason: /metadata\.name/ } },
      { kind, edit: (o) => [String(meta(o)['uid'])], expect: { field: 'metadata', reason: /metadata\.name/ } },
      { kind, edit: (o) => `${String(meta(o)['uid'])} is not an object`, expect: { field: 'metadata', reason: /metadata\.name/ } },
    ];
  },
  'missing-fields': (rng) => {
    const kind = pick(rng, KINDS);
    return [
      { kind, edit: (o) => (delete meta(o)['resourceVersion'], o), expect: { field: 'metadata.resourceVersion', reason: /required/ } },
      { kind, edit: (o) => ((meta(o)['name'] = ''), o), expect: { field: 'metadata.name', reason: /must not be empty/ } },
      { kind: 'Service', edit: (o) => (delete o['spec'], o), expect: { field: 'spec', reason: /required/ } },
      { kind: 'Pod', edit: (o) => (delete o['spec'], o), expect: { field: 'spec', reason: /required/ } },
      { kind: 'Pod', edit: (o) => ((spec(o)['containers'] = []), o), expect: { field: 'spec.containers', reason: /at least one container/ } },
      { kind: 'Pod', edit: (o) => ((spec(o)['containers'] = [{ image: 'nginx' }]), o), expect: { field: 'spec.containers[0].name', reason: /required/ } },
      { kind: 'Pod', edit: (o) => ((o['status'] = { conditions: [{ type: 'Ready' }] }), o), expect: { field: 'status.conditions[0].status', reason: /required/ } },
      { kind: 'Service', edit: (o) => ((spec(o)['ports'] = [{ name: 'http', protocol: 'TCP' }]), o), expect: { field: 'spec.ports[0].port', reason: /required/ } },
      { kind: 'Endpoints', edit: (o) => ((o['subsets'] = [{ addresses: [{ hostname: 'a' }], ports: [{ port: 80 }] }]), o), expect: { field: 'subsets[0].addresses[0].ip', reason: /required/ } },
      { kind: 'Endpoints', edit: (o) => ((o['subsets'] = [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ name: 'x' }] }]), o), expect: { field: 'subsets[0].ports[0].port', reason: /required/ } },
      { kind: 'Node', edit: (o) => ((o['status'] = { conditions: [{ status: 'True' }] }), o), expect: { field: 'status.conditions[0].type', reason: /required/ } },
      { kind: pick(rng, NAMESPACED), edit: (o) => ((meta(o)['ownerReferences'] = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs' }]), o), expect: { field: 'metadata.ownerReferences[0].uid', reason: /required/ } },
    ];
  },
  'duplicate-ports': (rng) => {
    const n = int(rng, 2, 40);
    const dup = int(rng, 1, n - 1);
    const ports = (f: (i: number) => Record<string, unknown>): Edit => (o) => ((spec(o)['ports'] = Array.from({ length: n }, (_, i) => f(i))), o);
    return [
      { kind: 'Service', edit: ports((i) => ({ name: i === dup ? 'p-0' : `p-${i}`, port: 100 + i })), expect: { field: `spec.ports[${dup}].name`, reason: /duplicate port name/ } },
      { kind: 'Service', edit: ports((i) => ({ name: `p-${i}`, port: i === dup ? 100 : 100 + i, protocol: 'UDP' })), expect: { field: `spec.ports[${dup}]`, reason: /duplicate port/ } },
      { kind: 'Service', edit: ports((i) => (i === dup ? { port: 100 + i } : { name: `p-${i}`, port: 100 + i })), expect: { field: `spec.ports[${dup}].name`, reason: /more than one port/ } },
      { kind: 'Service', edit: (o) => ((spec(o)['ipFamilies'] = ['IPv6', 'IPv6']), o), expect: { field: 'spec.ipFamilies[1]', reason: /duplicate IP family/ } },
      { kind: 'Service', edit: ports((i) => ({ name: `p-${i}`, port: 100 + i, protocol: i === dup ? 'HTTP' : 'TCP' })), expect: { field: `spec.ports[${dup}].protocol`, reason: /must be/ } },
    ];
  },
  'valid-looking': (rng) => {
    const dotted = `${stem(rng)}.${stem(rng)}--${stem(rng)}.js.api.stream.delete.kube`;
    const sub253 = `${'p'.repeat(63)}.${'p'.repeat(63)}.${'p'.repeat(63)}.${'p'.repeat(61)}`;
    const v6 = pick(rng, ['2001:db8::1', 'fd00::a:b', '2001:DB8:0:0:0:0:0:1', '::ffff:10.1.2.3', '010.001.002.003']);
    const proto = pick(rng, ['constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf']);
    // Annotation values may hold any storable text (see 'unicode' for U+0000).
    const weird = [...JS_API, 'ＷＥＢ \u200b\u202e', '🙂'.repeat(40), 'line\nbreak\ttab\r\u0001\u001f', '{"__proto__":{"x":1}}', '\ufffd', "'; drop table endpoint_slices; --"];
    return [
      { kind: pick(rng, ['Pod', 'Node', 'Endpoints'] as const), edit: (o) => ((meta(o)['name'] = dotted), o), expect: 'accepted' },
      { kind: pick(rng, ['Pod', 'Node', 'Endpoints'] as const), edit: (o) => ((meta(o)['name'] = `${sub253.slice(0, 240)}${stem(rng, 13)}`), o), expect: 'accepted' },
      { kind: 'Service', edit: (o) => ((meta(o)['name'] = `s${stem(rng, 62)}`), o), expect: 'accepted' },
      { kind: 'Pod', edit: (o) => ((o['status'] = { phase: 'Running', podIP: v6, podIPs: [{ ip: v6 }] }), o), expect: 'accepted' },
      { kind: pick(rng, KINDS), edit: (o) => ((meta(o)['labels'] = { [proto]: proto, [`example.com/${proto}`]: '', 'a--b': 'a--b', 'a..b': 'x..y', 'a_.-b': 'A_.-B', [`${'k'.repeat(63)}`]: 'v'.repeat(63) }), o), expect: 'accepted' },
      { kind: pick(rng, KINDS), edit: (o) => ((meta(o)['annotations'] = { ...Object.fromEntries(weird.map((w, i) => [`w${i}`, w])), [proto]: proto, note: 'x'.repeat(200 * 1024) }), o), expect: 'accepted' },
      { kind: 'Service', edit: (o) => ((spec(o)['ports'] = [{ name: 'dns-tcp', port: 53, protocol: 'TCP' }, { name: 'dns-udp', port: 53, protocol: 'UDP' }]), o), expect: 'accepted' },
      { kind: 'Service', edit: (o) => ((meta(o)['name'] = proto.toLowerCase()), o), expect: 'accepted' },
      // Unknown fields are dropped, even one spelled "__proto__".
      { kind: pick(rng, KINDS), edit: (o) => ({ ...ownKeys('{"__proto__":{"metadata":{"namespace":"kube-system"}}}'), ...o }), expect: 'accepted' },
      { kind: 'Endpoints', edit: (o) => ((o['subsets'] = [{ addresses: [{ ip: invalidIP(rng) }], ports: [{ port: 80 }] }]), o), expect: 'accepted' },
    ];
  },
};

/** Envelope problems and subjects of rogue KUBE messages, around otherwise valid pods. */
function rogueVariants(rng: Rng, o: CampaignOptions, id: string): { category: Category; subject: string; data: string | Uint8Array; expect: Rejection }[] {
  const opts = {};
  const part = partitionOf(HOSTILE_NS, o.partitions);
  const subject = kubeObjectSubject({ cluster: o.cluster, partition: part, kind: 'Pod', namespace: HOSTILE_NS, name: id }, opts);
  const pod = baseObject({ kind: 'Pod', name: id, marker: `uid-${id}` }, '1');
  const env = (over: Record<string, unknown> = {}, object: unknown = pod): string =>
    JSON.stringify({ type: 'Upserted.v1', cluster: o.cluster, kind: 'Pod', object, observedAt: '2026-01-01T00:00:00Z', ...over });
  const good = env();
  const deep = (n: number): string => `${'['.repeat(n)}${']'.repeat(n)}`;
  return [
    { category: 'malformed-json', subject, data: good.slice(0, int(rng, 1, good.length - 1)), expect: { field: '', reason: /not JSON/ } },
    { category: 'malformed-json', subject, data: `${good}${pick(rng, ['}', ',', 'x', '{}', ' null'])}`, expect: { field: '', reason: /not JSON/ } },
    { category: 'malformed-json', subject, data: good.replace(/"/g, "'"), expect: { field: '', reason: /not JSON/ } },
    { category: 'malformed-json', subject, data: good.replace('"Upserted.v1"', pick(rng, ['NaN', 'undefined', 'Upserted.v1', '0x1'])), expect: { field: '', reason: /not JSON/ } },
    { category: 'malformed-json', subject, data: pick(rng, ['', '\ufeff{"type":', '\u0000\u0001\u0002', '<html>\u2028502</html>', '{"a":1}{"b":2}', new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])]), expect: { field: '', reason: /not JSON/ } },
    { category: 'malformed-json', subject, data: pick(rng, ['null', '42', '"text"', '[]', deep(int(rng, 10, 5000))]), expect: { field: '', reason: /JSON object/ } },
    { category: 'rogue-subject', subject: `${subject}.${pick(rng, JS_API.filter((t) => !/[*>]/.test(t)))}`, data: good, expect: { field: 'subject', reason: /./ } },
    { category: 'rogue-subject', subject: subject.replace(`.${id}`, `.${id}=${pick(rng, ['ZZ', '2e', '', 'G0'])}`), data: good, expect: { field: 'subject', reason: /./ } },
    { category: 'rogue-subject', subject: kubeObjectSubject({ cluster: o.cluster, partition: (part + 1) % o.partitions, kind: 'Pod', namespace: HOSTILE_NS, name: id }, opts), data: good, expect: { field: 'subject', reason: /partition/ } },
    { category: 'rogue-subject', subject: kubeNodeSubject({ cluster: o.cluster, name: id }, opts), data: good, expect: { field: 'kind', reason: /does not match the subject's kind/ } },
    { category: 'rogue-subject', subject: kubeObjectSubject({ cluster: o.cluster, partition: part, kind: 'Pod', namespace: HOSTILE_NS, name: `${id}-other` }, opts).replace(`${id}-other`, `${id}-x`), data: good, expect: { field: 'object.metadata.name', reason: /does not match the subject's name/ } },
    { category: 'rogue-envelope', subject, data: env({ type: pick(rng, ['Exploded.v1', 'upserted.v1', 'Upserted.v2', null, 7]) }), expect: { field: 'type', reason: /Upserted\.v1 or Deleted\.v1/ } },
    { category: 'rogue-envelope', subject, data: env({ cluster: pick(rng, ['', 'other', '*', '>']) }), expect: { field: 'cluster', reason: /./ } },
    { category: 'rogue-envelope', subject, data: env({ kind: pick(rng, ['Secret', '__proto__', 'constructor', 'pod']) }), expect: { field: 'kind', reason: /must be one of/ } },
    { category: 'rogue-envelope', subject, data: env({}, pick(rng, ['pod', null, [pod], 42])), expect: { field: /^object/, reason: /object|required/ } },
    { category: 'unicode', subject, data: env({}, { ...pod, metadata: { ...(pod['metadata'] as object), annotations: { note: inject(rng, pick(rng, ['\u0000', '\ud800'])) } } }), expect: { field: 'object.metadata.annotations["note"]', reason: /U\+0000|surrogate/ } },
    { category: 'prototype-keys', subject, data: `{"__proto__":{"type":"Upserted.v1","cluster":${JSON.stringify(o.cluster)},"kind":"Pod"},"object":${JSON.stringify(pod)}}`, expect: { field: 'type', reason: /Upserted\.v1 or Deleted\.v1/ } },
    { category: 'prototype-keys', subject, data: env({}, ownKeys(`{"__proto__":${JSON.stringify(pod)},"kind":"Pod"}`)), expect: { field: 'object.metadata', reason: /required/ } },
    { category: 'prototype-keys', subject, data: env({}, { ...pod, metadata: ownKeys(`{"__proto__":{"resourceVersion":"9"},"name":${JSON.stringify(id)},"namespace":"${HOSTILE_NS}","uid":"u"}`) }), expect: { field: 'object.metadata.resourceVersion', reason: /required/ } },
  ];
}

/**
 * The campaign for `opts.seed`: about 70 % served objects (about a tenth of them legal), the rest
 * rogue KUBE messages, `opts.count` in all. The same options always give the same campaign.
 */
export function hostileCampaign(opts: CampaignOptions): Campaign {
  const rng = rngOf(opts.seed);
  const served: ServedCase[] = [];
  const rogue: RogueCase[] = [];
  const rogueShare = Math.round(opts.count * 0.3);
  const servedCategories = Object.keys(GENERATORS) as Category[];
  // A few oversized objects are enough (each is most of a megabyte); legal ones are a tenth.
  const weights: Partial<Record<Category, number>> = { oversized: 0.15, 'valid-looking': 1.5 };
  const total = servedCategories.reduce((s, c) => s + (weights[c] ?? 1), 0);
  // Variants are taken in turn (their values drawn at random), so each one occurs.
  const turns = new Map<Category, number>();
  // Legal objects get names no other legal object of their kind has: the API refuses a second
  // live object of a name (409), and two at once would be a cluster no watcher ever sees.
  const legalNames = new Set<string>();
  while (served.length < opts.count - rogueShare) {
    let r = rng() * total;
    const category = servedCategories.find((c) => (r -= weights[c] ?? 1) < 0) ?? 'nats-tokens';
    const variants = GENERATORS[category]!(rng);
    const turn = (turns.get(category) ?? 0) + 1;
    turns.set(category, turn);
    const v = variants[turn % variants.length]!;
    const n = served.length;
    const id = `${PLACEHOLDER_PREFIX}${n}`;
    const marker = `hostile-${opts.seed}-n${n}z`;
    const kind = v.kind;
    if (v.expect === 'accepted') {
      const legal = v.edit(baseObject({ kind, name: id, marker }, '1')) as { readonly metadata?: { readonly namespace?: unknown; readonly name?: unknown } };
      const name = `${kind}/${String(legal.metadata?.namespace ?? '')}/${String(legal.metadata?.name)}`;
      if (legalNames.has(name)) continue;
      legalNames.add(name);
    }
    served.push({ id, category, kind, marker, expect: v.expect, body: (rv) => v.edit(baseObject({ kind, name: id, marker }, rv)) });
  }
  while (rogue.length < rogueShare) {
    const id = `r-${rogue.length}`;
    const variants = rogueVariants(rng, opts, id);
    const v = variants[rogue.length % variants.length]!;
    rogue.push({ id, ...v });
  }
  return { served, rogue };
}
