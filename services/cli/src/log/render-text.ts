// The text form of each `log` answer, for people. `--output json` prints the engine's objects
// instead; both come from the same values.

import type { DeadLetterEntry, HistoryEntry, NodeProgram, ServiceDiff, StateAt, WhyReport } from '@slicemesh/history';
import type { EndpointSlice } from '@slicemesh/model';
import type { HintsDecision } from '@slicemesh/topology';

const at = (p: { seq: number; time: string }): string => `seq ${p.seq} (${p.time})`;
const list = (xs: readonly string[]): string => (xs.length === 0 ? '-' : xs.join(', '));
const endpointsChange = (e: { readonly added: readonly string[]; readonly removed: readonly string[] }): string =>
  [e.added.length > 0 ? `added ${e.added.join(', ')}` : '', e.removed.length > 0 ? `removed ${e.removed.join(', ')}` : ''].filter((x) => x !== '').join('; ');
const decision = (d: HintsDecision): string => `hints ${d.addressType}: ${d.enabled ? 'given' : 'not given'} (${d.mode}) — ${d.reason}`;

function endpointText(s: EndpointSlice): string[] {
  return s.endpoints.map((e) => {
    const c = e.conditions;
    const state = c.ready === false ? (c.terminating ? 'terminating' : 'not ready') : 'ready';
    const where = [e.nodeName, e.zone].filter((x) => x !== undefined && x !== '').join(', ');
    const hints = e.hints?.forZones?.map((z) => z.name) ?? [];
    const pod = e.targetRef?.name ? ` pod ${e.targetRef.name}` : '';
    return `      ${e.addresses.join(', ')} ${state}${where ? ` on ${where}` : ''}${pod}${hints.length > 0 ? ` → hints ${hints.join(', ')}` : ''}`;
  });
}

export function historyText(service: string, entries: readonly HistoryEntry[]): string {
  const out = [`${service}: ${entries.length} change${entries.length === 1 ? '' : 's'}`];
  for (const e of entries) {
    out.push('', `${e.to.time}  KUBE ${e.from.seq === e.to.seq ? `seq ${e.to.seq}` : `seq ${e.from.seq}..${e.to.seq}`}`);
    for (const c of e.causes) out.push(`  because ${c}`);
    const s = e.slices;
    const parts = [s.created.length > 0 ? `created ${list(s.created)}` : '', s.updated.length > 0 ? `updated ${list(s.updated)}` : '', s.deleted.length > 0 ? `deleted ${list(s.deleted)}` : ''].filter((x) => x !== '');
    if (parts.length > 0) out.push(`  slices: ${parts.join('; ')}`);
    if (e.endpoints.added.length + e.endpoints.removed.length > 0) out.push(`  endpoints: ${endpointsChange(e.endpoints)}`);
    if (e.decisionsChanged) for (const d of e.decisions.length > 0 ? e.decisions : []) out.push(`  ${decision(d)}`);
    if (e.decisionsChanged && e.decisions.length === 0) out.push('  hints: no decision (no slices)');
    if (e.zoneViewsChanged.length > 0) out.push(`  zone views changed: ${list(e.zoneViewsChanged)}`);
  }
  return `${out.join('\n')}\n`;
}

export function stateText(s: StateAt): string {
  const out = [`State at ${at(s.at)}`, `nodes: ${list(s.nodes.map((n) => `${n.name} (${n.zone || 'no zone'})`))}`];
  for (const svc of s.services) {
    out.push('', `${svc.namespace}/${svc.name}${svc.service === null ? ' (Service absent)' : ''}`);
    for (const sl of svc.slices) {
      out.push(`  slice ${sl.metadata.name} ${sl.addressType}, ${sl.endpoints.length} endpoint${sl.endpoints.length === 1 ? '' : 's'}`);
      out.push(...endpointText(sl));
    }
    for (const d of svc.decisions) out.push(`  ${decision(d)}`);
    const zones = Object.entries(svc.zoneViews).map(([z, l]) => `${z} ${l.reduce((n, x) => n + x.endpoints.length, 0)}`);
    if (zones.length > 0) out.push(`  zone views (endpoints): ${zones.join(', ')}`);
  }
  return `${out.join('\n')}\n`;
}

export function programText(p: NodeProgram, s: StateAt): string {
  const out = [`Node ${p.node} (${p.known ? p.zone || 'no zone' : 'not in the log'}) at ${at(s.at)}`];
  for (const port of p.ports) {
    out.push(`  ${port.servicePort}`);
    out.push(`    cluster: ${list(port.clusterEndpoints)}`);
    if (port.localEndpoints !== null) out.push(`    local:   ${list(port.localEndpoints)}`);
  }
  if (p.ports.length === 0) out.push('  (no service ports)');
  return `${out.join('\n')}\n`;
}

export function whyText(r: WhyReport): string {
  const out = [`Why node ${r.node} (${r.zone || 'no zone'}) sends to ${r.service} at ${at(r.at)}`];
  for (const n of r.notes) out.push(`  ${n}`);
  for (const p of r.ports) {
    out.push('', `${p.servicePort} (${p.family}): ${p.selection}`);
    for (const e of p.endpoints) {
      out.push(`  ${e.sends ? 'SENDS  ' : 'SKIPS  '} ${e.address}${e.pod ? ` pod ${e.pod}` : ''}${e.node ? ` on ${e.node}` : ''}${e.zone ? `, ${e.zone}` : ''}`);
      for (const reason of e.reasons) out.push(`           - ${reason}`);
    }
    if (p.endpoints.length === 0) out.push('  (no endpoints)');
  }
  return `${out.join('\n')}\n`;
}

export function diffText(a: StateAt, b: StateAt, diffs: readonly ServiceDiff[]): string {
  const out = [`From ${at(a.at)} to ${at(b.at)}: ${diffs.length} service${diffs.length === 1 ? '' : 's'} changed`];
  for (const d of diffs) {
    out.push('', `${d.namespace}/${d.name} (${d.change})`);
    if (d.specChanged) out.push('  spec changed');
    const s = d.slices;
    if (s.created.length + s.updated.length + s.deleted.length > 0) out.push(`  slices: created ${list(s.created)}; updated ${list(s.updated)}; deleted ${list(s.deleted)}`);
    if (d.endpoints.added.length + d.endpoints.removed.length > 0) out.push(`  endpoints: ${endpointsChange(d.endpoints)}`);
    if (d.decisionsChanged) {
      for (const x of d.decisions.before) out.push(`  before: ${decision(x)}`);
      for (const x of d.decisions.after) out.push(`  after:  ${decision(x)}`);
    }
    if (d.zoneViewsChanged.length > 0) out.push(`  zone views changed: ${list(d.zoneViewsChanged)}`);
  }
  return `${out.join('\n')}\n`;
}

export function dlqListText(letters: readonly DeadLetterEntry[]): string {
  if (letters.length === 0) return 'no dead letters\n';
  return `${letters.map((l) => `${l.seq}\t${l.time}\t${l.stage}\t${l.body.subject ?? '-'}\t${l.body.reason}${l.body.field ? ` (field ${l.body.field})` : ''}`).join('\n')}\n`;
}
