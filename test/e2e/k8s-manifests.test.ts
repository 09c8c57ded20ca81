// infra/k8s, checked on every test run without a cluster. Each install (the default, both overlays
// and the base) is rendered by the real `kubectl kustomize`; every object is validated against the
// Kubernetes API's schemas (kubernetes-models, offline: `kubectl apply --dry-run=client` needs an
// API server for discovery, which a test run does not have); then our own rules: least-privilege
// RBAC derived from what the watcher lists, one ServiceAccount per service, probes on the health
// port each service's own config parses, requests on every container, non-root everywhere except
// the agent with a real backend, every env variable one that the service's config reads, and NATS
// locked down: each workload mounts only its own role's seed from the keys' Secret, which a copy of
// infra/k8s gets from the `slicemesh nats-auth` command infra/k8s/README.md gives (so a fresh
// clone, without keys, renders too), and the self-contained NATS includes their block.
// test/e2e/k8s-manifests.k3s.e2e.test.ts installs the default into k3s where that is possible.

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { DaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import type { IClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import type { IClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import type { IPodTemplateSpec } from 'kubernetes-models/v1/PodTemplateSpec';
import type { IProbe } from 'kubernetes-models/v1/Probe';
import { Secret } from 'kubernetes-models/v1/Secret';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import type { IService } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import type { IServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { hintsConfig } from '@slicemesh/hints';
import { KIND_PATHS } from '@slicemesh/kube';
import { mcsConfig } from '@slicemesh/mcs';
import { publisherConfig } from '@slicemesh/publisher';
import { parseProxyAgentConfig, proxyAgentConfig } from '@slicemesh/proxy-agent';
import { resolveSlicerSettings, slicerConfig } from '@slicemesh/slicer';
import { watcherConfig } from '@slicemesh/watcher';
import type { NatsRole } from '@slicemesh/nats';
import { natsAuthenticator } from '@slicemesh/nats';
import { REPO_ROOT } from '../../services/stack/src/index.ts';
import { copyInfraK8sWithKeys } from './support/nats-auth-files.ts';
import { PROGRAMS } from '../../scripts/build.ts';
import { natsServerBinary } from './support/nats-servers.ts';

// ---------------------------------------------------------------------------------------------
// What each install must render

/** Sample values for the Secret the external install expects the user to create. */
const USER_BACKENDS = {
  'slicemesh-backends': { NATS_URL: 'nats://nats.example.com:4222', DATABASE_URL: 'postgres://slicemesh:secret@db.example.com:5432/slicemesh' },
};
const CONTROL_PLANE: Readonly<Record<string, number>> = { Namespace: 1, ServiceAccount: 6, ClusterRole: 2, ClusterRoleBinding: 2, ConfigMap: 1, Secret: 1, Deployment: 5, DaemonSet: 1 };
const SELF_CONTAINED: Readonly<Record<string, number>> = { ...CONTROL_PLANE, ConfigMap: 2, Secret: 3, Service: 2, StatefulSet: 2 };

interface Install {
  readonly dir: string;
  readonly what: string;
  readonly kinds: Readonly<Record<string, number>>;
  /** NATS and Postgres inside the install, or reached through URLs the user provides. */
  readonly servers: 'inside' | 'outside';
  /** Secrets the pods read that the user creates (sample contents); everything else must render. */
  readonly userSecrets: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

const INSTALLS: readonly Install[] = [
  { dir: 'infra/k8s', what: 'the default install (self-contained)', kinds: SELF_CONTAINED, servers: 'inside', userSecrets: {} },
  { dir: 'infra/k8s/overlays/self-contained', what: 'the self-contained overlay', kinds: SELF_CONTAINED, servers: 'inside', userSecrets: {} },
  { dir: 'infra/k8s/overlays/external', what: 'the external overlay', kinds: CONTROL_PLANE, servers: 'outside', userSecrets: USER_BACKENDS },
  { dir: 'infra/k8s/base', what: 'the base', kinds: CONTROL_PLANE, servers: 'outside', userSecrets: USER_BACKENDS },
];

const NAMESPACE = 'slicemesh';
const IMAGE = 'slicemesh:latest';

// ---------------------------------------------------------------------------------------------
// Rendering and schema validation

interface K8sObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly labels?: Readonly<Record<string, string>> };
}

/** The API schema of every kind we ship; a kind missing here fails the test until it is added. */
const SCHEMAS: Readonly<Record<string, (o: unknown) => void>> = {
  'v1/Namespace': (o) => new Namespace(o as never).validate(),
  'v1/ServiceAccount': (o) => new ServiceAccount(o as never).validate(),
  'v1/ConfigMap': (o) => new ConfigMap(o as never).validate(),
  'v1/Secret': (o) => new Secret(o as never).validate(),
  'v1/Service': (o) => new Service(o as never).validate(),
  'apps/v1/Deployment': (o) => new Deployment(o as never).validate(),
  'apps/v1/DaemonSet': (o) => new DaemonSet(o as never).validate(),
  'apps/v1/StatefulSet': (o) => new StatefulSet(o as never).validate(),
  'rbac.authorization.k8s.io/v1/ClusterRole': (o) => new ClusterRole(o as never).validate(),
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': (o) => new ClusterRoleBinding(o as never).validate(),
  'rbac.authorization.k8s.io/v1/Role': (o) => new Role(o as never).validate(),
  'rbac.authorization.k8s.io/v1/RoleBinding': (o) => new RoleBinding(o as never).validate(),
};

function validate(rendered: K8sObject): void {
  // kustomize folds a long Secret value's base64 over several lines; the API server's decoder (Go's
  // base64) skips the line breaks, the schema's "byte" format does not.
  const data = (rendered as { data?: Record<string, string> }).data;
  const o = rendered.kind === 'Secret' && data !== undefined ? ({ ...rendered, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, v.replace(/\s+/g, '')])) } as K8sObject) : rendered;
  const schema = SCHEMAS[`${o.apiVersion}/${o.kind}`];
  if (schema === undefined) throw new Error(`${o.apiVersion} ${o.kind} ${o.metadata.name}: no schema in this test; add its kubernetes-models class to SCHEMAS`);
  try {
    schema(o);
  } catch (err) {
    throw new Error(`${o.kind} ${o.metadata.name}: ${(err as Error).message}`, { cause: err });
  }
}

