// Least-privilege NATS permissions per role of one cluster (issue 14, "NATS locked down"), as
// nats-server authorization wants them: subjects a role may publish to and subscribe to.
//
// The JetStream API subjects are what the @nats-io v3 clients send to nats-server 2.9.10 for the
// calls libs/nats makes, traced with `nats-server -DV`:
//   jetstreamManager(nc)                    $JS.API.INFO
//   streams.info / Kvm.open / kvKeys         $JS.API.STREAM.INFO.<stream>
//   ensureStreams / ensureKv (missing)      $JS.API.STREAM.CREATE.<stream>; drifted: STREAM.UPDATE
//   consumers.add, named + one filter       $JS.API.CONSUMER.CREATE.<stream>.<name>.<filter>
//     (durables, ordered consumers of kv.watch / kvKeys / readStreamRange, followSubject)
//   consumers.add, unnamed (ephemerals)     $JS.API.CONSUMER.CREATE.<stream>
//   consumers.info / .delete / .list        $JS.API.CONSUMER.INFO|DELETE.<stream>.<name>, CONSUMER.LIST.<stream>
//   pull (fetch/consume)                    $JS.API.CONSUMER.MSG.NEXT.<stream>.<name>, replies on _INBOX
//   ack / nak                               $JS.ACK.<stream>.<consumer>.<...>
//   streams.getMessage / kv.get             $JS.API.STREAM.MSG.GET.<stream> (DIRECT.GET.<stream>[.<subject>] on allow_direct buckets)
//   streams.purge                           $JS.API.STREAM.PURGE.<stream>
//   kv.put / kv.delete                      a JetStream publish to $KV.<bucket>.<key>
// Replies (API answers and pulled messages) all arrive on the connection's inbox subjects (a
// prefix per role, roleInboxPrefix); no role answers requests, so none publishes to an inbox.

import { dlqSubject, encodeToken, eventsStreamSubject, kvFeedSubjectPrefix, slicesFilter, streamSubjects } from '@slicemesh/contracts';
import { DEFAULT_NAMES } from './streams.ts';
import type { BackboneNames } from './streams.ts';

/**
 * watcher, slicer, hints, publisher, agent: the services. reader: the CLI and log tools (reads
 * everything, writes nothing). admin: a setup job or operator (everything).
 */
export type NatsRole = 'watcher' | 'slicer' | 'hints' | 'publisher' | 'mcs' | 'agent' | 'reader' | 'admin';

export const NATS_ROLES: readonly NatsRole[] = ['watcher', 'slicer', 'hints', 'publisher', 'mcs', 'agent', 'reader', 'admin'];

/** Allow and deny lists of one direction; deny wins on the server. */
export interface SubjectPermission {
  readonly allow: readonly string[];
  readonly deny: readonly string[];
}

export interface NatsPermissions {
  readonly publish: SubjectPermission;
  readonly subscribe: SubjectPermission;
}

export interface PermissionScope {
  /** The cluster name, as in the subjects and keys (encoded like them). */
  readonly cluster: string;
  /** Stream and bucket names and the subject prefix. Defaults to DEFAULT_NAMES. */
  readonly names?: BackboneNames;
  /**
   * Whether the services may create and update the streams and buckets they declare at start
   * (ensureStreams / ensureKv, as they all do today). Set false once an admin declares them:
   * the services then only read their info. Defaults to true.
   */
  readonly declare?: boolean;
  /**
   * The cluster set's shared bucket of exports and heartbeats (the mcs role): its name (default
   * `exports`) and JetStream domain (the hub's when this server is a leaf; unset: its own); and
   * the names of the cluster's buckets mcs writes for the publisher (defaults `exportstatus`, `serviceimports`).
   */
  readonly exports?: { readonly bucket?: string; readonly domain?: string; readonly statusBucket?: string; readonly serviceImportsBucket?: string };
}

const API = '$JS.API';

/**
 * The inbox prefix of a role's connections (connectNats `role`), instead of the client's shared
 * `_INBOX`: every API reply and pulled message arrives on the inbox, so a role allowed all of
 * `_INBOX.>` would read what the others pull (an agent every Pod the slicer reads). Agents share
 * theirs: what one pulls, any may read anyway.
 */
export function roleInboxPrefix(role: NatsRole): string {
  return `_INBOX_${role}`;
}

