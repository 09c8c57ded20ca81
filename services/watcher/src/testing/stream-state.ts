// Test helpers: read a whole stream back, fold KUBE into "what it says the cluster holds",
// and compute the same from cluster-sim, so tests can compare the two exactly.

import type { ClusterSim } from '@slicemesh/cluster-sim';
import { isOwnSlice, ownManagers } from '@slicemesh/contracts';
import { toDomain, WATCHED_KINDS } from '@slicemesh/kube';
import type { KubeChangeEvent, WatchedObject } from '@slicemesh/kube';
import { supersedes } from '@slicemesh/model';
import type { DeadLetterBody, JetStreamManager } from '@slicemesh/nats';
import { subjectOf } from '../kube-message.ts';
import type { SubjectLayout } from '../kube-message.ts';

export interface StoredMessage<T> {
  readonly seq: number;
  readonly subject: string;
  readonly msgID: string;
  readonly body: T;
}

/** Every message of `stream`, in sequence order (small test streams only). */
export async function readStream<T>(jsm: JetStreamManager, stream: string): Promise<StoredMessage<T>[]> {
  const info = await jsm.streams.info(stream);
  const out: StoredMessage<T>[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (m === null) continue;
    out.push({ seq: m.seq, subject: m.subject, msgID: m.header.get('Nats-Msg-Id'), body: m.json<T>() });
  }
  return out;
}

export const readKube = (jsm: JetStreamManager, stream: string): Promise<StoredMessage<KubeChangeEvent>[]> => readStream<KubeChangeEvent>(jsm, stream);
export const readDlq = (jsm: JetStreamManager, stream: string): Promise<StoredMessage<DeadLetterBody>[]> => readStream<DeadLetterBody>(jsm, stream);

/** subject → `<uid>@<resourceVersion>` of every object KUBE says exists (its last message is an upsert). */
export function foldKube(messages: readonly StoredMessage<KubeChangeEvent>[]): Map<string, string> {
  const state = new Map<string, string>();
  for (const m of messages) {
    if (m.body.type === 'Upserted.v1') state.set(m.subject, `${m.body.object.metadata.uid}@${m.body.object.metadata.resourceVersion}`);
    else state.delete(m.subject);
  }
  return state;
}

/** The same map computed from the simulator's store (our own EndpointSlices left out, as the watcher does); `exclude` drops objects by name. */
export function simState(sim: ClusterSim, cluster: string, layout: SubjectLayout, exclude: (name: string) => boolean = () => false): Map<string, string> {
  const state = new Map<string, string>();
  for (const kind of WATCHED_KINDS) {
    for (const raw of sim.store.list(kind)) {
      if (exclude(raw.metadata.name)) continue;
      if (kind === 'EndpointSlice' && isOwnSlice(raw.metadata.labels, ownManagers())) continue;
      const obj: WatchedObject = toDomain(kind, raw, { maxObjectBytes: Number.MAX_SAFE_INTEGER });
      state.set(subjectOf(cluster, obj, layout), `${obj.metadata.uid}@${obj.metadata.resourceVersion}`);
    }
  }
  return state;
}

/** Subjects whose last message is older than an earlier one of theirs (must be none: the newest version is always last). */
export function staleTails(messages: readonly StoredMessage<KubeChangeEvent>[]): string[] {
  const version = (m: StoredMessage<KubeChangeEvent>) => ({ resourceVersion: m.body.object.metadata.resourceVersion ?? '', deleted: m.body.type === 'Deleted.v1' });
  const bySubject = new Map<string, StoredMessage<KubeChangeEvent>[]>();
  for (const m of messages) bySubject.set(m.subject, [...(bySubject.get(m.subject) ?? []), m]);
  const out: string[] = [];
  for (const [subject, ms] of bySubject) {
    const tail = ms[ms.length - 1] as StoredMessage<KubeChangeEvent>;
    const newer = ms.find((m) => supersedes(version(m), version(tail)));
    if (newer !== undefined) out.push(`${subject}: last ${tail.body.type}@${version(tail).resourceVersion} (seq ${tail.seq}) after ${newer.body.type}@${version(newer).resourceVersion} (seq ${newer.seq})`);
  }
  return out;
}

/** msgIDs stored more than once (must be none: the stream de-duplicates). */
export function repeatedMsgIDs(messages: readonly StoredMessage<unknown>[]): string[] {
  const seen = new Map<string, number>();
  for (const m of messages) seen.set(m.msgID, (seen.get(m.msgID) ?? 0) + 1);
  return [...seen].filter(([, n]) => n > 1).map(([id]) => id);
}

/** Upserts of the same object version stored twice under any msgID (must be none). */
export function repeatedVersions(messages: readonly StoredMessage<KubeChangeEvent>[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const m of messages) {
    const v = `${m.body.type} ${m.body.object.metadata.uid}@${m.body.object.metadata.resourceVersion}`;
    if (m.body.type === 'Upserted.v1' && seen.has(v)) out.push(v);
    seen.add(v);
  }
  return out;
}

/** Objects KUBE deleted more than once (each uid is deleted once). */
export function repeatedDeletes(messages: readonly StoredMessage<KubeChangeEvent>[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const m of messages) {
    if (m.body.type !== 'Deleted.v1') continue;
    const uid = m.body.object.metadata.uid ?? '';
    if (seen.has(uid)) out.push(uid);
    seen.add(uid);
  }
  return out;
}
