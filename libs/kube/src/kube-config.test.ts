import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildKubeConfig, KubeConfigError, SERVICE_ACCOUNT_TOKEN, serverOf } from './kube-config.ts';
import type { KubeConnection } from './kube-config.ts';

const dir = mkdtempSync(join(tmpdir(), 'kube-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const kubeconfig = join(dir, 'config');
writeFileSync(
  kubeconfig,
  [
    'apiVersion: v1',
    'kind: Config',
    'current-context: dev',
    'clusters:',
    '- name: dev-cluster',
    '  cluster: { server: "https://10.0.0.1:6443", insecure-skip-tls-verify: true }',
    '- name: prod-cluster',
    '  cluster: { server: "https://10.0.0.2:6443", insecure-skip-tls-verify: true }',
    'users:',
    '- name: me',
    '  user: { token: abc }',
    'contexts:',
    '- name: dev',
    '  context: { cluster: dev-cluster, user: me }',
    '- name: prod',
    '  context: { cluster: prod-cluster, user: me }',
    '- name: broken',
    '  context: { cluster: nowhere, user: me }',
  ].join('\n'),
);
const noContext = join(dir, 'no-context');
writeFileSync(noContext, 'apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n');
const garbage = join(dir, 'garbage');
writeFileSync(garbage, 'clusters: [unterminated\n');

describe('buildKubeConfig', () => {
  const ok: { name: string; conn: KubeConnection; env?: Record<string, string>; exists?: (p: string) => boolean; server: string }[] = [
    { name: 'a server URL (cluster-sim) needs no credentials', conn: { type: 'server', url: 'http://127.0.0.1:8001/' }, server: 'http://127.0.0.1:8001' },
    { name: 'a kubeconfig file uses its current context', conn: { type: 'kubeconfig', path: kubeconfig }, server: 'https://10.0.0.1:6443' },
    { name: 'a kubeconfig context can be chosen', conn: { type: 'kubeconfig', path: kubeconfig, context: 'prod' }, server: 'https://10.0.0.2:6443' },
    { name: 'without a path, the first KUBECONFIG entry is used', conn: { type: 'kubeconfig' }, env: { KUBECONFIG: `${kubeconfig}:/nope` }, server: 'https://10.0.0.1:6443' },
    {
      name: 'in-cluster reads the service host and port and the mounted token',
      conn: { type: 'in-cluster' },
      env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' },
      exists: (p) => p === SERVICE_ACCOUNT_TOKEN,
      server: 'https://[fd00::1]:443',
    },
  ];
  for (const tc of ok) {
    it(tc.name, () => {
      const kc = buildKubeConfig(tc.conn, { env: tc.env ?? {}, ...(tc.exists ? { fileExists: tc.exists } : {}) });
      expect(serverOf(kc)).toBe(tc.server);
    });
  }

  const bad: { name: string; conn: KubeConnection; env?: Record<string, string>; exists?: (p: string) => boolean; message: RegExp }[] = [
    { name: 'a server value that is not a URL', conn: { type: 'server', url: 'localhost:8001' }, message: /^server URL: "localhost:8001" must use http or https/ },
    { name: 'a server value that does not parse', conn: { type: 'server', url: 'http://' }, message: /^server URL: .* is not a URL/ },
    { name: 'a kubeconfig that does not exist', conn: { type: 'kubeconfig', path: join(dir, 'missing') }, message: /^kubeconfig: .*missing does not exist/ },
    { name: 'a kubeconfig that is not YAML', conn: { type: 'kubeconfig', path: garbage }, message: /^kubeconfig: .*garbage cannot be read/ },
    { name: 'an unknown context lists the known ones', conn: { type: 'kubeconfig', path: kubeconfig, context: 'staging' }, message: /^context: "staging" is not in .* \(contexts: dev, prod, broken\)/ },
    { name: 'a context naming no cluster', conn: { type: 'kubeconfig', path: kubeconfig, context: 'broken' }, message: /^context: context "broken" .* names no known cluster/ },
    { name: 'a kubeconfig without current context', conn: { type: 'kubeconfig', path: noContext }, message: /^context: .* has no current-context/ },
    { name: 'no kubeconfig path and no HOME', conn: { type: 'kubeconfig' }, message: /^kubeconfig: no path given/ },
    { name: 'in-cluster outside a pod', conn: { type: 'in-cluster' }, message: /^in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset/ },
    {
      name: 'in-cluster without a mounted token',
      conn: { type: 'in-cluster' },
      env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' },
      exists: () => false,
      message: /^in-cluster: .*token is missing/,
    },
  ];
  for (const tc of bad) {
    it(`fails clearly on ${tc.name}`, () => {
      const run = () => buildKubeConfig(tc.conn, { env: tc.env ?? {}, ...(tc.exists ? { fileExists: tc.exists } : {}) });
      expect(run).toThrow(KubeConfigError);
      expect(run).toThrow(tc.message);
    });
  }
});