/** Reading a stream through consumers the role creates: info, consumer create/info, pull. */
function consumerRead(stream: string, filters: readonly string[] | 'any'): string[] {
  const create =
    filters === 'any'
      ? // Unnamed ephemerals (log-retention's last-per-subject reads) use the short form.
        [`${API}.CONSUMER.CREATE.${stream}`, `${API}.CONSUMER.CREATE.${stream}.>`]
      : // Only named consumers whose one filter lies within `filters`: what the subject names.
        filters.map((f) => `${API}.CONSUMER.CREATE.${stream}.*.${f}`);
  return [`${API}.STREAM.INFO.${stream}`, ...create, `${API}.CONSUMER.INFO.${stream}.*`, `${API}.CONSUMER.MSG.NEXT.${stream}.*`];
}

/** Durable consumers a service owns on `stream`: consumeLoop / consumeBatchesInOrder acks, restartDurableAt deletes, durablePositions lists. */
function durables(stream: string): string[] {
  return [
    ...consumerRead(stream, 'any'),
    `${API}.CONSUMER.DURABLE.CREATE.${stream}.*`,
    `${API}.CONSUMER.DELETE.${stream}.*`,
    `${API}.CONSUMER.LIST.${stream}`,
    `${API}.CONSUMER.NAMES.${stream}`,
    `$JS.ACK.${stream}.>`,
  ];
}

/**
 * The replies a KV watch owes its stream: the watch is an ordered push consumer with flow control,
 * and under load the server waits for an answer on `$JS.FC.<stream>.<consumer>.…` before it
 * delivers more. Refused, the watch stalls (the full fault campaign found agents' views frozen).
 */
function flowControl(stream: string): string {
  return `$JS.FC.${stream}.>`;
}

/** Single messages by sequence or subject (getMessage, nextSeqMatching, kv.get). */
function messageGet(stream: string): string[] {
  return [`${API}.STREAM.MSG.GET.${stream}`, `${API}.DIRECT.GET.${stream}`, `${API}.DIRECT.GET.${stream}.>`];
}

/** STREAM.INFO always (ensureStreams / ensureKv compare); CREATE and UPDATE when declaring. */
function declared(streams: readonly string[], declare: boolean): string[] {
  return streams.flatMap((s) => [`${API}.STREAM.INFO.${s}`, ...(declare ? [`${API}.STREAM.CREATE.${s}`, `${API}.STREAM.UPDATE.${s}`] : [])]);
}

const kvStream = (bucket: string): string => `KV_${bucket}`;

/**
 * What a role that must not write may never be allowed, listed as deny so that a later, wider
 * allow cannot open it: the logs' subjects, every KV write, and stream-changing API calls.
 * Consumer deletes are denied on every stream but `watched` — the buckets the role watches,
 * whose ordered consumers the client deletes when it resets one (after a reconnect, say).
 */
function writesDenied(names: BackboneNames, watched: readonly string[] = []): string[] {
  const s = streamSubjects(names);
  const streams = [names.kube, names.slices, names.dlq, ...(names.events === undefined ? [] : [names.events]), kvStream(names.svc), kvStream(names.views), kvStream(names.hinted)];
  return [
    s.kube,
    s.slices,
    s.dlq,
    eventsStreamSubject(names),
    '$KV.>',
    `${API}.STREAM.CREATE.>`,
    `${API}.STREAM.UPDATE.>`,
    `${API}.STREAM.DELETE.>`,
    `${API}.STREAM.PURGE.>`,
    `${API}.STREAM.MSG.DELETE.>`,
    `${API}.STREAM.RESTORE.>`,
    ...(watched.length === 0 ? [`${API}.CONSUMER.DELETE.>`] : streams.filter((x) => !watched.includes(x)).map((x) => `${API}.CONSUMER.DELETE.${x}.>`)),
    `${API}.CONSUMER.DURABLE.CREATE.>`,
  ];
}

/** No service ever deletes a stream or removes single messages: only an admin. */
const SERVICE_DENY = [`${API}.STREAM.DELETE.>`, `${API}.STREAM.MSG.DELETE.>`, `${API}.STREAM.RESTORE.>`];

function uniq(xs: readonly string[]): string[] {
  return [...new Set(xs)];
}

/**
 * The publish/subscribe permissions of `role` in `scope.cluster`. Every role but admin subscribes
 * to its own inbox (roleInboxPrefix), and agents to their cluster's shared KV feeds besides: no
 * core subscription can snoop on a log or bucket subject, nor on another role's replies.
 */
