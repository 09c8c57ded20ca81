// Name and label syntax as the Kubernetes API server enforces it (apimachinery validation),
// restated as small predicates. Each `…Problem` function returns null when the value is
// acceptable, or a one-line reason naming the rule that failed.

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const IANA_SVC_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

export const DNS1123_LABEL_MAX = 63;
export const DNS1123_SUBDOMAIN_MAX = 253;
export const LABEL_VALUE_MAX = 63;
export const IANA_SVC_NAME_MAX = 15;

/** Namespaces, service port names, container names, pod hostnames and subdomains. */
export function dns1123LabelProblem(s: string): string | null {
  if (s.length === 0) return 'must not be empty';
  if (s.length > DNS1123_LABEL_MAX) return `must be at most ${DNS1123_LABEL_MAX} characters (got ${s.length})`;
  if (!DNS1123_LABEL.test(s)) return 'must be a DNS-1123 label (lowercase letters, digits and "-", starting and ending with a letter or digit)';
  return null;
}

/** Pod, Node, Endpoints and EndpointSlice names; node names wherever they are referenced. */
export function dns1123SubdomainProblem(s: string): string | null {
  if (s.length === 0) return 'must not be empty';
  if (s.length > DNS1123_SUBDOMAIN_MAX) return `must be at most ${DNS1123_SUBDOMAIN_MAX} characters (got ${s.length})`;
  if (!DNS1123_SUBDOMAIN.test(s)) {
    return 'must be a DNS-1123 subdomain (lowercase letters, digits, "-" and ".", each dot-separated part starting and ending with a letter or digit)';
  }
  return null;
}

/** Service names: a DNS-1035 label (must start with a letter, so it can be a DNS name on its own). */
export function dns1035LabelProblem(s: string): string | null {
  if (s.length === 0) return 'must not be empty';
  if (s.length > DNS1123_LABEL_MAX) return `must be at most ${DNS1123_LABEL_MAX} characters (got ${s.length})`;
  if (!DNS1035_LABEL.test(s)) return 'must be a DNS-1035 label (lowercase letters, digits and "-", starting with a letter and ending with a letter or digit)';
  return null;
}

/** Label and annotation keys, resource names: `[prefix/]name`, prefix a DNS subdomain, name at most 63. */
export function qualifiedNameProblem(s: string): string | null {
  if (s.length === 0) return 'must not be empty';
  const slash = s.indexOf('/');
  let name = s;
  if (slash >= 0) {
    const prefix = s.slice(0, slash);
    name = s.slice(slash + 1);
    if (prefix.length === 0) return 'prefix before "/" must not be empty';
    const p = dns1123SubdomainProblem(prefix);
    if (p !== null) return `prefix ${p}`;
  }
  if (name.length === 0) return 'name part must not be empty';
  if (name.length > LABEL_VALUE_MAX) return `name part must be at most ${LABEL_VALUE_MAX} characters (got ${name.length})`;
  if (!QUALIFIED_NAME_PART.test(name)) {
    return 'must be a qualified name (letters, digits, "-", "_" and ".", starting and ending with a letter or digit, optionally prefixed by a DNS subdomain and "/")';
  }
  return null;
}

/** Label values: empty, or at most 63 of letters, digits, "-", "_", "." with alphanumeric ends. */
export function labelValueProblem(s: string): string | null {
  if (s.length === 0) return null;
  if (s.length > LABEL_VALUE_MAX) return `must be at most ${LABEL_VALUE_MAX} characters (got ${s.length})`;
  if (!QUALIFIED_NAME_PART.test(s)) return 'must be a label value (letters, digits, "-", "_" and ".", starting and ending with a letter or digit)';
  return null;
}

/** Named ports (container port names, named targetPorts): an IANA service name. */
export function ianaSvcNameProblem(s: string): string | null {
  if (s.length === 0) return 'must not be empty';
  if (s.length > IANA_SVC_NAME_MAX) return `must be at most ${IANA_SVC_NAME_MAX} characters (got ${s.length})`;
  if (!IANA_SVC_NAME.test(s)) return 'must be an IANA service name (lowercase letters, digits and "-", starting and ending with a letter or digit)';
  if (s.includes('--')) return 'must not contain consecutive hyphens';
  if (!/[a-z]/.test(s)) return 'must contain at least one letter';
  return null;
}

export const isDNS1123Label = (s: string): boolean => dns1123LabelProblem(s) === null;
export const isDNS1123Subdomain = (s: string): boolean => dns1123SubdomainProblem(s) === null;
export const isDNS1035Label = (s: string): boolean => dns1035LabelProblem(s) === null;
export const isQualifiedName = (s: string): boolean => qualifiedNameProblem(s) === null;
export const isLabelValue = (s: string): boolean => labelValueProblem(s) === null;
export const isIanaSvcName = (s: string): boolean => ianaSvcNameProblem(s) === null;
