// Subject and KV key layout of the event backbone (issue 4 design). Every name is one token
// (tokens.ts); every builder validates, every parser is strict, so a subject we did not build
// is rejected rather than half-understood.
//
//   kube.<cluster>.<part>.<kind>.<ns>.<name>    kind: service | pod | endpoints | endpointslice | serviceexport
//   kube.<cluster>.node.<name>
//   slices.<cluster>.<part>.<ns>.<service>      (before: slices.<cluster>.<ns>.<service>, still read)
//   dlq.<cluster>.<source>                      source: watcher | slicer | hints | ...
//   KV svc:   <cluster>.<ns>.<name>
//   KV views: <cluster>.<zone>.<ns>.<service>.<slice>
//
// Stream subjects may carry a prefix (e.g. 't1a2b.') so tests can share one server; KV keys
// carry none (tests isolate buckets by name instead).

import { InvalidArgumentError } from '@slicemesh/model';
import { TokenDecodeError } from './errors.ts';
import { decodeToken, encodeToken } from './tokens.ts';

/** Options every stream-subject builder and parser takes. Structurally satisfied by StreamNames. */
export interface SubjectOptions {
  /** Prepended to every stream subject: '' (default) or dot-terminated tokens, e.g. 't1a2b.'. */
  readonly prefix?: string;
}

/** Namespaced kinds published under a partition. Nodes have their own subject. */
export type PartitionedKind = 'Service' | 'Pod' | 'Endpoints' | 'EndpointSlice' | 'ServiceExport';
/** The kind token in a subject for each partitioned kind. */
export const KIND_TOKENS: Readonly<Record<PartitionedKind, string>> = Object.freeze({
  Service: 'service',
  Pod: 'pod',
  Endpoints: 'endpoints',
  // Other controllers' slices only (see isOwnSlice); the slicer skips them, hints reads them.
  EndpointSlice: 'endpointslice',
  // MCS ServiceExports (multicluster.x-k8s.io); the mcs service reads them, the slicer skips them.
  ServiceExport: 'serviceexport',
});
const KIND_BY_TOKEN = new Map(Object.entries(KIND_TOKENS).map(([k, t]) => [t, k as PartitionedKind]));
const NODE_TOKEN = 'node';
const PREFIX = /^(?:[A-Za-z0-9_-]+\.)*$/;

function prefixOf(opts: SubjectOptions | undefined): string {
  const prefix = opts?.prefix ?? '';
  if (!PREFIX.test(prefix)) {
    throw new InvalidArgumentError('prefix', `must be empty or dot-terminated tokens of [A-Za-z0-9_-], got ${JSON.stringify(prefix)}`);
  }
  return prefix;
}

/** Offset basis and prime of 32-bit FNV-1a (http://www.isthe.com/chongo/tech/comp/fnv/). */
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const utf8 = new TextEncoder();

/** 32-bit FNV-1a over the UTF-8 bytes of `s`, as an unsigned integer. '' gives 0x811c9dc5. */
export function fnv1a32(s: string): number {
  let h = FNV_OFFSET;
  for (const b of utf8.encode(s)) h = Math.imul(h ^ b, FNV_PRIME) >>> 0;
  return h;
}

/**
 * The partition (0..partitions-1) of every object in `namespace`: fnv1a32(namespace) mod
 * partitions, over the raw (unencoded) name. Stable across processes, versions and machines;
 * changing `partitions` moves namespaces, so it is a deployment-wide constant. The empty
 * namespace hashes like any other name (0x811c9dc5 mod partitions).
 * Throws InvalidArgumentError unless `partitions` is an integer in 1..10000.
 */
export function partitionOf(namespace: string, partitions: number): number {
  if (!Number.isInteger(partitions) || partitions < 1 || partitions > 10_000) {
    throw new InvalidArgumentError('partitions', `must be an integer in 1..10000, got ${partitions}`);
  }
  return fnv1a32(namespace) % partitions;
}

function partitionToken(partition: number): string {
  if (!Number.isInteger(partition) || partition < 0 || partition >= 10_000) {
    throw new InvalidArgumentError('partition', `must be an integer in 0..9999, got ${partition}`);
  }
  return String(partition);
}