/** A copy of infra/k8s with NATS keys made as its README says (a fresh clone has none). */
const K8S_COPY = await copyInfraK8sWithKeys(mkdtempSync(join(tmpdir(), 'k8s-manifests-')));

function kustomize(dir: string): K8sObject[] {
  let text: string;
  try {
    text = execFileSync('kubectl', ['kustomize', join(K8S_COPY, dir)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { code?: string; stderr?: string };
    if (e.code === 'ENOENT') throw new Error('kubectl is not on PATH: these checks render infra/k8s with `kubectl kustomize` (install kubectl)', { cause: err });
    throw new Error(`kubectl kustomize ${dir} failed: ${e.stderr ?? String(err)}`, { cause: err });
  }
  return parseAllDocuments(text).map((d) => d.toJS() as K8sObject);
}

// ---------------------------------------------------------------------------------------------
// The services, their configs and the image

interface Settings {
  readonly healthPort: number;
  readonly cluster: string;
  readonly natsUrl: string;
  readonly partitions?: number;
  readonly databaseUrl?: string;
  readonly svcBucket?: string;
  readonly viewsBucket?: string;
  readonly hintedBucket?: string;
  readonly source?: string;
  readonly backend?: string;
  readonly healthCheckServers?: string;
  readonly exportsDomain?: string;
  readonly natsJsDomain?: string;
}
type Env = Record<string, string>;

/** Each program's env variable names and its parser, the ones the program itself runs. */
const SERVICES: Readonly<Record<string, { readonly envNames: ReadonlySet<string>; readonly parse: (env: Env) => Settings }>> = {
  watcher: { envNames: envNamesOf(watcherConfig.spec), parse: (env) => watcherConfig.parse([], env) },
  slicer: {
    envNames: envNamesOf(slicerConfig.spec),
    parse: (env) => {
      const c = slicerConfig.parse([], env);
      resolveSlicerSettings(c);
      return c;
    },
  },
  hints: { envNames: envNamesOf(hintsConfig.spec), parse: (env) => hintsConfig.parse([], env) },
  'proxy-agent': { envNames: envNamesOf(proxyAgentConfig.spec), parse: (env) => parseProxyAgentConfig([], env) },
  publisher: { envNames: envNamesOf(publisherConfig.spec), parse: (env) => publisherConfig.parse([], env) },
  mcs: { envNames: envNamesOf(mcsConfig.spec), parse: (env) => mcsConfig.parse([], env) },
};

function envNamesOf(spec: Readonly<Record<string, { readonly env?: string }>>): ReadonlySet<string> {
  return new Set(Object.values(spec).flatMap((f) => (f.env === undefined ? [] : [f.env])));
}

/**
 * Variables a driver reads beside the config, each allowed only beside the setting it completes:
 * node-postgres (libs/db) takes PGPASSWORD when DATABASE_URL carries no password.
 */
const DRIVER_ENV: Readonly<Record<string, string>> = { PGPASSWORD: 'DATABASE_URL' };

/** What the image's final stage sets with ENV (HEALTH_PORT among them): the container's env goes on top. */
const IMAGE_ENV: Env = (() => {
  const dockerfile = readFileSync(join(REPO_ROOT, 'infra/Dockerfile'), 'utf8');
  const final = dockerfile.split(/^FROM /m).at(-1) ?? '';
  const env: Env = {};
  for (const line of final.split('\n').filter((l) => l.startsWith('ENV '))) {
    for (const pair of line.slice(4).trim().split(/\s+/)) {
      const eq = pair.indexOf('=');
      if (eq > 0) env[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
  }
  return env;
})();

const SAMPLE_NODE = 'node-1';

// ---------------------------------------------------------------------------------------------
// Views of a rendered install

interface Workload extends K8sObject {
  readonly spec: { readonly replicas?: number; readonly strategy?: { readonly type?: string }; readonly selector: { readonly matchLabels?: Readonly<Record<string, string>> }; readonly template: IPodTemplateSpec; readonly volumeClaimTemplates?: readonly unknown[] };
}

interface OurContainer {
  readonly workload: Workload;
  readonly pod: IPodSpec;
  readonly container: IContainer;
  readonly program: string;
  readonly env: Env;
  readonly settings: Settings;
}

class Rendered {
  readonly objects: readonly K8sObject[];
  readonly install: Install;
  constructor(install: Install) {
    this.install = install;
    this.objects = kustomize(install.dir);
  }
  all<T extends K8sObject>(kind: string): T[] {
    return this.objects.filter((o) => o.kind === kind) as T[];
  }
  one<T extends K8sObject>(kind: string, name: string): T | undefined {
    return this.all<T>(kind).find((o) => o.metadata.name === name);
  }
  workloads(): Workload[] {
    return this.objects.filter((o) => ['Deployment', 'DaemonSet', 'StatefulSet'].includes(o.kind)) as Workload[];
  }
  /** Every container running one of our programs, with its env resolved and parsed by that program's config. */
  ours(): OurContainer[] {
    return this.workloads().flatMap((workload) => {
      const pod = workload.spec.template.spec ?? { containers: [] };
      return pod.containers
        .filter((c) => c.image === IMAGE)
        .map((container) => {
          const program = /^dist\/([a-z-]+)\.js$/.exec(container.args?.[0] ?? '')?.[1] ?? '';
          const service = SERVICES[program];
          if (service === undefined) throw new Error(`${workload.metadata.name}: ${String(container.args?.[0])} is not a service with a config`);
          const env = this.envOf(container);
          return { workload, pod, container, program, env, settings: service.parse({ ...IMAGE_ENV, ...env }) };
        });
    });
  }
  /** A container's env as the kubelet would give it (ConfigMaps and Secrets looked up, user Secrets from the samples). */
  envOf(c: IContainer): Env {
    const env: Env = {};
    for (const e of c.env ?? []) {
      const from = e.valueFrom;
      if (from === undefined) env[e.name] = e.value ?? '';
      else if (from.fieldRef !== undefined) {
        if (from.fieldRef.fieldPath !== 'spec.nodeName') throw new Error(`${e.name}: field ${from.fieldRef.fieldPath} has no sample`);
        env[e.name] = SAMPLE_NODE;
      } else if (from.configMapKeyRef !== undefined) {
        const { name = '', key } = from.configMapKeyRef;
        const value = this.one<IConfigMap & K8sObject>('ConfigMap', name)?.data?.[key];
        if (value === undefined) throw new Error(`${e.name}: ConfigMap ${name} key ${key} is not rendered`);
        env[e.name] = value;
      } else if (from.secretKeyRef !== undefined) {
        env[e.name] = this.secretValue(from.secretKeyRef.name ?? '', from.secretKeyRef.key, e.name);
      } else throw new Error(`${e.name}: a valueFrom this test cannot resolve`);
    }
    return env;
  }
  secretValue(name: string, key: string, what: string): string {
    const secret = this.one<ISecret & K8sObject>('Secret', name);
    if (secret !== undefined) {
      const value = secret.stringData?.[key] ?? (secret.data?.[key] === undefined ? undefined : Buffer.from(secret.data[key], 'base64').toString('utf8'));
      if (value === undefined) throw new Error(`${what}: Secret ${name} has no key ${key}`);
      return value;
    }
    const value = this.install.userSecrets[name]?.[key];
    if (value === undefined) throw new Error(`${what}: Secret ${name} key ${key} is neither rendered nor one the user is told to create`);
    return value;
  }
  program(name: string): OurContainer {
    const found = this.ours().filter((c) => c.program === name);
    if (found.length !== 1) throw new Error(`expected one ${name} container, found ${found.length}`);
    return found[0] as OurContainer;
  }
}

const RENDERED = new Map(INSTALLS.map((i) => [i.dir, new Rendered(i)]));
const rendered = (install: Install): Rendered => RENDERED.get(install.dir) as Rendered;

const containersOf = (w: Workload): IContainer[] => [...(w.spec.template.spec?.initContainers ?? []), ...(w.spec.template.spec?.containers ?? [])];

/** The port number a probe asks, with a named port resolved through the container's ports. */
function probePort(c: IContainer, probe: IProbe | undefined): number | undefined {
  const port = probe?.httpGet?.port;
  if (typeof port === 'number') return port;
  return c.ports?.find((p) => p.name === port)?.containerPort;
}

function hostAndPort(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port) };
}

/** The Services that select a workload's pods. */
function servicesOf(r: Rendered, name: string, port: number): { service: IService & K8sObject; workload: Workload }[] {
  return r
    .all<IService & K8sObject>('Service')
    .filter((s) => s.metadata.name === name && (s.spec?.ports ?? []).some((p) => p.port === port))
    .flatMap((service) => {
      const selector = Object.entries(service.spec?.selector ?? {});
      return r
        .workloads()
        .filter((w) => selector.length > 0 && selector.every(([k, v]) => w.spec.template.metadata?.labels?.[k] === v))
        .map((workload) => ({ service, workload }));
    });
}

/** `1MB` and friends in a NATS configuration (binary units, as nats-server reads them). */
function natsBytes(text: string): number {
  const m = /^(\d+)\s*([KMG]?)B?$/i.exec(text.trim());
  if (m === null) throw new Error(`not a NATS size: ${text}`);
  return Number(m[1]) * 1024 ** ['', 'K', 'M', 'G'].indexOf((m[2] ?? '').toUpperCase());
}

/** The NATS StatefulSet's configuration volume (projected): nats.conf and the files beside it, by path. */
function natsConfigFiles(r: Rendered): { volume: string; files: Record<string, string> } {
  const nats = r.one<Workload>('StatefulSet', 'nats') as Workload;
  const volume = nats.spec.template.spec?.volumes?.find((v) => v.projected !== undefined);
  const files: Record<string, string> = {};
  for (const source of volume?.projected?.sources ?? []) {
    if (source.configMap !== undefined) Object.assign(files, r.one<IConfigMap & K8sObject>('ConfigMap', source.configMap.name ?? '')?.data ?? {});
    for (const item of source.secret?.items ?? []) files[item.path] = r.secretValue(source.secret?.name ?? '', item.key, item.path);
  }
  return { volume: volume?.name ?? '', files };
}

/** The NATS role each program logs in as. */
const ROLE_OF: Readonly<Record<string, NatsRole>> = { watcher: 'watcher', slicer: 'slicer', hints: 'hints', publisher: 'publisher', mcs: 'mcs', 'proxy-agent': 'agent' };

/** The rendered name of the keys' Secret (the base's secretGenerator slicemesh-nats-auth, hash-suffixed). */
function keysSecret(r: Rendered): string {
  const names = r.all('Secret').map((x) => x.metadata.name).filter((n) => /^slicemesh-nats-auth-[a-z0-9]+$/.test(n));
  if (names.length !== 1) throw new Error(`expected one Secret slicemesh-nats-auth-<hash>, found ${names.join(', ') || 'none'}`);
  return names[0] as string;
}

/** The public key a seed signs with, as the server checks it against auth.conf. */
function publicKeyOf(seed: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'k8s-seed-')), 'seed.nk');
  writeFileSync(file, seed, { mode: 0o600 });
  return (natsAuthenticator({ nkeySeedFile: file })?.('nonce') as { nkey: string }).nkey;
}

