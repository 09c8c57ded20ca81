import { describe, expect, it } from 'vitest';
import {
  dns1035LabelProblem,
  dns1123LabelProblem,
  dns1123SubdomainProblem,
  ianaSvcNameProblem,
  labelValueProblem,
  qualifiedNameProblem,
} from './names.ts';

const RULES = {
  dns1123Label: dns1123LabelProblem,
  dns1123Subdomain: dns1123SubdomainProblem,
  dns1035Label: dns1035LabelProblem,
  qualifiedName: qualifiedNameProblem,
  labelValue: labelValueProblem,
  ianaSvcName: ianaSvcNameProblem,
};

const cases: { name: string; rule: keyof typeof RULES; input: string; ok: boolean; reason?: RegExp }[] = [
  { name: 'DNS-1123 label accepts lowercase, digits and inner dashes', rule: 'dns1123Label', input: 'kube-system-2', ok: true },
  { name: 'DNS-1123 label may start with a digit', rule: 'dns1123Label', input: '1abc', ok: true },
  { name: 'DNS-1123 label rejects a dot', rule: 'dns1123Label', input: 'a.b', ok: false, reason: /DNS-1123 label/ },
  { name: 'DNS-1123 label rejects uppercase', rule: 'dns1123Label', input: 'Default', ok: false },
  { name: 'DNS-1123 label rejects a trailing dash', rule: 'dns1123Label', input: 'abc-', ok: false },
  { name: 'DNS-1123 label rejects the empty string', rule: 'dns1123Label', input: '', ok: false, reason: /empty/ },
  { name: 'DNS-1123 label accepts 63 characters', rule: 'dns1123Label', input: 'a'.repeat(63), ok: true },
  { name: 'DNS-1123 label rejects 64 characters', rule: 'dns1123Label', input: 'a'.repeat(64), ok: false, reason: /at most 63/ },
  { name: 'DNS-1123 subdomain accepts dots', rule: 'dns1123Subdomain', input: 'ip-10-0-0-1.ec2.internal', ok: true },
  { name: 'DNS-1123 subdomain accepts 253 characters', rule: 'dns1123Subdomain', input: `${'a'.repeat(63)}.`.repeat(3) + 'a'.repeat(61), ok: true },
  { name: 'DNS-1123 subdomain rejects 254 characters', rule: 'dns1123Subdomain', input: 'a'.repeat(254), ok: false, reason: /at most 253/ },
  { name: 'DNS-1123 subdomain rejects an empty part', rule: 'dns1123Subdomain', input: 'a..b', ok: false },
  { name: 'DNS-1123 subdomain rejects a leading dot', rule: 'dns1123Subdomain', input: '.a', ok: false },
  { name: 'DNS-1123 subdomain rejects "*"', rule: 'dns1123Subdomain', input: 'web*', ok: false },
  { name: 'DNS-1123 subdomain rejects ">"', rule: 'dns1123Subdomain', input: 'web>', ok: false },
  { name: 'DNS-1123 subdomain rejects a space', rule: 'dns1123Subdomain', input: 'my pod', ok: false },
  { name: 'DNS-1123 subdomain rejects non-ASCII letters', rule: 'dns1123Subdomain', input: 'pöd', ok: false },
  { name: 'DNS-1123 subdomain rejects an underscore', rule: 'dns1123Subdomain', input: 'my_pod', ok: false },
  { name: 'DNS-1035 label must start with a letter', rule: 'dns1035Label', input: '1web', ok: false, reason: /DNS-1035/ },
  { name: 'DNS-1035 label accepts web-2', rule: 'dns1035Label', input: 'web-2', ok: true },
  { name: 'DNS-1035 label rejects a dot', rule: 'dns1035Label', input: 'web.v2', ok: false },
  { name: 'DNS-1035 label rejects 64 characters', rule: 'dns1035Label', input: `w${'a'.repeat(63)}`, ok: false, reason: /at most 63/ },
  { name: 'qualified name accepts a DNS prefix', rule: 'qualifiedName', input: 'app.kubernetes.io/name', ok: true },
  { name: 'qualified name accepts mixed case and underscores', rule: 'qualifiedName', input: 'My_Key.v1', ok: true },
  { name: 'qualified name rejects an empty prefix', rule: 'qualifiedName', input: '/name', ok: false, reason: /prefix/ },
  { name: 'qualified name rejects an invalid prefix', rule: 'qualifiedName', input: 'Example.com/name', ok: false, reason: /prefix/ },
  { name: 'qualified name rejects two slashes', rule: 'qualifiedName', input: 'a/b/c', ok: false },
  { name: 'qualified name rejects a 64-character name part', rule: 'qualifiedName', input: `x/${'a'.repeat(64)}`, ok: false, reason: /at most 63/ },
  { name: 'qualified name rejects a space', rule: 'qualifiedName', input: 'bad key', ok: false },
  { name: 'label value may be empty', rule: 'labelValue', input: '', ok: true },
  { name: 'label value accepts a zone name', rule: 'labelValue', input: 'eu-west-1a', ok: true },
  { name: 'label value rejects a slash', rule: 'labelValue', input: 'a/b', ok: false },
  { name: 'label value rejects a leading dash', rule: 'labelValue', input: '-a', ok: false },
  { name: 'label value rejects 64 characters', rule: 'labelValue', input: 'a'.repeat(64), ok: false, reason: /at most 63/ },
  { name: 'IANA service name accepts http-alt', rule: 'ianaSvcName', input: 'http-alt', ok: true },
  { name: 'IANA service name accepts 15 characters', rule: 'ianaSvcName', input: 'a'.repeat(15), ok: true },
  { name: 'IANA service name rejects 16 characters', rule: 'ianaSvcName', input: 'a'.repeat(16), ok: false, reason: /at most 15/ },
  { name: 'IANA service name needs a letter', rule: 'ianaSvcName', input: '8080', ok: false, reason: /letter/ },
  { name: 'IANA service name rejects consecutive hyphens', rule: 'ianaSvcName', input: 'a--b', ok: false, reason: /consecutive/ },
  { name: 'IANA service name rejects uppercase', rule: 'ianaSvcName', input: 'HTTP', ok: false },
  { name: 'IANA service name rejects an underscore', rule: 'ianaSvcName', input: 'http_alt', ok: false },
];

describe('name rules', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const problem = RULES[tc.rule](tc.input);
      if (tc.ok) expect(problem).toBeNull();
      else {
        expect(problem).toEqual(expect.any(String));
        if (tc.reason) expect(problem).toMatch(tc.reason);
      }
    });
  }
});