/** Splits `subject` after checking and removing the prefix; throws TokenDecodeError on mismatch. */
function tokensOf(subject: string, opts: SubjectOptions | undefined): string[] {
  const prefix = prefixOf(opts);
  if (!subject.startsWith(prefix)) throw new TokenDecodeError(subject, `does not start with prefix ${JSON.stringify(prefix)}`);
  return subject.slice(prefix.length).split('.');
}

export interface KubeObjectAddress {
  readonly cluster: string;
  readonly partition: number;
  readonly kind: PartitionedKind;
  readonly namespace: string;
  readonly name: string;
}
export interface KubeNodeAddress {
  readonly cluster: string;
  readonly name: string;
}
export type ParsedKubeSubject = ({ readonly type: 'object' } & KubeObjectAddress) | ({ readonly type: 'node' } & KubeNodeAddress);

/** `kube.<cluster>.<part>.<kind>.<ns>.<name>`. Use partitionOf(namespace, P) for `partition`. */
export function kubeObjectSubject(a: KubeObjectAddress, opts?: SubjectOptions): string {
  const kind = KIND_TOKENS[a.kind];
  if (kind === undefined) throw new InvalidArgumentError('kind', `must be one of ${Object.keys(KIND_TOKENS).join(', ')}, got ${String(a.kind)}`);
  return `${prefixOf(opts)}kube.${encodeToken(a.cluster)}.${partitionToken(a.partition)}.${kind}.${encodeToken(a.namespace)}.${encodeToken(a.name)}`;
}

/** `kube.<cluster>.node.<name>`. */
export function kubeNodeSubject(a: KubeNodeAddress, opts?: SubjectOptions): string {
  return `${prefixOf(opts)}kube.${encodeToken(a.cluster)}.${NODE_TOKEN}.${encodeToken(a.name)}`;
}

/** Inverse of kubeObjectSubject / kubeNodeSubject. Throws TokenDecodeError for anything else. */
export function parseKubeSubject(subject: string, opts?: SubjectOptions): ParsedKubeSubject {
  const t = tokensOf(subject, opts);
  if (t[0] !== 'kube') throw new TokenDecodeError(subject, 'not a kube subject');
  if (t.length === 4 && t[2] === NODE_TOKEN) {
    return { type: 'node', cluster: decodeToken(t[1]!), name: decodeToken(t[3]!) };
  }
  if (t.length !== 6) throw new TokenDecodeError(subject, `a kube subject has 6 tokens (4 for nodes), got ${t.length}`);
  const part = t[2]!;
  if (!/^(?:0|[1-9][0-9]{0,3})$/.test(part)) throw new TokenDecodeError(subject, `partition ${JSON.stringify(part)} is not a canonical number`);
  const kind = KIND_BY_TOKEN.get(t[3]!);
  if (kind === undefined) throw new TokenDecodeError(subject, `unknown kind token ${JSON.stringify(t[3])}`);
  return { type: 'object', cluster: decodeToken(t[1]!), partition: Number(part), kind, namespace: decodeToken(t[4]!), name: decodeToken(t[5]!) };
}

/** Filter for every object of one partition of one cluster: `kube.<cluster>.<part>.>` (no nodes). */
export function kubePartitionFilter(cluster: string, partition: number, opts?: SubjectOptions): string {
  return `${prefixOf(opts)}kube.${encodeToken(cluster)}.${partitionToken(partition)}.>`;
}

/** Filter for every node of one cluster: `kube.<cluster>.node.>`. */
export function kubeNodesFilter(cluster: string, opts?: SubjectOptions): string {
  return `${prefixOf(opts)}kube.${encodeToken(cluster)}.${NODE_TOKEN}.>`;
}

/** Filter for one kind across all partitions: `kube.<cluster>.*.<kind>.>` (e.g. every Service). */
export function kubeKindFilter(cluster: string, kind: PartitionedKind, opts?: SubjectOptions): string {
  return `${prefixOf(opts)}kube.${encodeToken(cluster)}.*.${KIND_TOKENS[kind]}.>`;
}

