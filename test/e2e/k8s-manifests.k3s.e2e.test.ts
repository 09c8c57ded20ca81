// The default install (infra/k8s, self-contained) in a real cluster: k3s in Docker through
// @testcontainers/k3s, with the image built from infra/Dockerfile preloaded into it. The API
// server dry-runs every object, then every workload must become ready (the watcher listing with
// nothing but its role, the agents programming nftables on the node) and the watcher's account
// may read what it watches and nothing more.
//
// Opt-in, since it builds the image and pulls k3s (minutes):
//   SLICEMESH_K3S=1 npx vitest run --project e2e test/e2e/k8s-manifests.k3s.e2e.test.ts
// It skips, and says why, when not asked for, when no Docker engine answers, or when the k3s
// image cannot be pulled. SLICEMESH_K3S_IMAGE picks another k3s image. The image is built as
// slicemesh:latest, the name the manifests use, which replaces a local image of that name.

import { execFileSync, spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GenericContainer, ImageName, getContainerRuntimeClient } from 'testcontainers';
import { K3sContainer } from '@testcontainers/k3s';
import type { StartedK3sContainer } from '@testcontainers/k3s';
import { REPO_ROOT } from '../../services/stack/src/index.ts';
import { copyInfraK8sWithKeys } from './support/nats-auth-files.ts';

const K3S_IMAGE = process.env['SLICEMESH_K3S_IMAGE'] ?? 'rancher/k3s:v1.32.4-k3s1';
const IMAGE = 'slicemesh:latest';
const NAMESPACE = 'slicemesh';
/** What `kubectl apply -k infra/k8s` starts, in the order they can become ready. */
const WORKLOADS = ['statefulset/nats', 'statefulset/postgres', 'deployment/watcher', 'deployment/slicer', 'deployment/hints', 'deployment/mcs', 'daemonset/proxy-agent'];

const firstLine = (err: unknown): string => (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';

/** Why this test cannot run here, or null. */
async function unavailable(): Promise<string | null> {
  if (process.env['SLICEMESH_K3S'] !== '1') return 'opt-in: SLICEMESH_K3S=1 installs infra/k8s into k3s (builds the image, pulls k3s)';
  let client: Awaited<ReturnType<typeof getContainerRuntimeClient>>;
  try {
    client = await getContainerRuntimeClient();
  } catch (err) {
    return `no Docker engine answers (${firstLine(err)})`;
  }
  const k3s = ImageName.fromString(K3S_IMAGE);
  if (await client.image.exists(k3s)) return null;
  try {
    await client.image.pull(k3s);
  } catch (err) {
    return `the k3s image ${K3S_IMAGE} cannot be pulled (${firstLine(err)})`;
  }
  return null;
}

const skip = await unavailable();
if (skip !== null) console.warn(`k8s-manifests.k3s: skipped: ${skip}`);

describe.skipIf(skip !== null)(`infra/k8s installed into k3s${skip === null ? '' : ` (skipped: ${skip})`}`, () => {
  let kubeconfig = '';
  let k8s = '';
  let k3s: StartedK3sContainer | undefined;

  const kubectl = (...args: string[]): string => {
    try {
      return execFileSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000 });
    } catch (err) {
      throw new Error(`kubectl ${args.join(' ')}: ${(err as { stderr?: string }).stderr ?? firstLine(err)}`, { cause: err });
    }
  };
  /** What to look at when something does not become ready. */
  const diagnose = (): string => {
    const parts: string[] = [];
    for (const args of [['get', 'pods', '-o', 'wide'], ['get', 'events', '--sort-by=.lastTimestamp'], ['logs', '--all-containers', '--tail=20', '-l', 'app.kubernetes.io/part-of=slicemesh', '--prefix']]) {
      try {
        parts.push(kubectl('-n', NAMESPACE, ...args));
      } catch (err) {
        parts.push(firstLine(err));
      }
    }
    return parts.join('\n');
  };

  beforeAll(async () => {
    const work = mkdtempSync(join(tmpdir(), 'slicemesh-k3s-'));
    kubeconfig = join(work, 'kubeconfig');
    // The manifests with NATS keys of their own, made as infra/k8s/README.md says.
    k8s = join(await copyInfraK8sWithKeys(join(work, 'tree')), 'infra/k8s');
    // The image, built as the manifests name it and saved where k3s imports images at start.
    await GenericContainer.fromDockerfile(REPO_ROOT, 'infra/Dockerfile').build(IMAGE, { deleteOnExit: false });
    const client = await getContainerRuntimeClient();
    const tar = join(work, 'slicemesh.tar');
    await pipeline((await client.container.dockerode.getImage(IMAGE).get()) as Readable, createWriteStream(tar));
    k3s = await new K3sContainer(K3S_IMAGE).withCopyFilesToContainer([{ source: tar, target: '/var/lib/rancher/k3s/agent/images/slicemesh.tar' }]).start();
    writeFileSync(kubeconfig, k3s.getKubeConfig());
  }, 20 * 60_000);

  afterAll(async () => {
    await k3s?.stop();
  }, 120_000);

  it('the API server accepts every object (server-side dry run)', () => {
    // A dry run creates nothing, so the namespace the other objects go into must exist first.
    kubectl('create', 'namespace', NAMESPACE);
    const out = kubectl('apply', '--dry-run=server', '-k', k8s);
    expect(out).toMatch(/deployment\.apps\/watcher (created|configured) \(server dry run\)/);
  });

  it('every workload becomes ready: NATS, Postgres, the watcher, the slicer, the hints service, the mcs and the agents', () => {
    kubectl('apply', '-k', k8s);
    for (const w of WORKLOADS) {
      try {
        kubectl('-n', NAMESPACE, 'rollout', 'status', w, '--timeout=300s');
      } catch (err) {
        throw new Error(`${w} did not become ready: ${firstLine(err)}\n${diagnose()}`, { cause: err });
      }
    }
  }, 35 * 60_000);

  it('the watcher may list and watch what it watches and nothing else; the other accounts may not read the API', () => {
    // `auth can-i` prints yes or no (and exits 1 for no).
    const can = (account: string, ...what: string[]): string =>
      spawnSync('kubectl', ['--kubeconfig', kubeconfig, 'auth', 'can-i', ...what, `--as=system:serviceaccount:${NAMESPACE}:${account}`], { encoding: 'utf8' }).stdout.trim();
    for (const resource of ['pods', 'services', 'endpoints', 'nodes']) {
      expect(can('watcher', 'list', resource, '--all-namespaces'), `watcher list ${resource}`).toBe('yes');
      expect(can('watcher', 'watch', resource, '--all-namespaces'), `watcher watch ${resource}`).toBe('yes');
      expect(can('watcher', 'delete', resource, '--all-namespaces'), `watcher delete ${resource}`).toBe('no');
    }
    expect(can('watcher', 'list', 'secrets', '--all-namespaces')).toBe('no');
    expect(can('watcher', 'create', 'endpointslices.discovery.k8s.io', '-n', 'default')).toBe('no');
    for (const account of ['slicer', 'hints', 'mcs', 'proxy-agent']) expect(can(account, 'list', 'pods', '--all-namespaces'), account).toBe('no');
  });
});
