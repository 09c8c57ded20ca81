// docker-compose.yml and infra/Dockerfile, checked statically on every test run: every service
// starts a program the build writes, its environment parses with that service's own config, the
// shared settings agree, every mounted file exists, and NATS is locked down (the key job's files
// are what the servers include and what each service reads as its own role's seed). scripts/compose-smoke.sh runs them for
// real (it needs a Docker engine, so it is not part of `npm test`).

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../services/stack/src/index.ts';
import { PROGRAMS } from '../../scripts/build.ts';
import type { Compose, ComposeService } from './support/compose-file.ts';
import { PARSERS, ROLE_OF, composeKeepingPorts, composeWith, inVolume, keyJobOf, programOf, publishedPorts, serverIncludes, volumeMounts } from './support/compose-file.ts';

const FILE = 'docker-compose.yml';
/** Port variables keep their `${…:-port}` form: the published-port check reads their defaults. */
const compose = composeKeepingPorts(FILE);
const services = Object.entries(compose.services);
const ours = services.filter(([, s]) => s.image === 'slicemesh:dev');
const envOf = (name: string): Record<string, string> => ({ ...(compose.services[name]?.environment ?? {}) });

describe('docker-compose.yml', () => {
  it('runs NATS, Postgres, cluster-sim, the watcher, the slicer, the hints service, the mcs, the publisher and dry-run proxy agents', () => {
    const programs = new Set(ours.map(([, s]) => programOf(s)));
    for (const p of ['cluster-sim', 'watcher', 'slicer', 'hints', 'mcs', 'publisher', 'proxy-agent']) expect(programs, p).toContain(p);
    expect(compose.services['nats']?.image).toMatch(/^nats:2\.9/);
    expect(compose.services['postgres']?.image).toMatch(/^postgres:15/);
  });

  for (const [name, s] of ours) {
    it(`${name}: builds infra/Dockerfile and starts an existing program`, () => {
      expect(s.build?.dockerfile).toBe('infra/Dockerfile');
      const program = programOf(s);
      expect(PROGRAMS[program], `${s.command?.[0]} is one of the programs scripts/build.ts writes`).toBeDefined();
      expect(existsSync(join(REPO_ROOT, PROGRAMS[program] ?? '')), PROGRAMS[program]).toBe(true);
    });
  }

  for (const [name, s] of ours.filter(([, x]) => PARSERS[programOf(x)] !== undefined)) {
    it(`${name}: its environment is a valid ${programOf(s)} configuration`, () => {
      expect(() => PARSERS[programOf(s)]?.(envOf(name))).not.toThrow();
    });
  }

  it('the services agree on the cluster, the servers, the schema and the partitions', () => {
    const pipeline = ours.filter(([, s]) => PARSERS[programOf(s)] !== undefined).map(([n]) => envOf(n));
    for (const key of ['CLUSTER', 'NATS_URL']) expect(new Set(pipeline.map((e) => e[key])).size, key).toBe(1);
    expect(envOf('slicer')['DATABASE_URL']).toBe(envOf('hints')['DATABASE_URL']);
    expect(envOf('slicer')['DB_SCHEMA']).toBe(envOf('hints')['DB_SCHEMA']);
    expect(envOf('watcher')['PARTITIONS']).toBe(envOf('slicer')['PARTITIONS']);
    expect(envOf('watcher')['KUBE_SERVER']).toBe('http://cluster-sim:8001');
    expect(envOf('publisher')['KUBE_SERVER']).toBe(envOf('watcher')['KUBE_SERVER']);
    expect(envOf('publisher')['DB_SCHEMA']).toBe(envOf('slicer')['DB_SCHEMA']);
    expect(envOf('publisher')['MODE']).toBe('write');
    expect(envOf('slicer')['NATS_URL']).toBe('nats://nats:4222');
  });

  it('agents each play a distinct node and write their rules into the shared volume', () => {
    const agents = ours.filter(([, s]) => programOf(s) === 'proxy-agent').map(([n]) => envOf(n));
    expect(agents.length).toBeGreaterThan(0);
    expect(new Set(agents.map((e) => e['NODE_NAME'])).size).toBe(agents.length);
    for (const e of agents) {
      expect(e['BACKEND']).toBe('dry-run');
      expect(e['DRY_RUN_FILE']).toMatch(/^\/rules\//);
    }
  });

  it('the mcs keeps the exports bucket on its own server (a set of one) and starts once the hints service has declared the buckets it opens', () => {
    const mcs = ours.find(([, s]) => programOf(s) === 'mcs')?.[1] as ComposeService;
    const parsed = PARSERS['mcs']?.({ ...(mcs.environment ?? {}) }) as { exportsDomain?: string; natsUrl: string; cluster: string };
    expect(parsed.exportsDomain).toBeUndefined();
    expect(parsed.natsUrl).toBe(envOf('hints')['NATS_URL']);
    expect((mcs.depends_on as Record<string, { condition?: string }>)['hints']?.condition).toBe('service_healthy');
  });

  it('every dependency, volume, mounted file and published port is consistent', () => {
    for (const [name, s] of services) {
      const deps = Array.isArray(s.depends_on) ? s.depends_on : Object.keys(s.depends_on ?? {});
      for (const d of deps) expect(compose.services[d], `${name} depends on ${d}`).toBeDefined();
      for (const v of s.volumes ?? []) {
        const [source = ''] = v.split(':');
        if (source.startsWith('./')) expect(existsSync(join(REPO_ROOT, source)), `${name} mounts ${source}`).toBe(true);
        else expect(compose.volumes[source], `${name} volume ${source}`).toBeDefined();
      }
    }
    const published = publishedPorts(compose);
    expect(published.length).toBe(new Set(published).size);
  });
});

/** The key job: the volume it writes, the seeds (with their roles) and the block, as paths inside the volume, and the one cluster it scopes them to. */
function keyJob(c: Compose): { volume: string; seeds: readonly { file: string; role: string }[]; authConf: string; cluster: string } {
  const job = keyJobOf(c, 'nats-auth');
  expect(job.scopes.length, 'one cluster').toBe(1);
  return { volume: job.volume, seeds: job.seeds, authConf: job.files[0] as string, cluster: job.scopes[0]?.cluster ?? '' };
}

describe('docker-compose.yml locks NATS down', () => {
  const pipeline = ours.filter(([, s]) => PARSERS[programOf(s)] !== undefined);

  it('the one-shot job nats-auth writes the keys into a volume of their own once, scoped to the cluster every service runs in', () => {
    const job = compose.services['nats-auth'] as ComposeService & { restart?: string };
    expect(job.image).toBe('slicemesh:dev');
    expect(job.restart).toBe('no');
    expect(job.command).toContain('--if-missing');
    const { volume, cluster } = keyJob(compose);
    expect(compose.volumes[volume], volume).toBeDefined();
    for (const [name] of pipeline) expect(envOf(name)['CLUSTER'], name).toBe(cluster);
    // The image makes the mount point the unprivileged user's, so the fresh volume is writable.
    const target = volumeMounts(job).find((m) => m.source === volume)?.target ?? '?';
    expect(readFileSync(join(REPO_ROOT, 'infra/Dockerfile'), 'utf8')).toMatch(new RegExp(`chown node:node [^\n]*${target}(\\s|$)`, 'm'));
  });

  for (const [name, s] of pipeline) {
    it(`${name}: reads the seed of its own role (${ROLE_OF[programOf(s)] ?? '?'}) the job writes, from the keys' volume mounted read-only, and its config takes it`, () => {
      const { volume, seeds } = keyJob(compose);
      const seed = envOf(name)['NATS_NKEY_SEED_FILE'] ?? '';
      const mount = inVolume(s, volume, seed);
      expect(mount, `${seed} lies in a mount of ${volume}`).toBeDefined();
      expect(mount?.readOnly).toBe(true);
      const written = seeds.find((f) => f.file === mount?.file);
      expect(written, `${seed} is a file the job writes`).toBeDefined();
      expect(written?.role).toBe(ROLE_OF[programOf(s)]);
      const parsed = PARSERS[programOf(s)]?.(envOf(name)) as { natsNkeySeedFile?: string };
      expect(parsed.natsNkeySeedFile).toBe(seed);
    });
  }

  it('every agent has a key of its own, named after its node', () => {
    const agents = pipeline.filter(([, s]) => programOf(s) === 'proxy-agent').map(([n]) => envOf(n));
    expect(agents.length).toBeGreaterThan(1);
    for (const e of agents) expect(e['NATS_NKEY_SEED_FILE']).toMatch(new RegExp(`/agent-${e['NODE_NAME'] ?? '?'}\\.nk$`));
    expect(new Set(agents.map((e) => e['NATS_NKEY_SEED_FILE'])).size).toBe(agents.length);
  });

  it('no service but the job may write the keys, and only the services that connect to NATS see them', () => {
    const { volume } = keyJob(compose);
    for (const [name, s] of services) {
      const mounts = volumeMounts(s).filter((m) => m.source === volume);
      if (name === 'nats-auth') continue;
      for (const m of mounts) expect(m.readOnly, `${name} mounts ${volume} read-only`).toBe(true);
      const connects = name === 'nats' || PARSERS[programOf(s)] !== undefined || /^nats:/.test(s.image ?? '');
      expect(mounts.length > 0, `${name} ${connects ? 'needs' : 'has no use for'} the keys`).toBe(connects);
    }
  });

  it('the NATS server starts after the job and includes the block it wrote; its health check needs no credentials', () => {
    expectLockedServer(compose, 'nats');
  });
});

/**
 * NATS server `name` of `c` waits for the key job, its configuration includes the job's auth.conf
 * through a read-only mount of the keys' volume, and the health check asks the monitoring port.
 */
function expectLockedServer(c: Compose, name: string): void {
  const s = c.services[name] as ComposeService;
  const { volume, authConf } = keyJob(c);
  expect((s.depends_on as Record<string, { condition?: string }> | undefined)?.['nats-auth']?.condition, name).toBe('service_completed_successfully');
  const { text: conf, includes } = serverIncludes(s);
  const auth = includes.filter((i) => i.endsWith('/auth.conf'));
  expect(auth.length, `${name}: one authorization block`).toBe(1);
  const mount = inVolume(s, volume, auth[0] ?? '');
  expect(mount, `${name}: ${auth[0] ?? ''} lies in a mount of ${volume}`).toBeDefined();
  expect(mount?.readOnly, name).toBe(true);
  expect(mount?.file, name).toBe(authConf);
  const port = /^http:\s*[\d.]+:(\d+)$/m.exec(conf)?.[1];
  expect(JSON.stringify(s.healthcheck), name).toContain(`http://127.0.0.1:${port ?? '?'}/`);
}

describe('docker-compose.yml with a 3-server NATS cluster (profile nats-cluster, infra/nats/cluster.env)', () => {
  const envFile = readFileSync(join(REPO_ROOT, 'infra/nats/cluster.env'), 'utf8');
  const env = Object.fromEntries(
    envFile
      .split('\n')
      .filter((l) => /^[A-Z0-9_]+=/.test(l))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  const profiles = (env['COMPOSE_PROFILES'] ?? '').split(',');
  const clustered = composeWith(FILE, env);
  const active = Object.entries(clustered.services).filter(([, s]) => s.profiles === undefined || s.profiles.some((p) => profiles.includes(p)));
  const natsServers = active.filter(([, s]) => /^nats:/.test(s.image ?? ''));
  /** Host names that reach a service: its name and its network aliases. */
  const hostsOf = (name: string): string[] => {
    const s = clustered.services[name] as ComposeService & { networks?: Record<string, { aliases?: string[] } | null> };
    return [name, ...Object.values(s.networks ?? {}).flatMap((n) => n?.aliases ?? [])];
  };
  const confOf = (s: ComposeService): string => {
    const mount = (s.volumes ?? []).find((v) => v.split(':')[1] === '/etc/nats/nats.conf') ?? '';
    return readFileSync(join(REPO_ROOT, mount.split(':')[0] ?? ''), 'utf8');
  };
  const pipeline = active.filter(([, s]) => s.image === 'slicemesh:dev' && PARSERS[programOf(s)] !== undefined);

  it('the env file turns the profile on; without it the profile\'s servers do not run and the services use the one server, unreplicated', () => {
    expect(profiles).toEqual(['nats-cluster']);
    expect(natsServers.map(([n]) => n).sort()).toEqual(['nats', 'nats-2', 'nats-3']);
    for (const n of ['nats-2', 'nats-3']) expect(compose.services[n]?.profiles, n).toEqual(['nats-cluster']);
    const plain = composeWith(FILE, {});
    expect(confOfPlain(plain)).toContain('server_name');
    for (const [name, s] of Object.entries(plain.services).filter(([, x]) => x.image === 'slicemesh:dev' && PARSERS[programOf(x)] !== undefined)) {
      expect(s.environment?.['NATS_URL'], name).toBe('nats://nats:4222');
      expect(String(s.environment?.['NATS_REPLICAS']), name).toBe('1');
    }
  });

  it('three servers of one cluster: distinct names, routes to all three by names that reach them, JetStream on a volume each', () => {
    const names = new Set<string>();
    const volumes = new Set<string>();
    for (const [name, s] of natsServers) {
      const conf = confOf(s);
      names.add(/server_name:\s*(\S+)/.exec(conf)?.[1] ?? '');
      expect(/cluster\s*\{[^}]*name:\s*slicemesh/s.test(conf), name).toBe(true);
      expect(/store_dir:\s*\/data\//.test(conf), name).toBe(true);
      const routes = [...conf.matchAll(/nats-route:\/\/([a-z0-9-]+):6222/g)].map((m) => m[1] as string);
      expect(routes.length, name).toBe(3);
      for (const host of routes) expect(natsServers.some(([n]) => hostsOf(n).includes(host)), `${name}: route to ${host}`).toBe(true);
      const data = (s.volumes ?? []).find((v) => v.endsWith(':/data'))?.split(':')[0] ?? '';
      expect(clustered.volumes[data], `${name}: volume ${data}`).toBeDefined();
      volumes.add(data);
      expect(s.healthcheck, name).toBeDefined();
    }
    expect([...names].sort()).toEqual(['nats-1', 'nats-2', 'nats-3']);
    expect(volumes.size).toBe(3);
  });

  it('all three servers wait for the key job and include the same block', () => {
    for (const [name] of natsServers) expectLockedServer(clustered, name);
  });

  it('every service lists the three servers and replicates every stream and bucket 3 times, and its configuration accepts that', () => {
    expect(pipeline.length).toBeGreaterThanOrEqual(5);
    for (const [name, s] of pipeline) {
      const e = s.environment ?? {};
      const hosts = (e['NATS_URL'] ?? '').split(',').map((u) => new URL(u).hostname);
      expect(hosts.length, name).toBe(3);
      for (const h of hosts) expect(natsServers.filter(([n]) => hostsOf(n).includes(h)).length, `${name}: ${h}`).toBe(1);
      expect(new Set(hosts.map((h) => natsServers.find(([n]) => hostsOf(n).includes(h))?.[0])).size, name).toBe(3);
      expect(String(e['NATS_REPLICAS']), name).toBe('3');
      const parsed = PARSERS[programOf(s)]?.({ ...e }) as { natsUrl?: string; natsReplicas?: number };
      expect(parsed.natsUrl, name).toBe(e['NATS_URL']);
      if (parsed.natsReplicas !== undefined) expect(parsed.natsReplicas, name).toBe(3);
    }
  });
});

/** The NATS configuration the `nats` service mounts. */
function confOfPlain(c: Compose): string {
  const mount = (c.services['nats']?.volumes ?? []).find((v) => v.split(':')[1] === '/etc/nats/nats.conf') ?? '';
  return readFileSync(join(REPO_ROOT, mount.split(':')[0] ?? ''), 'utf8');
}

describe('infra/Dockerfile', () => {
  const text = readFileSync(join(REPO_ROOT, 'infra/Dockerfile'), 'utf8');
  const stages = text.split(/^FROM /m).slice(1);
  const final = stages.at(-1) ?? '';
  it('builds in its own stage and ships a Node 24 image with dist/ and production node_modules only', () => {
    expect(text).toMatch(/^ARG NODE_IMAGE=node:24-bookworm-slim$/m);
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(text).toMatch(/npm prune --omit=dev/);
    expect(final).toMatch(/^COPY --from=[a-z-]+ \/src\/dist \.\/dist$/m);
    expect(final).toMatch(/^COPY --from=[a-z-]+ \/src\/node_modules \.\/node_modules$/m);
    expect(final).not.toMatch(/^COPY (libs|services) /m);
    expect(text).not.toContain('tsx');
  });
  it('runs as the unprivileged node user with a HEALTHCHECK on /readyz', () => {
    expect(final).toMatch(/^USER node$/m);
    expect(final).toMatch(/^HEALTHCHECK .*infra\/healthcheck\.js/m);
    expect(readFileSync(join(REPO_ROOT, 'infra/healthcheck.js'), 'utf8')).toContain('/readyz');
  });
});