export interface SliceSubjectAddress {
  readonly cluster: string;
  /** partitionOf(namespace, P), as on KUBE; null for a subject in the older form without it. */
  readonly partition: number | null;
  readonly namespace: string;
  readonly service: string;
}

/**
 * `slices.<cluster>.<part>.<ns>.<service>`, the partition being partitionOf(namespace, P): each
 * hints partition's consumer filters on it and receives only its own namespaces' changes (NATS
 * 2.9 has one filter per consumer). A null partition builds the older form
 * `slices.<cluster>.<ns>.<service>`, which outbox rows written before the token still hold.
 */
export function slicesSubject(a: SliceSubjectAddress, opts?: SubjectOptions): string {
  const part = a.partition === null ? '' : `${partitionToken(a.partition)}.`;
  return `${prefixOf(opts)}slices.${encodeToken(a.cluster)}.${part}${encodeToken(a.namespace)}.${encodeToken(a.service)}`;
}

/**
 * Inverse of slicesSubject, for either form (the older one gives partition null). Throws
 * TokenDecodeError for anything else.
 */
export function parseSlicesSubject(subject: string, opts?: SubjectOptions): SliceSubjectAddress {
  const t = tokensOf(subject, opts);
  if (t[0] !== 'slices' || (t.length !== 5 && t.length !== 4)) throw new TokenDecodeError(subject, 'not slices.<cluster>.<part>.<ns>.<service> (or the older slices.<cluster>.<ns>.<service>)');
  if (t.length === 4) return { cluster: decodeToken(t[1]!), partition: null, namespace: decodeToken(t[2]!), service: decodeToken(t[3]!) };
  const part = t[2]!;
  if (!/^(?:0|[1-9][0-9]{0,3})$/.test(part)) throw new TokenDecodeError(subject, `partition ${JSON.stringify(part)} is not a canonical number`);
  return { cluster: decodeToken(t[1]!), partition: Number(part), namespace: decodeToken(t[3]!), service: decodeToken(t[4]!) };
}

/**
 * The partition a SLICES address's namespace belongs to under `partitions` when its token names
 * another (a producer with another PARTITIONS); undefined when it does not, for the older form,
 * which has no token, and when `partitions` is not known.
 */
export function misfiledPartition(a: SliceSubjectAddress, partitions: number | undefined): number | undefined {
  if (a.partition === null || partitions === undefined) return undefined;
  const right = partitionOf(a.namespace, partitions);
  return a.partition === right ? undefined : right;
}

/**
 * `subject` in the current form: an older-form SLICES subject gains its partition, one already
 * carrying it is returned as it is. Throws TokenDecodeError when it is not a SLICES subject.
 */
export function currentSlicesSubject(subject: string, partitions: number, opts?: SubjectOptions): string {
  const a = parseSlicesSubject(subject, opts);
  return a.partition !== null ? subject : slicesSubject({ ...a, partition: partitionOf(a.namespace, partitions) }, opts);
}

/** Filter for every service of one cluster, in both forms: `slices.<cluster>.>`. */
export function slicesFilter(cluster: string, opts?: SubjectOptions): string {
  return `${prefixOf(opts)}slices.${encodeToken(cluster)}.>`;
}

/** Filter for one partition's services: `slices.<cluster>.<part>.>` (the current form only). */
export function slicesPartitionFilter(cluster: string, partition: number, opts?: SubjectOptions): string {
  return `${prefixOf(opts)}slices.${encodeToken(cluster)}.${partitionToken(partition)}.>`;
}

/** Filter for the older form only, `slices.<cluster>.*.*`: its subjects have one token less. */
export function legacySlicesFilter(cluster: string, opts?: SubjectOptions): string {
  return `${prefixOf(opts)}slices.${encodeToken(cluster)}.*.*`;
}

/** `dlq.<cluster>.<source>` (source: the service that rejected the input, e.g. 'watcher'). */
export function dlqSubject(cluster: string, source: string, opts?: SubjectOptions): string {
  return `${prefixOf(opts)}dlq.${encodeToken(cluster)}.${encodeToken(source)}`;
}

