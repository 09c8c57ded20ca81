import { describe, expect, it } from 'vitest';
import { DEFAULT_NAMES } from './streams.ts';
import { NATS_ROLES, permits, roleInboxPrefix, rolePermissions, subjectMatches } from './permissions.ts';
import type { NatsRole, PermissionScope } from './permissions.ts';

const C1: PermissionScope = { cluster: 'c1' };

describe('subjectMatches', () => {
  it.each([
    ['kube.c1.>', 'kube.c1.node.n1', true],
    ['kube.c1.>', 'kube.c1', false],
    ['kube.c1.*.*.*.*', 'kube.c1.0.service.ns.web', true],
    ['kube.c1.*.*.*.*', 'kube.c1.node.n1', false],
    ['$JS.API.CONSUMER.CREATE.KV_views.*.$KV.views.c1.>', '$JS.API.CONSUMER.CREATE.KV_views.oc_x_1.$KV.views.c1.zone-a.>', true],
    ['$JS.API.STREAM.INFO.KUBE', '$JS.API.STREAM.INFO.KUBE.x', false],
  ])('%s against %s is %s', (pattern, subject, want) => {
    expect(subjectMatches(pattern, subject)).toBe(want);
  });
});

// [role, subject, may publish] — the rules' purpose, one behaviour per row.
const PUBLISH: readonly (readonly [string, NatsRole, string, boolean])[] = [
  ['the watcher publishes its cluster\'s objects', 'watcher', 'kube.c1.0.service.ns.web', true],
  ['the watcher publishes its cluster\'s nodes', 'watcher', 'kube.c1.node.n1', true],
  ['the watcher dead-letters as itself', 'watcher', 'dlq.c1.watcher', true],
  ['the watcher does not publish another cluster\'s objects', 'watcher', 'kube.c2.0.service.ns.web', false],
  ['the watcher does not dead-letter as the slicer', 'watcher', 'dlq.c1.slicer', false],
  ['the watcher does not write views', 'watcher', '$KV.views.c1.zone-a.ns.web.web-1', false],
  ['the watcher does not publish slices', 'watcher', 'slices.c1.0.ns.web', false],
  ['the watcher does not purge KUBE', 'watcher', '$JS.API.STREAM.PURGE.KUBE', false],
  ['the watcher reads back the last message per subject', 'watcher', '$JS.API.CONSUMER.CREATE.KUBE', true],
  ['the watcher declares KUBE', 'watcher', '$JS.API.STREAM.CREATE.KUBE', true],
  ['the slicer publishes its slices', 'slicer', 'slices.c1.0.ns.web', true],
  ['the slicer publishes an older-form row of its outbox', 'slicer', 'slices.c1.ns.web', true],
  ['the slicer carries objects forward when compacting', 'slicer', 'kube.c1.3.pod.ns.web-1', true],
  ['the slicer never publishes a node', 'slicer', 'kube.c1.node.n1', false],
  ['the slicer purges KUBE below the cut', 'slicer', '$JS.API.STREAM.PURGE.KUBE', true],
  ['the slicer does not purge SLICES', 'slicer', '$JS.API.STREAM.PURGE.SLICES', false],
  ['the slicer does not delete KUBE', 'slicer', '$JS.API.STREAM.DELETE.KUBE', false],
  ['the slicer does not write views', 'slicer', '$KV.views.c1.zone-a.ns.web.web-1', false],
  ['the slicer acks its durables', 'slicer', '$JS.ACK.KUBE.slicer-c1-p0.1.1.1.1795754217116352316.0', true],
  ['the slicer requests mirroring events', 'slicer', 'events.c1.endpointslice-mirroring-controller', true],
  ['hints writes views of its cluster', 'hints', '$KV.views.c1.zone-a.ns.web.web-1', true],
  ['hints writes service specs', 'hints', '$KV.svc.c1.ns.web', true],
  ['hints writes finished slices', 'hints', '$KV.hinted.c1.ns.web.web-1', true],
  ['hints does not write another cluster\'s views', 'hints', '$KV.views.c2.zone-a.ns.web.web-1', false],
  ['hints does not publish to KUBE', 'hints', 'kube.c1.node.n1', false],
  ['hints does not publish slices', 'hints', 'slices.c1.0.ns.web', false],
  ['hints looks for older-form SLICES subjects', 'hints', '$JS.API.STREAM.MSG.GET.SLICES', true],
  ['the publisher acks hinted slices', 'publisher', '$JS.ACK.KV_hinted.publisher-c1.1.1.1.1.0', true],
  ['the publisher pulls event requests', 'publisher', '$JS.API.CONSUMER.MSG.NEXT.EVENTS.publisher-events-c1', true],
  ['the publisher does not write hinted slices', 'publisher', '$KV.hinted.c1.ns.web.web-1', false],
  ['the publisher does not publish to KUBE', 'publisher', 'kube.c1.0.service.ns.web', false],
  ['an agent watches its cluster\'s views', 'agent', '$JS.API.CONSUMER.CREATE.KV_views.oc_x_1.$KV.views.c1.zone-a.>', true],
  ['an agent watches its cluster\'s service specs', 'agent', '$JS.API.CONSUMER.CREATE.KV_svc.oc_x_1.$KV.svc.c1.>', true],
  ['an agent pulls its watches', 'agent', '$JS.API.CONSUMER.MSG.NEXT.KV_views.oc_x_1', true],
  ['an agent follows a node subject', 'agent', '$JS.API.CONSUMER.CREATE.KUBE.follow_x.kube.c1.node.n1', true],
  ['an agent reads bucket info', 'agent', '$JS.API.STREAM.INFO.KV_svc', true],
  ['an agent does not publish to KUBE', 'agent', 'kube.c1.node.n1', false],
  ['an agent does not put views', 'agent', '$KV.views.c1.zone-a.ns.web.web-1', false],
  ['an agent does not put service specs', 'agent', '$KV.svc.c1.ns.web', false],
  ['an agent does not put hinted slices', 'agent', '$KV.hinted.c1.ns.web.web-1', false],
  ['an agent does not purge KUBE', 'agent', '$JS.API.STREAM.PURGE.KUBE', false],
  ['an agent does not create a stream', 'agent', '$JS.API.STREAM.CREATE.KV_views', false],
  ['an agent does not update a bucket', 'agent', '$JS.API.STREAM.UPDATE.KV_views', false],
  ['an agent does not delete a bucket', 'agent', '$JS.API.STREAM.DELETE.KV_views', false],
  ['an agent does not delete a message', 'agent', '$JS.API.STREAM.MSG.DELETE.KV_views', false],
  ['an agent does not delete consumers (a service\'s durable)', 'agent', '$JS.API.CONSUMER.DELETE.KUBE.slicer-c1-p0', false],
  ['an agent does not create unfiltered consumers on KUBE', 'agent', '$JS.API.CONSUMER.CREATE.KUBE', false],
  ['an agent does not read Pods from KUBE', 'agent', '$JS.API.CONSUMER.CREATE.KUBE.x.kube.c1.0.pod.>', false],
  ['an agent does not watch another cluster\'s views', 'agent', '$JS.API.CONSUMER.CREATE.KV_views.x.$KV.views.c2.>', false],
  ['an agent does not create durables', 'agent', '$JS.API.CONSUMER.DURABLE.CREATE.KUBE.x', false],
  ['an agent deletes a watch of the views it resets', 'agent', '$JS.API.CONSUMER.DELETE.KV_views.oc_1', true],
  ['an agent answers the flow control of its views watch', 'agent', '$JS.FC.KV_views.oc_1_1.Ab3x', true],
  ['an agent answers the flow control of its specs watch', 'agent', '$JS.FC.KV_svc.oc_1_1.Ab3x', true],
  ['an agent answers no flow control of the log', 'agent', '$JS.FC.KUBE.slicer-c1-p0.Ab3x', false],
  ['the hints service answers the flow control of its buckets\' start-up read', 'hints', '$JS.FC.KV_views.oc_1_1.Ab3x', true],
  ['the publisher answers the flow control of its ServiceImports watch', 'publisher', '$JS.FC.KV_serviceimports.oc_1_1.Ab3x', true],
  ['an agent deletes a watch of the specs it resets', 'agent', '$JS.API.CONSUMER.DELETE.KV_svc.oc_1', true],
  ['an agent does not delete the publisher\'s durable', 'agent', '$JS.API.CONSUMER.DELETE.KV_hinted.publisher-c1', false],
  ['an agent does not answer on inboxes', 'agent', '_INBOX.abc.def', false],
  ['an agent does not answer on a service\'s inbox', 'agent', '_INBOX_slicer.abc.def', false],
  ['the publisher watches the ServiceExports\' desired status', 'publisher', '$JS.API.CONSUMER.CREATE.KV_exportstatus', true],
  ['the publisher does not write the ServiceExports\' status bucket', 'publisher', '$KV.exportstatus.c1.shop.cart', false],
  ['the publisher watches the ServiceImports', 'publisher', '$JS.API.CONSUMER.CREATE.KV_serviceimports.oc_1.$KV.serviceimports.c1.>', true],
  ['the publisher gets a ServiceImport entry', 'publisher', '$JS.API.DIRECT.GET.KV_serviceimports', true],
  ['the publisher deletes a watch of the ServiceImports it resets', 'publisher', '$JS.API.CONSUMER.DELETE.KV_serviceimports.oc_1', true],
  ['the publisher does not write the ServiceImports bucket', 'publisher', '$KV.serviceimports.c1.shop.cart', false],
  ['the publisher does not purge the ServiceImports bucket', 'publisher', '$JS.API.STREAM.PURGE.KV_serviceimports', false],
  ['a reader reads any stream', 'reader', '$JS.API.CONSUMER.CREATE.KUBE', true],
  ['a reader gets messages', 'reader', '$JS.API.STREAM.MSG.GET.DLQ', true],
  ['a reader does not publish', 'reader', 'dlq.c1.watcher', false],
  ['a reader does not purge', 'reader', '$JS.API.STREAM.PURGE.DLQ', false],
  ['an admin deletes streams', 'admin', '$JS.API.STREAM.DELETE.KUBE', true],
];

