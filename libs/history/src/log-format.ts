// The .slog file: one exported stretch of a cluster's log, self-contained, as line-delimited
// JSON (optionally gzip-compressed; readers detect it). Lines, in this order:
//
//   {"format":"slicemesh-log","version":1,"cluster":"c","settings":{…},"exportedAt":"…","snapshot":{"seq":99,"time":"…"}}
//   {"t":"object","deleted":false,"object":{…}}    the objects as of the snapshot (tombstones too)
//   {"t":"slice","slice":{…}}                        the slicer's slices as of the snapshot
//   {"t":"event","seq":100,"time":"…","subject":"kube.c.0.pod.shop.web-1","data":{…}}   KUBE, in order
//   {"t":"dead","seq":7,"time":"…","subject":"dlq.c.watcher","stage":"watcher","body":{…}}
//   {"t":"reconcile","seq":104,"service":"shop/web"}  when live reconciled a Service (optional)
//   {"t":"end","events":1234}                        written last: a file without it was cut short
//
// An event whose body was not JSON keeps its text in "raw" instead of "data". Readers reject a
// file of another format or a newer version, and ignore line types they do not know (so a
// minor addition does not need a new version).

import type { DeadLetterBody } from '@slicemesh/contracts';
import type { EndpointSlice } from '@slicemesh/model';
import type { LogSettings, SnapshotObject } from './source.ts';

export const LOG_FORMAT = 'slicemesh-log';
export const LOG_VERSION = 1;

export interface LogHeader {
  readonly format: typeof LOG_FORMAT;
  readonly version: number;
  readonly cluster: string;
  readonly settings: LogSettings;
  /** RFC 3339: when the file was written. */
  readonly exportedAt: string;
  /** What the state lines hold: the state after event `seq` (0: the empty cluster). */
  readonly snapshot: { readonly seq: number; readonly time: string };
  /** Where the events came from, for people (e.g. `KUBE on nats://…`). */
  readonly origin?: string;
}

export type LogLine =
  | ({ readonly t: 'object' } & SnapshotObject)
  | { readonly t: 'slice'; readonly slice: EndpointSlice }
  | { readonly t: 'event'; readonly seq: number; readonly time: string; readonly subject: string; readonly data?: unknown; readonly raw?: string }
  | { readonly t: 'dead'; readonly seq: number; readonly time: string; readonly subject: string; readonly stage: string; readonly body: DeadLetterBody }
  | { readonly t: 'reconcile'; readonly seq: number; readonly service: string }
  | { readonly t: 'end'; readonly events: number };

/** The text of an event line; seq and time come first so the reader can index without parsing. */
export function eventLine(seq: number, time: string, subject: string, data: unknown, parseError?: string, raw?: string): string {
  const head = `{"t":"event","seq":${seq},"time":${JSON.stringify(time)},"subject":${JSON.stringify(subject)}`;
  return parseError === undefined ? `${head},"data":${JSON.stringify(data)}}` : `${head},"raw":${JSON.stringify(raw ?? '')}}`;
}

/** seq and time of an event line without parsing it whole; null for any other line. */
export function eventIndexOf(line: string): { readonly seq: number; readonly time: string } | null {
  if (!line.startsWith('{"t":"event","seq":')) return null;
  const m = /^\{"t":"event","seq":(\d+),"time":"([^"\\]*)"/.exec(line);
  return m === null ? null : { seq: Number(m[1]), time: m[2] ?? '' };
}
