// Label and field selectors in the query-string syntax the API accepts
// (`app=web,tier in (a,b),!canary`, `metadata.name=x,spec.nodeName!=n1`).
import { badRequest } from './api-error.ts';
import { eventSourceField } from './event-strategy.ts';
import type { KindInfo } from './kinds.ts';
import type { KubeObj } from './types.ts';

export type LabelRequirement =
  | { readonly op: 'exists' | 'notExists'; readonly key: string }
  | { readonly op: 'in' | 'notIn'; readonly key: string; readonly values: readonly string[] }
  | { readonly op: 'gt' | 'lt'; readonly key: string; readonly value: number };

/** An empty array matches everything. */
export type LabelSelector = readonly LabelRequirement[];

function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

const KEY = '[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?';
const SET_RE = new RegExp(`^(${KEY})\\s+(in|notin)\\s*\\(([^()]*)\\)$`);
const CMP_RE = new RegExp(`^(${KEY})\\s*(==|!=|=|>|<)\\s*([-A-Za-z0-9_.]*)$`);
const EXISTS_RE = new RegExp(`^(!?)\\s*(${KEY})$`);

/** Parses a label selector; throws a 400 ApiError naming the requirement it cannot read. */
export function parseLabelSelector(text: string | undefined): LabelSelector {
  if (!text) return [];
  return splitTopLevel(text).map((part): LabelRequirement => {
    const set = SET_RE.exec(part);
    if (set) {
      const values = set[4]!.split(',').map((v) => v.trim()).filter((v) => v !== '');
      return { op: set[3] === 'in' ? 'in' : 'notIn', key: set[1]!, values };
    }
    const cmp = CMP_RE.exec(part);
    if (cmp) {
      const [key, op, value] = [cmp[1]!, cmp[3]!, cmp[4]!];
      if (op === '>' || op === '<') {
        const n = Number(value);
        if (value === '' || !Number.isInteger(n)) throw badRequest(`unable to parse requirement: for 'gt', 'lt' operators, the value must be an integer: ${part}`);
        return { op: op === '>' ? 'gt' : 'lt', key, value: n };
      }
      return { op: op === '!=' ? 'notIn' : 'in', key, values: [value] };
    }
    const exists = EXISTS_RE.exec(part);
    if (exists) return { op: exists[1] ? 'notExists' : 'exists', key: exists[2]! };
    throw badRequest(`unable to parse requirement: ${JSON.stringify(part)}`);
  });
}

/** A selector requiring exactly these labels (how a Service selector reads). */
export function selectorFromMap(labels: Readonly<Record<string, string>>): LabelSelector {
  return Object.entries(labels).map(([key, value]) => ({ op: 'in', key, values: [value] }));
}

export function matchesLabels(selector: LabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  return selector.every((r) => {
    const value = labels?.[r.key];
    switch (r.op) {
      case 'exists': return value !== undefined;
      case 'notExists': return value === undefined;
      case 'in': return value !== undefined && r.values.includes(value);
      case 'notIn': return value === undefined || !r.values.includes(value);
      case 'gt': return value !== undefined && Number.isInteger(Number(value)) && Number(value) > r.value;
      case 'lt': return value !== undefined && Number.isInteger(Number(value)) && Number(value) < r.value;
    }
    return false;
  });
}

export interface FieldRequirement {
  readonly path: string;
  readonly value: string;
  readonly negate: boolean;
}

export type FieldSelector = readonly FieldRequirement[];

function unescape(value: string): string {
  return value.replace(/\\(.)/g, '$1');
}

/**
 * Parses a field selector for `info`; keys outside the kind's field labels are a 400. A view's
 * keys come back as the stored kind's labels (events.k8s.io's `regarding.name` as
 * `involvedObject.name`).
 */
export function parseFieldSelector(text: string | undefined, info: KindInfo): FieldSelector {
  if (!text) return [];
  const allowed = new Set(['metadata.name', 'metadata.namespace', ...info.fieldLabels]);
  // Split on commas not escaped with a backslash.
  return text.split(/(?<!\\),/).filter((p) => p.trim() !== '').map((part) => {
    const m = /^\s*([A-Za-z.]+)\s*(==|!=|=)(.*)$/.exec(part);
    if (!m) throw badRequest(`invalid selector: '${text}'; can't understand '${part}'`);
    const path = m[1]!;
    if (!allowed.has(path)) throw badRequest(`field label not supported: ${path}`);
    return { path: info.fieldLabelAliases?.[path] ?? path, value: unescape(m[3]!.trim()), negate: m[2] === '!=' };
  });
}

/** Field labels that are not a plain path into the object. */
const COMPUTED_FIELDS: Readonly<Record<string, Readonly<Record<string, (obj: KubeObj) => string>>>> = {
  Event: { source: eventSourceField },
};

function fieldValue(obj: KubeObj, path: string): string {
  const computed = COMPUTED_FIELDS[obj.kind]?.[path];
  if (computed) return computed(obj);
  let cur: unknown = obj;
  for (const seg of path.split('.')) {
    cur = cur !== null && typeof cur === 'object' ? (cur as Record<string, unknown>)[seg] : undefined;
  }
  if (cur === undefined || cur === null) return path === 'spec.unschedulable' ? 'false' : '';
  return String(cur);
}

export function matchesFields(selector: FieldSelector, obj: KubeObj): boolean {
  return selector.every((r) => (fieldValue(obj, r.path) === r.value) !== r.negate);
}

/** Both selectors of a list or watch request, plus an optional namespace restriction. */
export interface ObjectFilter {
  readonly namespace?: string;
  readonly labels?: LabelSelector;
  readonly fields?: FieldSelector;
}

export function matchesFilter(filter: ObjectFilter, obj: KubeObj): boolean {
  if (filter.namespace && obj.metadata.namespace !== filter.namespace) return false;
  if (filter.labels && !matchesLabels(filter.labels, obj.metadata.labels)) return false;
  if (filter.fields && !matchesFields(filter.fields, obj)) return false;
  return true;
}