describe('rolePermissions: publish', () => {
  it.each(PUBLISH)('%s', (_name, role, subject, want) => {
    expect(permits(rolePermissions(role, C1).publish, subject)).toBe(want);
  });
});

// The multi-cluster service on a leaf whose cluster set's bucket lives in the hub's domain.
const C1_ON_LEAF: PermissionScope = { cluster: 'c1', exports: { domain: 'hub' } };
const MCS: readonly (readonly [string, string, boolean])[] = [
  ['writes its heartbeat to the hub\'s bucket', '$JS.hub.API.$KV.exports.hb.c1', true],
  ['writes its exports to the hub\'s bucket', '$JS.hub.API.$KV.exports.svc.ns.web.c1', true],
  ['watches the hub\'s bucket', '$JS.hub.API.CONSUMER.CREATE.KV_exports.oc_1.$KV.exports.>', true],
  ['creates the hub\'s bucket', '$JS.hub.API.STREAM.CREATE.KV_exports', true],
  ['writes its cluster\'s derived Services', '$KV.svc.c1.ns.derived-0123456789', true],
  ['writes its cluster\'s views', '$KV.views.c1.zone-a.ns.derived-0123456789.s1', true],
  ['follows KUBE', '$JS.API.CONSUMER.CREATE.KUBE.follow_1', true],
  ['answers the flow control of its hinted watch', '$JS.FC.KV_hinted.oc_1_1.Ab3x', true],
  ['answers the flow control of its watch of the hub\'s bucket', '$JS.FC.KV_exports.oc_1_1.Ab3x', true],
  ['writes its ServiceExports\' desired status', '$KV.exportstatus.c1.shop.cart', true],
  ['does not write another cluster\'s ServiceExports\' status', '$KV.exportstatus.c2.shop.cart', false],
  ['writes its cluster\'s ServiceImports', '$KV.serviceimports.c1.shop.cart', true],
  ['does not write another cluster\'s ServiceImports', '$KV.serviceimports.c2.shop.cart', false],
  ['declares the ServiceImports bucket', '$JS.API.STREAM.CREATE.KV_serviceimports', true],
  ['lists the ServiceImports bucket\'s keys at start', '$JS.API.CONSUMER.CREATE.KV_serviceimports', true],
  ['does not delete the ServiceImports bucket', '$JS.API.STREAM.DELETE.KV_serviceimports', false],
  ['does not write another cluster\'s views', '$KV.views.c2.zone-a.ns.web.s1', false],
  ['does not write the hinted slices', '$KV.hinted.c1.ns.web.s1', false],
  ['does not publish to KUBE', 'kube.c1.0.service.ns.web', false],
  ['does not purge the hub\'s bucket', '$JS.hub.API.STREAM.PURGE.KV_exports', false],
  ['does not delete streams', '$JS.API.STREAM.DELETE.KUBE', false],
];

