// Where the API server is and how to authenticate: a plain URL (cluster-sim, or `kubectl proxy`),
// a kubeconfig file and context, or the pod's service account. Every failure is one
// KubeConfigError saying what is missing and how to provide it.

import { existsSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

/** How to reach the API server. */
export type KubeConnection =
  /** An API server that needs no credentials, e.g. cluster-sim or `kubectl proxy`; TLS is not verified. */
  | { readonly type: 'server'; readonly url: string }
  /** A kubeconfig file (default: $KUBECONFIG, then ~/.kube/config) and context (default: its current one). */
  | { readonly type: 'kubeconfig'; readonly path?: string; readonly context?: string }
  /** The service account of the pod the process runs in. */
  | { readonly type: 'in-cluster' };

/** A connection that cannot be built. The message names the setting and the fix. */
export class KubeConfigError extends Error {
  readonly setting: string;
  readonly reason: string;
  override readonly name = 'KubeConfigError';
  constructor(
    setting: string,
    reason: string,
    options?: ErrorOptions,
  ) {
    super(`${setting}: ${reason}`, options);
    this.setting = setting;
    this.reason = reason;
  }
}

/** Paths of the mounted service account (fixed by Kubernetes). */
export const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';
export const SERVICE_ACCOUNT_CA = '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt';

export interface BuildKubeConfigOptions {
  /** Environment for in-cluster and default kubeconfig lookups. Defaults to process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Defaults to fs.existsSync. */
  readonly fileExists?: (path: string) => boolean;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function fromServer(url: string): KubeConfig {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new KubeConfigError('server URL', `${JSON.stringify(url)} is not a URL (e.g. http://127.0.0.1:6443)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new KubeConfigError('server URL', `${JSON.stringify(url)} must use http or https`);
  }
  const kc = new KubeConfig();
  // client-node refuses plain http unless skipTLSVerify is set; the URL form is for
  // credential-less servers only, where verification buys nothing.
  kc.loadFromOptions({
    clusters: [{ name: 'direct', server: url.replace(/\/+$/, ''), skipTLSVerify: true }],
    users: [{ name: 'anonymous' }],
    contexts: [{ name: 'direct', cluster: 'direct', user: 'anonymous' }],
    currentContext: 'direct',
  });
  return kc;
}

function fromKubeconfig(path: string | undefined, context: string | undefined, env: BuildKubeConfigOptions['env'], exists: (p: string) => boolean): KubeConfig {
  const kc = new KubeConfig();
  const file = path ?? env?.['KUBECONFIG']?.split(':').find((p) => p !== '') ?? (env?.['HOME'] ? `${env['HOME']}/.kube/config` : undefined);
  if (file === undefined) throw new KubeConfigError('kubeconfig', 'no path given, KUBECONFIG is unset and there is no home directory');
  if (!exists(file)) throw new KubeConfigError('kubeconfig', `${file} does not exist (set KUBECONFIG, or KUBE_SERVER for cluster-sim)`);
  try {
    kc.loadFromFile(file);
  } catch (err) {
    throw new KubeConfigError('kubeconfig', `${file} cannot be read: ${messageOf(err)}`, { cause: err });
  }
  if (context !== undefined) {
    if (kc.getContextObject(context) === null) {
      const known = kc.getContexts().map((c) => c.name);
      throw new KubeConfigError('context', `${JSON.stringify(context)} is not in ${file} (contexts: ${known.join(', ') || 'none'})`);
    }
    kc.setCurrentContext(context);
  }
  if (!kc.getCurrentContext()) throw new KubeConfigError('context', `${file} has no current-context; pick one with KUBE_CONTEXT`);
  if (kc.getCurrentCluster() === null) throw new KubeConfigError('context', `context ${JSON.stringify(kc.getCurrentContext())} in ${file} names no known cluster`);
  return kc;
}

function fromCluster(env: BuildKubeConfigOptions['env'], exists: (p: string) => boolean): KubeConfig {
  const host = env?.['KUBERNETES_SERVICE_HOST'];
  const port = env?.['KUBERNETES_SERVICE_PORT'];
  if (!host || !port) {
    throw new KubeConfigError('in-cluster', 'KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset: not running in a pod (use KUBECONFIG or KUBE_SERVER)');
  }
  if (!exists(SERVICE_ACCOUNT_TOKEN)) throw new KubeConfigError('in-cluster', `${SERVICE_ACCOUNT_TOKEN} is missing: the pod mounts no service account token`);
  // As client-node's loadFromCluster, but from the injected environment; the tokenFile
  // provider re-reads the token, which Kubernetes rotates.
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'in-cluster', server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`, caFile: SERVICE_ACCOUNT_CA, skipTLSVerify: false }],
    users: [{ name: 'service-account', authProvider: { name: 'tokenFile', config: { tokenFile: SERVICE_ACCOUNT_TOKEN } } }],
    contexts: [{ name: 'in-cluster', cluster: 'in-cluster', user: 'service-account' }],
    currentContext: 'in-cluster',
  });
  return kc;
}

/**
 * Builds the client configuration for `conn`. Throws KubeConfigError for a malformed URL, a
 * missing or unreadable kubeconfig, an unknown context, or in-cluster mode outside a pod.
 *
 * ### Examples
 * ```ts
 * buildKubeConfig({ type: 'server', url: sim.url });
 * buildKubeConfig({ type: 'kubeconfig', context: 'kind-dev' });
 * buildKubeConfig({ type: 'in-cluster' });
 * ```
 */
export function buildKubeConfig(conn: KubeConnection, opts: BuildKubeConfigOptions = {}): KubeConfig {
  const env = opts.env ?? process.env;
  const exists = opts.fileExists ?? existsSync;
  switch (conn.type) {
    case 'server':
      return fromServer(conn.url);
    case 'kubeconfig':
      return fromKubeconfig(conn.path, conn.context, env, exists);
    case 'in-cluster':
      return fromCluster(env, exists);
    default: {
      const unknown: never = conn;
      throw new KubeConfigError('connection', `unknown type ${JSON.stringify(unknown)}`);
    }
  }
}

/** The API server URL of the current context (for logs), or '' when there is none. */
export function serverOf(kc: KubeConfig): string {
  return kc.getCurrentCluster()?.server ?? '';
}

/** The connection settings the watcher and the publisher both take (KUBE_SERVER, KUBECONFIG, …). */
export interface KubeConnectionSettings {
  readonly kubeServer?: string | undefined;
  readonly kubeconfig?: string | undefined;
  readonly kubeContext?: string | undefined;
  readonly inCluster: boolean;
}

/**
 * How to reach the API server: KUBE_SERVER, else a kubeconfig when KUBECONFIG or KUBE_CONTEXT is
 * set (the first entry of a KUBECONFIG list), else in-cluster when asked or when `env` has
 * KUBERNETES_SERVICE_HOST (as in a pod), else ~/.kube/config.
 */
export function kubeConnectionOf(c: KubeConnectionSettings, env: Readonly<Record<string, string | undefined>>): KubeConnection {
  if (c.kubeServer !== undefined) return { type: 'server', url: c.kubeServer };
  const path = c.kubeconfig?.split(':').find((p) => p !== '');
  if (path !== undefined || c.kubeContext !== undefined) {
    return { type: 'kubeconfig', ...(path !== undefined ? { path } : {}), ...(c.kubeContext !== undefined ? { context: c.kubeContext } : {}) };
  }
  if (c.inCluster || env['KUBERNETES_SERVICE_HOST']) return { type: 'in-cluster' };
  return { type: 'kubeconfig' };
}