/** The subjects each stream captures: `<prefix>kube.>`, `<prefix>slices.>`, `<prefix>dlq.>`. */
export function streamSubjects(opts?: SubjectOptions): { readonly kube: string; readonly slices: string; readonly dlq: string } {
  const p = prefixOf(opts);
  return { kube: `${p}kube.>`, slices: `${p}slices.>`, dlq: `${p}dlq.>` };
}

export interface ServiceKeyAddress {
  readonly cluster: string;
  readonly namespace: string;
  readonly name: string;
}

/** Key in the `svc` bucket: `<cluster>.<ns>.<name>`. */
export function svcKey(a: ServiceKeyAddress): string {
  return `${encodeToken(a.cluster)}.${encodeToken(a.namespace)}.${encodeToken(a.name)}`;
}

/** Inverse of svcKey. Throws TokenDecodeError for anything else. */
export function parseSvcKey(key: string): ServiceKeyAddress {
  const t = key.split('.');
  if (t.length !== 3) throw new TokenDecodeError(key, 'not <cluster>.<ns>.<name>');
  return { cluster: decodeToken(t[0]!), namespace: decodeToken(t[1]!), name: decodeToken(t[2]!) };
}

/** Watch filter for every service spec of one cluster: `<cluster>.>`. */
export function svcClusterFilter(cluster: string): string {
  return `${encodeToken(cluster)}.>`;
}

export interface ViewKeyAddress {
  readonly cluster: string;
  /** A zone label value, or UNZONED_VIEW from @slicemesh/proxy-state. */
  readonly zone: string;
  readonly namespace: string;
  readonly service: string;
  readonly slice: string;
}

/** Key in the `views` bucket: `<cluster>.<zone>.<ns>.<service>.<slice>`. */
export function viewKey(a: ViewKeyAddress): string {
  return [a.cluster, a.zone, a.namespace, a.service, a.slice].map(encodeToken).join('.');
}

/** Inverse of viewKey. Throws TokenDecodeError for anything else. */
export function parseViewKey(key: string): ViewKeyAddress {
  const t = key.split('.');
  if (t.length !== 5) throw new TokenDecodeError(key, 'not <cluster>.<zone>.<ns>.<service>.<slice>');
  const [cluster, zone, namespace, service, slice] = t.map(decodeToken) as [string, string, string, string, string];
  return { cluster, zone, namespace, service, slice };
}

/** The one wildcard an agent watches: every view of its zone, `<cluster>.<zone>.>`. */
export function zoneViewsFilter(cluster: string, zone: string): string {
  return `${encodeToken(cluster)}.${encodeToken(zone)}.>`;
}

/**
 * Where the shared feeds of one cluster's keys in `bucket` deliver: `feed.<bucket>.<cluster>`.
 * A shared feed (kvFeedWatchJson in @slicemesh/nats) is one push consumer per watch filter whose
 * deliveries every watcher of that filter receives as plain NATS messages; its subject is this
 * prefix plus a token naming the filter. Agents may subscribe below it (permissions.ts).
 */
export function kvFeedSubjectPrefix(bucket: string, cluster: string): string {
  return `feed.${bucket}.${encodeToken(cluster)}`;
}

export interface HintedKeyAddress {
  readonly cluster: string;
  readonly namespace: string;
  readonly service: string;
  readonly slice: string;
}

/**
 * Key in the `hinted` bucket: `<cluster>.<ns>.<service>.<slice>`. The bucket holds the slicer's
 * slices as the hints service finished them (hints set or removed): what the publisher writes to
 * the Kubernetes API, as the EndpointSlice controller writes its slices with their hints.
 */
export function hintedKey(a: HintedKeyAddress): string {
  return [a.cluster, a.namespace, a.service, a.slice].map(encodeToken).join('.');
}

/** Inverse of hintedKey. Throws TokenDecodeError for anything else. */
export function parseHintedKey(key: string): HintedKeyAddress {
  const t = key.split('.');
  if (t.length !== 4) throw new TokenDecodeError(key, 'not <cluster>.<ns>.<service>.<slice>');
  const [cluster, namespace, service, slice] = t.map(decodeToken) as [string, string, string, string];
  return { cluster, namespace, service, slice };
}
