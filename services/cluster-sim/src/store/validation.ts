// Shape checks shared by every kind: enough that malformed writes fail with a 422 naming the
// field (as the real API server would), not a full reimplementation of upstream validation.
import { fieldInvalid, fieldRequired } from './api-error.ts';
import type { StatusCause } from './api-error.ts';
import type { KubeObj } from './types.ts';

/** `pathSegment`: anything usable in a URL path segment (what core/v1 Events require). */
export type NameRule = 'subdomain' | 'label' | 'dns1035' | 'pathSegment';

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** Why `name` breaks `rule`, or null when it is fine. */
export function nameProblem(name: string, rule: NameRule): string | null {
  if (rule === 'pathSegment') {
    if (name === '.' || name === '..') return `may not be '${name}'`;
    for (const bad of ['/', '%']) if (name.includes(bad)) return `may not contain '${bad}'`;
    return null;
  }
  if (rule === 'subdomain') {
    return name.length <= 253 && SUBDOMAIN.test(name)
      ? null
      : "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
  }
  if (rule === 'label') {
    return name.length <= 63 && LABEL.test(name)
      ? null
      : "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
  }
  return name.length <= 63 && DNS1035.test(name)
    ? null
    : "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function stringMapCauses(value: unknown, field: string): StatusCause[] {
  if (value === undefined || value === null) return [];
  if (!isRecord(value)) return [fieldInvalid(field, value, 'must be a map of string keys to string values')];
  return Object.entries(value)
    .filter(([, v]) => typeof v !== 'string')
    .map(([k, v]) => fieldInvalid(`${field}[${k}]`, v, 'must be a string'));
}

/** Metadata checks common to all kinds (the name is checked once it is final). */
export function metadataCauses(obj: KubeObj, rule: NameRule): StatusCause[] {
  const causes: StatusCause[] = [];
  const name = obj.metadata.name;
  if (!name) causes.push(fieldRequired('metadata.name'));
  else {
    const problem = nameProblem(name, rule);
    if (problem) causes.push(fieldInvalid('metadata.name', name, problem));
  }
  causes.push(...stringMapCauses(obj.metadata.labels, 'metadata.labels'));
  causes.push(...stringMapCauses(obj.metadata.annotations, 'metadata.annotations'));
  return causes;
}

export function isPort(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 65535;
}

export const PROTOCOLS: readonly string[] = ['TCP', 'UDP', 'SCTP'];