// ---------------------------------------------------------------------------------------------

describe('infra/k8s renders into valid Kubernetes objects', () => {
  for (const install of INSTALLS) {
    it(`${install.dir} (${install.what}) renders ${Object.values(install.kinds).reduce((a, b) => a + b, 0)} objects of the expected kinds`, () => {
      const counts: Record<string, number> = {};
      for (const o of rendered(install).objects) counts[o.kind] = (counts[o.kind] ?? 0) + 1;
      expect(counts).toEqual(install.kinds);
    });

    it(`${install.dir}: every object passes the API schema of its kind`, () => {
      for (const o of rendered(install).objects) expect(() => validate(o), `${o.kind} ${o.metadata.name}`).not.toThrow();
    });

    it(`${install.dir}: every namespaced object is in the ${NAMESPACE} namespace, which it creates`, () => {
      const r = rendered(install);
      expect(r.one('Namespace', NAMESPACE)).toBeDefined();
      for (const o of r.objects.filter((x) => !['Namespace', 'ClusterRole', 'ClusterRoleBinding'].includes(x.kind))) expect(o.metadata.namespace, `${o.kind} ${o.metadata.name}`).toBe(NAMESPACE);
    });
  }

  it('the schema check rejects a wrong type and a missing required field (it can fail)', () => {
    const deployment = rendered(INSTALLS[0] as Install).one<Workload>('Deployment', 'slicer') as Workload;
    const wrongType = structuredClone(deployment) as unknown as IDeployment;
    (wrongType.spec?.template.spec?.containers[0]?.ports?.[0] as { containerPort: unknown }).containerPort = '9102';
    expect(() => validate(wrongType as unknown as K8sObject)).toThrow(/containerPort must be integer/);
    const noImage = structuredClone(deployment) as unknown as IDeployment;
    delete (noImage.spec?.template.spec?.containers[0] as { name?: string }).name;
    expect(() => validate(noImage as unknown as K8sObject)).toThrow(/must have required property name/);
    expect(() => validate({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' } })).toThrow(/no schema in this test/);
  });
});

describe('infra/k8s: least-privilege RBAC and one ServiceAccount per service', () => {
  /** What the watcher lists and watches (libs/kube), as one list+watch RBAC rule per API group ('' is core). */
  const WATCHED = (() => {
    const byGroup = new Map<string, string[]>();
    for (const path of Object.values(KIND_PATHS)) {
      const m = /^\/api\/v1\/([a-z]+)$/.exec(path) ?? /^\/apis\/([a-z0-9.-]+)\/v[0-9a-z]+\/([a-z]+)$/.exec(path);
      if (m === null) throw new Error(`unexpected path ${path}`);
      const [group, resource] = m.length === 2 ? ['', m[1] as string] : [m[1] as string, m[2] as string];
      byGroup.set(group, [...(byGroup.get(group) ?? []), resource]);
    }
    return [...byGroup].map(([group, resources]) => ({ apiGroups: [group], resources: resources.sort(), verbs: ['list', 'watch'] })).sort((a, b) => (a.apiGroups[0] as string).localeCompare(b.apiGroups[0] as string));
  })();

  for (const install of INSTALLS) {
    it(`${install.dir}: no role grants a wildcard verb, resource or API group`, () => {
      const roles = rendered(install).objects.filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role') as (IClusterRole & K8sObject)[];
      expect(roles.length).toBeGreaterThan(0);
      for (const role of roles) {
        for (const rule of role.rules ?? []) {
          for (const field of [rule.verbs, rule.resources ?? [], rule.apiGroups ?? [], rule.resourceNames ?? [], rule.nonResourceURLs ?? []]) {
            expect(field.filter((x) => x.includes('*')), `${role.kind} ${role.metadata.name}`).toEqual([]);
          }
        }
      }
    });

    it(`${install.dir}: only the watcher and the publisher may use the API: the watcher lists and watches exactly what libs/kube watches, the publisher reads and writes EndpointSlices`, () => {
      const r = rendered(install);
      const bindings = r.objects.filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding') as (IClusterRoleBinding & K8sObject)[];
      const bound = bindings.flatMap((b) => (b.subjects ?? []).map((s) => ({ binding: b, subject: s })));
      expect(bound.map(({ subject }) => `${subject.kind} ${subject.namespace}/${subject.name}`).sort()).toEqual([`ServiceAccount ${NAMESPACE}/publisher`, `ServiceAccount ${NAMESPACE}/watcher`]);
      const rulesOf = (account: string) => {
        const binding = bound.find(({ subject }) => subject.name === account)?.binding as IClusterRoleBinding & K8sObject;
        expect(binding.kind, `${account} is bound cluster-wide (it works in every namespace)`).toBe('ClusterRoleBinding');
        const role = r.one<IClusterRole & K8sObject>(binding.roleRef.kind, binding.roleRef.name);
        return (role?.rules ?? []).map((x) => ({ apiGroups: x.apiGroups, resources: [...(x.resources ?? [])].sort(), verbs: x.verbs })).sort((a, b) => (a.apiGroups?.[0] ?? '').localeCompare(b.apiGroups?.[0] ?? ''));
      };
      expect(rulesOf('watcher')).toEqual(WATCHED);
      // Slices: read before deciding (a GET, or one paged list per busy namespace), then create, PUT or delete.
      // Events: create, and patch the count of a repeated one. ServiceExports: patch the status mcs decided.
      // ServiceImports: the ones mcs computes, written whole (status included) and deleted when gone.
      expect(rulesOf('publisher')).toEqual([
        { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
        { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'create', 'update', 'delete'] },
        { apiGroups: ['multicluster.x-k8s.io'], resources: ['serviceexports/status'], verbs: ['patch'] },
        { apiGroups: ['multicluster.x-k8s.io'], resources: ['serviceimports'], verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'] },
        { apiGroups: ['multicluster.x-k8s.io'], resources: ['serviceimports/status'], verbs: ['patch', 'update'] },
      ]);
    });

    it(`${install.dir}: every Deployment and DaemonSet runs as its own ServiceAccount; pods without a role mount no token`, () => {
      const r = rendered(install);
      const bound = new Set(
        (r.objects.filter((o) => o.kind.endsWith('RoleBinding')) as (IClusterRoleBinding & K8sObject)[]).flatMap((b) => (b.subjects ?? []).map((s) => s.name)),
      );
      const accounts = r.workloads().filter((w) => w.kind !== 'StatefulSet').map((w) => w.spec.template.spec?.serviceAccountName);
      expect(new Set(accounts).size, 'no two services share an account').toBe(accounts.length);
      for (const w of r.workloads()) {
        const pod = w.spec.template.spec as IPodSpec;
        const name = pod.serviceAccountName ?? 'default';
        if (w.kind !== 'StatefulSet') {
          expect(name, `${w.kind} ${w.metadata.name}`).not.toBe('default');
          expect(r.one('ServiceAccount', name), `ServiceAccount ${name}`).toBeDefined();
        }
        if (bound.has(name)) continue;
        const account = r.one<IServiceAccount & K8sObject>('ServiceAccount', name);
        const mounts = pod.automountServiceAccountToken ?? account?.automountServiceAccountToken ?? true;
        expect(mounts, `${w.kind} ${w.metadata.name} (${name}) has no role, so no token`).toBe(false);
      }
    });
  }
});

describe('infra/k8s: each service runs its program with settings its own config accepts', () => {
  for (const install of INSTALLS) {
    it(`${install.dir}: the watcher, slicer, hints, publisher and mcs are Deployments and the agent a DaemonSet, each \`node dist/<name>.js\` of ${IMAGE}`, () => {
      const r = rendered(install);
      expect(r.ours().map((c) => `${c.workload.kind} ${c.program}`).sort()).toEqual(['DaemonSet proxy-agent', 'Deployment hints', 'Deployment mcs', 'Deployment publisher', 'Deployment slicer', 'Deployment watcher']);
      for (const { container, program } of r.ours()) {
        expect(container.command, 'the image\'s ENTRYPOINT is node').toBeUndefined();
        expect(container.args).toEqual([`dist/${program}.js`]);
        expect(PROGRAMS[program], 'a program scripts/build.ts writes').toBeDefined();
      }
    });

    it(`${install.dir}: every env variable is one the service's config (or its Postgres driver) reads, and the env parses`, () => {
      for (const { container, program, env } of rendered(install).ours()) {
        const names = SERVICES[program]?.envNames ?? new Set<string>();
        for (const name of Object.keys(env)) {
          const completes = DRIVER_ENV[name];
          const known = names.has(name) || (completes !== undefined && names.has(completes) && env[completes] !== undefined);
          expect(known, `${program} sets ${name}, which ${program} does not read`).toBe(true);
        }
        expect(container.env?.length, `${program}: no duplicate variables`).toBe(Object.keys(env).length);
      }
    });

    it(`${install.dir}: /readyz and /healthz are probed on the HEALTH_PORT each service parses`, () => {
      for (const { container, program, settings } of rendered(install).ours()) {
        expect(container.readinessProbe?.httpGet?.path, program).toBe('/readyz');
        expect(container.livenessProbe?.httpGet?.path, program).toBe('/healthz');
        expect(probePort(container, container.readinessProbe), `${program} readiness port`).toBe(settings.healthPort);
        expect(probePort(container, container.livenessProbe), `${program} liveness port`).toBe(settings.healthPort);
      }
    });

    it(`${install.dir}: the services agree on the cluster, NATS, Postgres, the partitions and the buckets`, () => {
      const r = rendered(install);
      const all = r.ours().map((c) => c.settings);
      expect(new Set(all.map((s) => s.cluster)).size).toBe(1);
      expect(new Set(all.map((s) => s.natsUrl)).size).toBe(1);
      expect(r.program('watcher').settings.partitions).toBe(r.program('slicer').settings.partitions);
      expect(r.program('slicer').settings.databaseUrl).toBe(r.program('hints').settings.databaseUrl);
      expect(r.program('publisher').settings.databaseUrl).toBe(r.program('slicer').settings.databaseUrl);
      expect(r.program('proxy-agent').settings.svcBucket).toBe(r.program('hints').settings.svcBucket);
      expect(r.program('proxy-agent').settings.viewsBucket).toBe(r.program('hints').settings.viewsBucket);
      // The mcs writes its imports where the agents read and reads the slices the hints service finished.
      for (const bucket of ['svcBucket', 'viewsBucket', 'hintedBucket'] as const) expect(r.program('mcs').settings[bucket], bucket).toBe(r.program('hints').settings[bucket]);
      // The publisher writes the slices the hints service finished, hints included.
      expect(r.program('publisher').settings.source).toBe('hinted');
      expect(r.program('publisher').settings.hintedBucket).toBe(r.program('hints').settings.hintedBucket);
    });

    it(`${install.dir}: the mcs keeps the exports bucket on this install's own NATS and reads its own cluster's buckets there (see base/mcs.yaml for a cluster set behind a hub)`, () => {
      const { settings } = rendered(install).program('mcs');
      expect(settings.exportsDomain).toBeUndefined();
      expect(settings.natsJsDomain).toBeUndefined();
    });

    it(`${install.dir}: the watcher, slicer, hints, publisher and mcs run one replica each and are never two at once (Recreate)`, () => {
      for (const { workload, program } of rendered(install).ours().filter((c) => c.workload.kind === 'Deployment')) {
        expect(workload.spec.replicas ?? 1, program).toBe(1);
        expect(workload.spec.strategy?.type, program).toBe('Recreate');
      }
    });

    it(`${install.dir}: the agent leaves a running kube-proxy alone: its own nftables table, no health-check node ports, not port 10256`, () => {
      const { settings } = rendered(install).program('proxy-agent');
      expect(settings.backend).toBe('nftables');
      expect(settings.healthCheckServers).toBe('off');
      expect(settings.healthPort).not.toBe(10256);
    });

    it(`${install.dir}: the agent takes NODE_NAME from the downward API and sets no NODE_ZONE (see infra/k8s/README.md)`, () => {
      const agent = rendered(install).program('proxy-agent');
      expect(agent.container.env?.find((e) => e.name === 'NODE_NAME')?.valueFrom?.fieldRef?.fieldPath).toBe('spec.nodeName');
      expect(agent.env['NODE_ZONE']).toBeUndefined();
    });
  }
});

describe('infra/k8s: NATS locked down, a key per role', () => {
  for (const install of INSTALLS) {
    it(`${install.dir}: each workload mounts only its own role's seed from the keys' Secret, read-only, and NATS_NKEY_SEED_FILE names it`, () => {
      const r = rendered(install);
      const secret = keysSecret(r);
      for (const { pod, container, program, env, settings } of r.ours()) {
        const seed = env['NATS_NKEY_SEED_FILE'] ?? '';
        const mount = container.volumeMounts?.find((m) => seed.startsWith(`${m.mountPath}/`));
        expect(mount, `${program}: ${seed} lies in a mount`).toBeDefined();
        expect(mount?.readOnly, program).toBe(true);
        const volume = pod.volumes?.find((v) => v.name === mount?.name);
        expect(volume?.secret?.secretName, program).toBe(secret);
        expect(volume?.secret?.items, program).toEqual([{ key: `${ROLE_OF[program] ?? '?'}.nk`, path: posix.relative(mount?.mountPath ?? '', seed) }]);
        expect((pod.volumes ?? []).filter((v) => v.secret?.secretName === secret || v.projected !== undefined).length, `${program}: one volume of the keys`).toBe(1);
        expect((settings as Settings & { natsNkeySeedFile?: string }).natsNkeySeedFile, program).toBe(seed);
        // Readable by the service's user: the agent is root, the others read through their group.
        const sc = { ...pod.securityContext, ...container.securityContext };
        if (sc.runAsUser !== 0) expect([pod.securityContext?.fsGroup, (volume?.secret?.defaultMode ?? 0o644) & 0o040], program).toEqual([sc.runAsGroup, 0o040]);
      }
    });

    it(`${install.dir}: the keys' Secret holds the service roles' seeds and their block, scoped to CLUSTER; no reader's or admin's seed`, () => {
      const r = rendered(install);
      const secret = r.one<ISecret & K8sObject>('Secret', keysSecret(r));
      expect(Object.keys(secret?.data ?? {}).sort()).toEqual(['agent.nk', 'auth.conf', 'hints.nk', 'mcs.nk', 'publisher.nk', 'slicer.nk', 'watcher.nk']);
      const conf = r.secretValue(keysSecret(r), 'auth.conf', 'auth.conf');
      const { cluster } = r.program('watcher').settings;
      expect(conf).toContain(`cluster "${cluster}"`);
      expect(conf).toContain(`"kube.${cluster}.>"`);
      for (const role of ['watcher', 'slicer', 'hints', 'publisher', 'mcs', 'agent']) {
        const nkey = publicKeyOf(r.secretValue(keysSecret(r), `${role}.nk`, role));
        expect(conf, role).toContain(`# ${role}\n    { nkey: "${nkey}"`);
      }
    });
  }
});

describe('infra/k8s: pods are sized and locked down', () => {
  for (const install of INSTALLS) {
    it(`${install.dir}: every container requests CPU and memory and has a memory limit`, () => {
      for (const w of rendered(install).workloads()) {
        for (const c of containersOf(w)) {
          expect(c.resources?.requests?.['cpu'], `${w.metadata.name}/${c.name}`).toBeDefined();
          expect(c.resources?.requests?.['memory'], `${w.metadata.name}/${c.name}`).toBeDefined();
          expect(c.resources?.limits?.['memory'], `${w.metadata.name}/${c.name}`).toBeDefined();
        }
      }
    });

    it(`${install.dir}: every container has a readiness and a liveness probe, and selectors match their pods`, () => {
      for (const w of rendered(install).workloads()) {
        for (const c of containersOf(w)) {
          expect(c.readinessProbe, `${w.metadata.name}/${c.name}`).toBeDefined();
          expect(c.livenessProbe, `${w.metadata.name}/${c.name}`).toBeDefined();
        }
        const labels = w.spec.template.metadata?.labels ?? {};
        for (const [k, v] of Object.entries(w.spec.selector.matchLabels ?? {})) expect(labels[k], `${w.metadata.name} selector ${k}`).toBe(v);
      }
    });

    it(`${install.dir}: everything runs as non-root without privilege, except the agent with a real backend (root, NET_ADMIN, host network)`, () => {
      const r = rendered(install);
      const agents = new Map(r.ours().filter((c) => c.program === 'proxy-agent').map((c) => [c.container, c]));
      for (const w of r.workloads()) {
        const pod = w.spec.template.spec as IPodSpec;
        for (const c of containersOf(w)) {
          const at = `${w.metadata.name}/${c.name}`;
          const sc = { ...pod.securityContext, ...c.securityContext };
          const agent = agents.get(c);
          expect(c.securityContext?.privileged ?? false, at).toBe(false);
          expect(c.securityContext?.allowPrivilegeEscalation, at).toBe(false);
          expect(c.securityContext?.capabilities?.drop, at).toEqual(['ALL']);
          if (agent !== undefined && agent.settings.backend !== 'dry-run') {
            expect(sc.runAsUser, at).toBe(0);
            expect(c.securityContext?.capabilities?.add, at).toEqual(['NET_ADMIN']);
            expect(pod.hostNetwork, at).toBe(true);
            expect(pod.dnsPolicy, `${at}: resolves cluster names on the host network`).toBe('ClusterFirstWithHostNet');
            for (const p of c.ports ?? []) expect(p.hostPort, `${at}: on the host network hostPort equals containerPort`).toBe(p.containerPort);
          } else {
            expect(sc.runAsNonRoot, at).toBe(true);
            // A name (the image's USER node) cannot be checked by the kubelet: the uid must be a number.
            expect(sc.runAsUser, at).toBeGreaterThan(0);
            expect(sc.seccompProfile?.type, at).toBe('RuntimeDefault');
            expect(c.securityContext?.capabilities?.add ?? [], at).toEqual([]);
            expect(pod.hostNetwork ?? false, at).toBe(false);
          }
        }
      }
    });

    it(`${install.dir}: the namespace admits the agent (Pod Security: privileged)`, () => {
      expect(rendered(install).one('Namespace', NAMESPACE)?.metadata.labels?.['pod-security.kubernetes.io/enforce']).toBe('privileged');
    });
  }
});

describe('infra/k8s: where the servers are', () => {
  for (const install of INSTALLS.filter((i) => i.servers === 'inside')) {
    it(`${install.dir}: DATABASE_URL names a Service in front of a StatefulSet on a persistent volume`, () => {
      const r = rendered(install);
      const { databaseUrl = '' } = r.program('slicer').settings;
      const { host, port } = hostAndPort(databaseUrl);
      const backing = servicesOf(r, host, port);
      expect(backing.map((b) => `${b.workload.kind} ${b.workload.metadata.name}`), databaseUrl).toEqual([`StatefulSet ${host}`]);
      expect(backing[0]?.workload.spec.replicas, databaseUrl).toBe(1);
      expect(backing[0]?.workload.spec.volumeClaimTemplates?.length, databaseUrl).toBe(1);
    });

    it(`${install.dir}: NATS is a cluster of 3 servers (a StatefulSet on a volume each, behind a headless Service); NATS_URL lists every one of them, and NATS_REPLICAS=3 everywhere streams or buckets are made`, () => {
      const r = rendered(install);
      const { natsUrl } = r.program('slicer').settings;
      const entries = natsUrl.split(',').map(hostAndPort);
      const [first] = entries;
      const serviceName = first?.host.split('.')[1] ?? '';
      const backing = servicesOf(r, serviceName, first?.port ?? 0);
      expect(backing.map((b) => `${b.workload.kind} ${b.workload.metadata.name}`), natsUrl).toEqual(['StatefulSet nats']);
      const sts = backing[0]?.workload as Workload & { spec: { serviceName?: string; podManagementPolicy?: string } };
      expect(backing[0]?.service.spec?.clusterIP).toBe('None');
      expect(backing[0]?.service.spec?.publishNotReadyAddresses, 'routes must resolve before the servers are ready').toBe(true);
      expect(sts.spec.serviceName).toBe(serviceName);
      expect(sts.spec.replicas).toBe(3);
      expect(sts.spec.podManagementPolicy, 'no server is ready before the cluster forms, so they cannot start one by one').toBe('Parallel');
      expect(sts.spec.volumeClaimTemplates?.length).toBe(1);
      // <pod>.<headless service>: one entry per pod of the StatefulSet, each once.
      expect(entries.map((e) => e.host).sort()).toEqual([0, 1, 2].map((i) => `${sts.metadata.name}-${i}.${serviceName}`));
      for (const e of entries) expect(e.port).toBe(4222);
      const conf = natsConfigFiles(r).files['nats.conf'] ?? '';
      const routes = [...conf.matchAll(/nats-route:\/\/([a-z0-9.-]+):(\d+)/g)].map((m) => `${m[1]}:${m[2]}`).sort();
      expect(routes).toEqual(entries.map((e) => `${e.host}:6222`).sort());
      const container = containersOf(sts)[0] as IContainer;
      expect(container.ports?.find((p) => p.containerPort === 6222)?.name).toBe('cluster');
      expect(backing[0]?.service.spec?.ports?.some((p) => p.port === 6222)).toBe(true);
      // Every server has its own name (its pod's), stable across restarts.
      expect(container.command?.join(' ')).toContain('--server_name $(POD_NAME)');
      expect(container.env?.find((e) => e.name === 'POD_NAME')?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.name');
      expect(conf).not.toMatch(/server_name:/);
      for (const program of ['watcher', 'slicer', 'hints', 'publisher', 'mcs']) expect(r.program(program).env['NATS_REPLICAS'], program).toBe('3');
      for (const program of ['watcher', 'slicer', 'hints', 'publisher', 'mcs']) expect((r.program(program).settings as Settings & { natsReplicas?: number }).natsReplicas, program).toBe(3);
    });

    it(`${install.dir}: the Postgres password is only in a Secret, shared by Postgres and the three services that connect`, () => {
      const r = rendered(install);
      const postgres = containersOf(r.one<Workload>('StatefulSet', 'postgres') as Workload)[0] as IContainer;
      const serverRef = postgres.env?.find((e) => e.name === 'POSTGRES_PASSWORD')?.valueFrom?.secretKeyRef;
      expect(serverRef).toBeDefined();
      expect(r.secretValue(serverRef?.name ?? '', serverRef?.key ?? '', 'POSTGRES_PASSWORD')).not.toBe('');
      for (const program of ['slicer', 'hints', 'publisher']) {
        const c = r.program(program);
        expect(c.container.env?.find((e) => e.name === 'PGPASSWORD')?.valueFrom?.secretKeyRef, program).toEqual(serverRef);
        expect(new URL(c.settings.databaseUrl ?? '').password, `${program}: no password in DATABASE_URL`).toBe('');
      }
      for (const c of r.ours().filter((x) => x.program === 'watcher' || x.program === 'proxy-agent')) expect(c.env['PGPASSWORD'], c.program).toBeUndefined();
    });

    it(`${install.dir}: NATS runs JetStream on its volume and takes the largest object the watcher publishes`, () => {
      const r = rendered(install);
      const nats = r.one<Workload>('StatefulSet', 'nats') as Workload;
      const container = containersOf(nats)[0] as IContainer;
      const { volume, files } = natsConfigFiles(r);
      const conf = files['nats.conf'] ?? '';
      expect(container.command?.join(' ')).toContain('/etc/nats/nats.conf');
      expect(container.volumeMounts?.find((m) => m.name === volume)?.mountPath).toBe('/etc/nats');
      const dataMount = container.volumeMounts?.find((m) => m.name === 'data')?.mountPath ?? '?';
      expect(/store_dir:\s*(\S+)/.exec(conf)?.[1]).toMatch(new RegExp(`^${dataMount}/`));
      const maxPayload = natsBytes(/max_payload:\s*(\S+)/.exec(conf)?.[1] ?? '0');
      const { maxObjectBytes } = watcherConfig.parse([], { ...IMAGE_ENV, ...r.program('watcher').env });
      expect(maxObjectBytes + 16 * 1024).toBeLessThanOrEqual(maxPayload);
    });

    it.skipIf(natsServerBinary() === undefined)(`${install.dir}: nats-server accepts the NATS configuration with what is mounted beside it (nats-server -t)`, () => {
      const dir = mkdtempSync(join(tmpdir(), 'k8s-nats-'));
      for (const [path, text] of Object.entries(natsConfigFiles(rendered(install)).files)) {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), text);
      }
      expect(execFileSync(natsServerBinary() as string, ['-t', '-c', join(dir, 'nats.conf')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })).toBe('');
    });

    it(`${install.dir}: NATS includes the authorization block of the keys' Secret, so clients must log in`, () => {
      const r = rendered(install);
      const { files } = natsConfigFiles(r);
      const includes = [...(files['nats.conf'] ?? '').matchAll(/^\s*include\s+"([^"]+)"/gm)].map((m) => m[1] as string);
      expect(includes).toEqual(['auth/auth.conf']);
      expect(files['auth/auth.conf']).toBe(r.secretValue(keysSecret(r), 'auth.conf', 'auth.conf'));
    });
  }

  for (const install of INSTALLS.filter((i) => i.servers === 'outside')) {
    it(`${install.dir}: runs no servers and renders no Secret but the NATS keys'; the one it reads is the one infra/k8s/README.md tells you to create`, () => {
      const r = rendered(install);
      expect(r.all('StatefulSet')).toEqual([]);
      expect(r.all('Secret').map((x) => x.metadata.name)).toEqual([keysSecret(r)]);
      const readme = readFileSync(join(REPO_ROOT, 'infra/k8s/README.md'), 'utf8');
      const refs = new Set(r.ours().flatMap((c) => (c.container.env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [`${e.valueFrom.secretKeyRef.name}/${e.valueFrom.secretKeyRef.key}`] : []))));
      expect([...refs].sort()).toEqual(['slicemesh-backends/DATABASE_URL', 'slicemesh-backends/NATS_URL']);
      expect(readme).toMatch(/kubectl -n slicemesh create secret generic slicemesh-backends \\\n\s+--from-literal=NATS_URL=\S+ \\\n\s+--from-literal=DATABASE_URL=\S+/);
    });
  }
});
