import { describe, expect, it } from 'vitest';
import { deepFreeze } from '@slicemesh/testing';
import type { StackStatus } from './status.ts';
import { formatStatus } from './status.ts';

const BASE: StackStatus = deepFreeze({
  uptimeMs: 65_400, objectsSeen: 96, kubeSeq: 412, slicesSeq: 30, viewsSeq: 80, deadLetters: 0, pending: 0, dirty: 0, outbox: 0,
  slices: 8, hintedServices: 3, decidedServices: 7, viewKeys: 54, agents: { synced: 9, total: 9 }, notReady: [],
});

describe('formatStatus', () => {
  const cases: { name: string; edit: Partial<StackStatus>; want: string }[] = [
    { name: 'a settled stack', edit: {}, want: '[ 1m05s] objects 96 | KUBE seq 412 | slices 8 | hinted 3/7 svc | views 54 | agents 9/9 synced | DLQ 0 | backlog 0' },
    { name: 'backlog adds pending messages, dirty Services and unpublished outbox rows', edit: { uptimeMs: 3_000, pending: 5, dirty: 2, outbox: 1 }, want: '[    3s] objects 96 | KUBE seq 412 | slices 8 | hinted 3/7 svc | views 54 | agents 9/9 synced | DLQ 0 | backlog 8' },
    { name: 'unknown values (nothing created yet) print as -', edit: { uptimeMs: 0, objectsSeen: null, kubeSeq: null, viewKeys: null, deadLetters: null, pending: null }, want: '[    0s] objects - | KUBE seq - | slices 8 | hinted 3/7 svc | views - | agents 9/9 synced | DLQ - | backlog -' },
    { name: "the publisher's API writes follow the views", edit: { apiWrites: { count: 12, shadow: false } }, want: '[ 1m05s] objects 96 | KUBE seq 412 | slices 8 | hinted 3/7 svc | views 54 | API writes 12 | agents 9/9 synced | DLQ 0 | backlog 0' },
    { name: 'a shadow publisher shows what it would write', edit: { apiWrites: { count: null, shadow: true } }, want: '[ 1m05s] objects 96 | KUBE seq 412 | slices 8 | hinted 3/7 svc | views 54 | would write - | agents 9/9 synced | DLQ 0 | backlog 0' },
    { name: 'with --replicas, ready / run per kind before the agents', edit: { replicas: [{ kind: 'slicer', ready: 2, total: 3 }, { kind: 'hints', ready: 1, total: 1 }, { kind: 'watcher', ready: 2, total: 2 }], notReady: ['slicer-1'] }, want: '[ 1m05s] objects 96 | KUBE seq 412 | slices 8 | hinted 3/7 svc | views 54 | replicas slicer 2/3 hints 1/1 watcher 2/2 | agents 9/9 synced | DLQ 0 | backlog 0 | not ready: slicer-1' },
    { name: 'a count the server reported impossibly (pending 2^64 − 1) prints ?, never a number', edit: { pending: null, unknown: ['pending'] }, want: '[ 1m05s] objects 96 | KUBE seq 412 | slices 8 | hinted 3/7 svc | views 54 | agents 9/9 synced | DLQ 0 | backlog ?' },
    { name: 'impossible stream counts print ? too', edit: { kubeSeq: null, deadLetters: null, unknown: ['kubeSeq', 'deadLetters'] }, want: '[ 1m05s] objects 96 | KUBE seq ? | slices 8 | hinted 3/7 svc | views 54 | agents 9/9 synced | DLQ ? | backlog 0' },
    { name: 'components not ready are named', edit: { notReady: ['slicer', 'hints'] }, want: '[ 1m05s] objects 96 | KUBE seq 412 | slices 8 | hinted 3/7 svc | views 54 | agents 9/9 synced | DLQ 0 | backlog 0 | not ready: slicer, hints' },
  ];
  for (const tc of cases) it(tc.name, () => expect(formatStatus(deepFreeze({ ...BASE, ...tc.edit }))).toBe(tc.want));
});