export function rolePermissions(role: NatsRole, scope: PermissionScope): NatsPermissions {
  const names = scope.names ?? DEFAULT_NAMES;
  const declare = scope.declare ?? true;
  const p = names.prefix;
  const c = encodeToken(scope.cluster);
  const streams = [names.kube, names.slices, names.dlq, ...(names.events === undefined ? [] : [names.events])];
  const events = names.events;
  const kv = { svc: kvStream(names.svc), views: kvStream(names.views), hinted: kvStream(names.hinted) };
  // The desired status of this cluster's ServiceExports: mcs writes it, the publisher applies it.
  const statusBucket = scope.exports?.statusBucket ?? 'exportstatus';
  const status = kvStream(statusBucket);
  // The ServiceImports of this cluster's imports: mcs writes them, the publisher applies them.
  const importsBucket = scope.exports?.serviceImportsBucket ?? 'serviceimports';
  const imports = kvStream(importsBucket);
  // Replies and pulled messages arrive on the role's own inbox subjects only.
  const subscribe: SubjectPermission = { allow: [`${roleInboxPrefix(role)}.>`], deny: [] };
  const pub = (allow: readonly string[], deny: readonly string[]): NatsPermissions => ({ publish: { allow: uniq([`${API}.INFO`, ...allow]), deny }, subscribe });

  switch (role) {
    case 'watcher':
      return pub(
        [
          // Its cluster's Kubernetes objects and nodes, and its own dead letters.
          `${p}kube.${c}.>`,
          dlqSubject(scope.cluster, 'watcher', names),
          ...declared(streams, declare),
          // Reading back the last message per subject at start (an unnamed ephemeral, deleted after).
          ...consumerRead(names.kube, 'any'),
          `${API}.CONSUMER.DELETE.${names.kube}.*`,
          ...messageGet(names.kube),
        ],
        SERVICE_DENY,
      );
    case 'slicer':
      return pub(
        [
          // The slices it computes, its dead letters, the mirroring controller's event requests.
          slicesFilter(scope.cluster, names),
          dlqSubject(scope.cluster, 'slicer', names),
          ...(events === undefined ? [] : [`${p}events.${c}.*`]),
          // Compaction carries live objects forward before it purges: object subjects only
          // (kube.<cluster>.<part>.<kind>.<ns>.<name>), never a node's (kube.<cluster>.node.<name>).
          `${p}kube.${c}.*.*.*.*`,
          `${API}.STREAM.PURGE.${names.kube}`,
          ...declared(streams, declare),
          // Its per-partition durables on KUBE, the replay and the compactor's reads.
          ...durables(names.kube),
          ...messageGet(names.kube),
        ],
        SERVICE_DENY,
      );
    case 'hints':
      return pub(
        [
          // What it owns: the service specs and zone views the agents read, the finished slices
          // the publisher writes, its dead letters and the topology event requests.
          `$KV.${names.svc}.${c}.>`,
          `$KV.${names.views}.${c}.>`,
          `$KV.${names.hinted}.${c}.>`,
          dlqSubject(scope.cluster, 'hints', names),
          ...(events === undefined ? [] : [`${p}events.${c}.*`]),
          ...declared([...streams, kv.svc, kv.views, kv.hinted], declare),
          // Its durables on KUBE and SLICES, and the start's look for older-form SLICES subjects.
          ...durables(names.kube),
          ...durables(names.slices),
          ...messageGet(names.slices),
          // kvKeys (the start-up audit of its views), the start-up read of its buckets (a watch
          // to its end: flow control on a large bucket) and kv.get.
          ...[kv.svc, kv.views, kv.hinted].flatMap((s) => [...consumerRead(s, 'any'), ...messageGet(s), flowControl(s)]),
        ],
        SERVICE_DENY,
      );
    case 'publisher':
      return pub(
        [
          // Writes to the Kubernetes API only: on NATS it consumes (hinted slices, or SLICES,
          // and the event requests) and acks.
          ...declared([...streams, kv.hinted], declare),
          ...durables(kv.hinted),
          ...durables(names.slices),
          ...(events === undefined ? [] : durables(events)),
          // Watches the ServiceExports' desired status and the ServiceImports (ordered consumers it may reset).
          ...[status, imports].flatMap((s) => [...consumerRead(s, 'any'), ...messageGet(s), `${API}.CONSUMER.DELETE.${s}.*`, flowControl(s)]),
        ],
        SERVICE_DENY,
      );
    case 'mcs': {
      // Multi-cluster services: reads its cluster's Services and Nodes (followers on KUBE) and
      // finished slices, writes the imports' derived Services and views, and its exports and
      // heartbeat to the shared bucket, in the hub's domain when there is one.
      const bucket = scope.exports?.bucket ?? 'exports';
      const domainApi = scope.exports?.domain === undefined ? API : `$JS.${scope.exports.domain}.API`;
      const ex = kvStream(bucket);
      return pub(
        [
          `$KV.${names.svc}.${c}.>`,
          `$KV.${names.views}.${c}.>`,
          `$KV.${statusBucket}.${c}.>`,
          `$KV.${importsBucket}.${c}.>`,
          // A bucket in another domain is written through that domain's API prefix (the KV client
          // puts to `$JS.<domain>.API.$KV.<bucket>.<key>`); in its own, to `$KV.<bucket>.<key>`.
          scope.exports?.domain === undefined ? `$KV.${bucket}.>` : `${domainApi}.$KV.${bucket}.>`,
          ...declared([kv.svc, kv.views], false),
          ...declared([status, imports], declare),
          // kvKeys of both at start (what earlier runs wrote).
          ...[status, imports].flatMap((s) => [...consumerRead(s, 'any'), ...messageGet(s)]),
          // Followers on KUBE with wildcard filters use the short create form; the role never acks.
          ...consumerRead(names.kube, 'any'),
          ...[kv.svc, kv.views, kv.hinted].flatMap((s) => [...consumerRead(s, 'any'), ...messageGet(s)]),
          `${domainApi}.INFO`,
          `${domainApi}.STREAM.INFO.${ex}`,
          ...(declare ? [`${domainApi}.STREAM.CREATE.${ex}`, `${domainApi}.STREAM.UPDATE.${ex}`] : []),
          `${domainApi}.CONSUMER.CREATE.${ex}`,
          `${domainApi}.CONSUMER.CREATE.${ex}.>`,
          `${domainApi}.CONSUMER.INFO.${ex}.*`,
          `${domainApi}.CONSUMER.MSG.NEXT.${ex}.*`,
          `${domainApi}.STREAM.MSG.GET.${ex}`,
          `${domainApi}.DIRECT.GET.${ex}`,
          `${domainApi}.DIRECT.GET.${ex}.>`,
          // The ordered consumers of its two watches, which the client deletes when it resets one.
          `${API}.CONSUMER.DELETE.${kv.hinted}.*`,
          `${domainApi}.CONSUMER.DELETE.${ex}.*`,
          flowControl(kv.hinted),
          flowControl(ex),
        ],
        [...SERVICE_DENY, `${domainApi}.STREAM.DELETE.>`, `${domainApi}.STREAM.PURGE.>`],
      );
    }
    case 'agent':
      return {
        ...pub(
          [
            // openKv, kvWatchJson and kvFeedWatchJson: bucket info, then an ordered consumer
            // (named, one filter) for the current values, and the filter's shared feed (named too),
            // on its cluster's service specs and views. Any zone of the cluster: the node's zone
            // label may change while the agent runs, and it then watches the new zone's views.
            ...consumerRead(kv.svc, [`$KV.${names.svc}.${c}.>`]),
            ...consumerRead(kv.views, [`$KV.${names.views}.${c}.>`]),
            // followSubject: the last and every new message of its node's subject (a named
            // ephemeral with that filter; the server removes it when inactive, the agent cannot
            // delete consumers).
            ...consumerRead(names.kube, [`${p}kube.${c}.node.*`]),
            // The client deletes an ordered consumer of a watch it resets (after a reconnect):
            // on the two buckets it watches only. Another agent's watch it could delete would be
            // reset and resumed by that agent; no log or durable is reachable.
            `${API}.CONSUMER.DELETE.${kv.svc}.*`,
            `${API}.CONSUMER.DELETE.${kv.views}.*`,
            flowControl(kv.svc),
            flowControl(kv.views),
          ],
          writesDenied(names, [kv.svc, kv.views]),
        ),
        // kvFeedWatchJson: the shared feeds of its cluster's specs and views (one consumer per
        // filter, created above like any named consumer), delivered as plain messages.
        subscribe: { allow: [...subscribe.allow, `${kvFeedSubjectPrefix(names.svc, scope.cluster)}.>`, `${kvFeedSubjectPrefix(names.views, scope.cluster)}.>`], deny: [] },
      };
    case 'reader':
      return pub(
        [...[...streams, kv.svc, kv.views, kv.hinted].flatMap((s) => [...consumerRead(s, 'any'), ...messageGet(s)]), `${API}.STREAM.NAMES`, `${API}.STREAM.LIST`],
        writesDenied(names),
      );
    case 'admin':
      return { publish: { allow: ['>'], deny: [] }, subscribe: { allow: ['>'], deny: [] } };
  }
}

/** Whether NATS subject `pattern` (with `*` and `>` wildcards) matches `subject`, token by token. */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length || (p[i] !== '*' && p[i] !== s[i])) return false;
  }
  return p.length === s.length;
}

/** Whether `perm` lets `subject` through as the server decides it: allowed and not denied. */
export function permits(perm: SubjectPermission, subject: string): boolean {
  return perm.allow.some((a) => subjectMatches(a, subject)) && !perm.deny.some((d) => subjectMatches(d, subject));
}