describe('rolePermissions: mcs', () => {
  it.each(MCS)('the mcs role %s', (_name, subject, want) => {
    expect(permits(rolePermissions('mcs', C1_ON_LEAF).publish, subject)).toBe(want);
  });
  it('writes a bucket in its own domain without the API prefix', () => {
    const own = rolePermissions('mcs', C1).publish;
    expect(permits(own, '$KV.exports.hb.c1')).toBe(true);
    expect(permits(own, '$JS.API.STREAM.INFO.KV_exports')).toBe(true);
  });
});

describe('rolePermissions: subscribe', () => {
  it.each(NATS_ROLES.filter((r) => r !== 'admin'))('%s subscribes to its own inbox and no log, bucket or other inbox', (role) => {
    const sub = rolePermissions(role, C1).subscribe;
    expect(permits(sub, `${roleInboxPrefix(role)}.abc.def`)).toBe(true);
    const others = NATS_ROLES.filter((r) => r !== role).map((r) => `${roleInboxPrefix(r)}.abc.def`);
    for (const s of ['_INBOX.abc.def', ...others, 'kube.c1.node.n1', '$KV.views.c1.zone-a.ns.web.web-1', '$JS.API.STREAM.INFO.KUBE', 'slices.c1.ns.web']) expect(permits(sub, s), s).toBe(false);
  });

  it('an agent also subscribes to its cluster\'s shared feeds of specs and views, and no other', () => {
    const sub = rolePermissions('agent', C1).subscribe;
    const cases: [string, boolean][] = [
      ['feed.views.c1.0123456789abcdef0123', true],
      ['feed.svc.c1.0123456789abcdef0123', true],
      ['feed.views.c2.0123456789abcdef0123', false],
      ['feed.hinted.c1.0123456789abcdef0123', false],
      ['feed.views', false],
    ];
    for (const [subject, want] of cases) expect(permits(sub, subject), subject).toBe(want);
    for (const role of NATS_ROLES.filter((r) => r !== 'agent' && r !== 'admin')) expect(permits(rolePermissions(role, C1).subscribe, 'feed.views.c1.x'), role).toBe(false);
  });

  it('an inbox prefix is one token that the client accepts', () => {
    for (const role of NATS_ROLES) expect(roleInboxPrefix(role)).toMatch(/^_INBOX_[a-z]+$/);
  });
});

describe('rolePermissions: scope', () => {
  it.each(['watcher', 'slicer', 'hints', 'publisher'] as const)('%s only reads stream info when it does not declare', (role) => {
    const pub = rolePermissions(role, { ...C1, declare: false }).publish;
    expect(permits(pub, '$JS.API.STREAM.INFO.SLICES')).toBe(true);
    expect(permits(pub, '$JS.API.STREAM.CREATE.SLICES')).toBe(false);
    expect(permits(pub, '$JS.API.STREAM.UPDATE.SLICES')).toBe(false);
  });

  it('subjects carry the names\' prefix and stream names', () => {
    const names = { ...DEFAULT_NAMES, kube: 'KUBE_t', prefix: 't1.' };
    const watcher = rolePermissions('watcher', { cluster: 'c1', names }).publish;
    expect(permits(watcher, 't1.kube.c1.node.n1')).toBe(true);
    expect(permits(watcher, 'kube.c1.node.n1')).toBe(false);
    expect(permits(watcher, '$JS.API.STREAM.CREATE.KUBE_t')).toBe(true);
    const agent = rolePermissions('agent', { cluster: 'c1', names }).publish;
    expect(permits(agent, '$JS.API.CONSUMER.CREATE.KUBE_t.x.t1.kube.c1.node.n1')).toBe(true);
    expect(permits(agent, 't1.kube.c1.node.n1')).toBe(false);
  });

  it('the cluster is encoded as in subjects and keys', () => {
    const pub = rolePermissions('watcher', { cluster: 'a.b' }).publish;
    expect(permits(pub, 'kube.a=2Eb.node.n1')).toBe(true);
    expect(permits(pub, 'kube.a.b.node.n1')).toBe(false);
  });

  it('without an EVENTS stream nobody gets event subjects', () => {
    const { events: _events, ...names } = DEFAULT_NAMES;
    expect(permits(rolePermissions('slicer', { cluster: 'c1', names }).publish, 'events.c1.x')).toBe(false);
  });
});
