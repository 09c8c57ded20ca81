// docker-compose.multi-cluster.yml, checked statically on every test run: a hub and two leaves
// from infra/nats (hub.conf, leaf-a.conf, leaf-b.conf), and per cluster a cluster-sim, the
// watcher, the slicer, the hints service, the mcs and a dry-run agent on its own leaf; every
// service's environment parses with its own config, the clusters keep apart (cluster, subject
// prefix, schema, leaf), and NATS is locked down: each server includes the blocks its key job
// writes, each service reads the seed of its own role and cluster from the job of the server it
// connects to. scripts/compose-multi-cluster-smoke.sh runs it for real.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseScenario } from '@slicemesh/cluster-sim';
import { EXPORT_ANNOTATION } from '@slicemesh/multicluster';
import { REPO_ROOT } from '../../services/stack/src/index.ts';
import { parseNatsAuthCommandLine } from '../../services/cli/src/nats-auth/args.ts';
import { PROGRAMS } from '../../scripts/build.ts';
import type { ComposeService, KeyJob } from './support/compose-file.ts';
import { PARSERS, ROLE_OF, composeKeepingPorts, inVolume, keyJobOf, programOf, publishedPorts, serverIncludes, volumeMounts } from './support/compose-file.ts';

const FILE = 'docker-compose.multi-cluster.yml';
const compose = composeKeepingPorts(FILE);
const services = Object.entries(compose.services);
const ours = services.filter(([, s]) => s.image === 'slicemesh:dev');
const pipeline = ours.filter(([, s]) => PARSERS[programOf(s)] !== undefined);
const natsServers = services.filter(([, s]) => /^nats:/.test(s.image ?? ''));
const keyJobs = services.filter(([, s]) => s.command?.[0] === 'dist/slicemesh.js' && s.command[1] === 'nats-auth').map(([n]) => [n, keyJobOf(compose, n)] as const);
const envOf = (s: ComposeService): Record<string, string> => ({ ...(s.environment ?? {}) });
const dependsOn = (s: ComposeService): Readonly<Record<string, { readonly condition?: string }>> => (Array.isArray(s.depends_on) ? {} : ((s.depends_on ?? {}) as Record<string, { condition?: string }>));

/** The two clusters as the compose file runs them: the leaf its services use, its prefix and schema. */
const CLUSTERS = [
  { cluster: 'cluster-a', leaf: 'leaf-a', prefix: 'a.', schema: 'cluster_a', sim: 'cluster-sim-a' },
  { cluster: 'cluster-b', leaf: 'leaf-b', prefix: 'b.', schema: 'cluster_b', sim: 'cluster-sim-b' },
] as const;
const PER_CLUSTER = ['watcher', 'slicer', 'hints', 'mcs', 'proxy-agent'];

/** The compose service a NATS_URL names (its host). */
const serverOf = (url: string): string => new URL(url).hostname;
const domainOf = (conf: string): string | undefined => /domain:\s*(\S+)/.exec(conf)?.[1];

describe('docker-compose.multi-cluster.yml runs two clusters of a cluster set behind a NATS hub', () => {
  it('a hub and two leaves from infra/nats, Postgres, and per cluster its simulated cluster, the watcher, the slicer, the hints service, the mcs and a dry-run agent', () => {
    expect(natsServers.map(([n]) => n).sort()).toEqual(['hub', 'leaf-a', 'leaf-b']);
    expect(natsServers.map(([, s]) => serverIncludes(s).conf).sort()).toEqual(['./infra/nats/hub.conf', './infra/nats/leaf-a.conf', './infra/nats/leaf-b.conf']);
    expect(compose.services['postgres']?.image).toMatch(/^postgres:15/);
    for (const c of CLUSTERS) {
      const mine = pipeline.filter(([, s]) => envOf(s)['CLUSTER'] === c.cluster);
      expect(mine.map(([, s]) => programOf(s)).sort(), c.cluster).toEqual([...PER_CLUSTER].sort());
      expect(programOf(compose.services[c.sim] as ComposeService)).toBe('cluster-sim');
    }
    expect(pipeline.length).toBe(CLUSTERS.length * PER_CLUSTER.length);
  });

  for (const [name, s] of ours) {
    it(`${name}: builds infra/Dockerfile and starts a program the build writes`, () => {
      expect(s.build?.dockerfile).toBe('infra/Dockerfile');
      const program = programOf(s);
      expect(PROGRAMS[program], `${s.command?.[0]} is one of the programs scripts/build.ts writes`).toBeDefined();
      expect(existsSync(join(REPO_ROOT, PROGRAMS[program] ?? ''))).toBe(true);
    });
  }

  for (const [name, s] of pipeline) {
    it(`${name}: its environment is a valid ${programOf(s)} configuration`, () => {
      expect(() => PARSERS[programOf(s)]?.(envOf(s))).not.toThrow();
    });
  }

  for (const c of CLUSTERS) {
    it(`${c.cluster}: every service uses ${c.leaf}, subject prefix ${c.prefix} and schema ${c.schema}, and the watcher reads ${c.sim}`, () => {
      const mine = pipeline.filter(([, s]) => envOf(s)['CLUSTER'] === c.cluster);
      for (const [name, s] of mine) {
        const parsed = PARSERS[programOf(s)]?.(envOf(s)) as { natsUrl: string; subjectPrefix?: string; cluster?: string };
        expect(serverOf(parsed.natsUrl), name).toBe(c.leaf);
        expect(envOf(s)['SUBJECT_PREFIX'], name).toBe(c.prefix);
        if (programOf(s) === 'slicer' || programOf(s) === 'hints') expect(envOf(s)['DB_SCHEMA'], name).toBe(c.schema);
      }
      const env = (program: string): Record<string, string> => envOf(mine.find(([, s]) => programOf(s) === program)?.[1] as ComposeService);
      expect(env('watcher')['KUBE_SERVER']).toBe(`http://${c.sim}:8001`);
      expect(env('watcher')['PARTITIONS']).toBe(env('slicer')['PARTITIONS']);
      expect(env('slicer')['DATABASE_URL']).toBe(env('hints')['DATABASE_URL']);
      expect(new URL(env('slicer')['DATABASE_URL'] ?? '').hostname).toBe('postgres');
    });
  }

  it('the clusters keep apart: their own ids, leaves, JetStream domains, subject prefixes and schemas', () => {
    for (const key of ['CLUSTER', 'NATS_URL', 'SUBJECT_PREFIX', 'DB_SCHEMA']) {
      const values = CLUSTERS.map((c) => envOf(pipeline.find(([, s]) => envOf(s)['CLUSTER'] === c.cluster && programOf(s) === 'hints')?.[1] as ComposeService)[key]);
      expect(new Set(values).size, key).toBe(CLUSTERS.length);
    }
    const domains = natsServers.map(([, s]) => domainOf(serverIncludes(s).text));
    expect(new Set(domains).size).toBe(natsServers.length);
  });

  it("each cluster's mcs reaches the exports bucket in the hub's JetStream domain and starts once its hints service has declared the buckets it opens", () => {
    const hubDomain = domainOf(serverIncludes(compose.services['hub'] as ComposeService).text);
    expect(hubDomain).toBe('hub');
    for (const [name, s] of pipeline.filter(([, x]) => programOf(x) === 'mcs')) {
      const parsed = PARSERS['mcs']?.(envOf(s)) as { exportsDomain?: string; cluster: string };
      expect(parsed.exportsDomain, name).toBe(hubDomain);
      const hints = pipeline.find(([, x]) => programOf(x) === 'hints' && envOf(x)['CLUSTER'] === parsed.cluster)?.[0] ?? '?';
      expect(dependsOn(s)[hints]?.condition, name).toBe('service_healthy');
    }
  });

  it('each simulated cluster plays a scenario of its own from infra/compose, and cluster A exports a Service cluster B does not have, to import', () => {
    const scenarios = CLUSTERS.map((c) => {
      const s = compose.services[c.sim] as ComposeService;
      const file = ((s.volumes ?? []).find((v) => v.startsWith('./')) ?? '').split(':');
      expect(s.command?.join(' ')).toContain(`--scenario ${file[1] ?? '?'}`);
      return parseScenario(readFileSync(join(REPO_ROOT, file[0] ?? ''), 'utf8'), file[0]);
    });
    const exported = (i: number): string[] => (scenarios[i]?.services ?? []).filter((x) => x.annotations?.[EXPORT_ANNOTATION] === 'true').map((x) => `${x.namespace}/${x.name}`);
    const all = (i: number): string[] => (scenarios[i]?.services ?? []).map((x) => `${x.namespace}/${x.name}`);
    expect(exported(0).filter((x) => !all(1).includes(x)).length).toBeGreaterThan(0);
    expect(exported(1).filter((x) => !all(0).includes(x)).length).toBeGreaterThan(0);
    expect(scenarios[0]?.seed).not.toBe(scenarios[1]?.seed);
  });

  it('every agent plays a node of its own cluster and writes its rules into the shared volume under a name of its own', () => {
    const agents = pipeline.filter(([, s]) => programOf(s) === 'proxy-agent');
    const files = agents.map(([, s]) => envOf(s)['DRY_RUN_FILE'] ?? '');
    expect(new Set(files).size).toBe(agents.length);
    for (const [name, s] of agents) {
      expect(envOf(s)['BACKEND'], name).toBe('dry-run');
      expect(envOf(s)['DRY_RUN_FILE'], name).toMatch(/^\/rules\//);
      const sim = CLUSTERS.find((c) => c.cluster === envOf(s)['CLUSTER'])?.sim ?? '?';
      const scenario = readFileSync(join(REPO_ROOT, ((compose.services[sim]?.volumes ?? [])[0] ?? '').split(':')[0] ?? ''), 'utf8');
      const nodes = (parseScenario(scenario).nodes ?? []).flatMap((n) => n.names);
      expect(nodes, name).toContain(envOf(s)['NODE_NAME']);
    }
  });

  it('every dependency, volume and bind mount exists, and the published ports are distinct, also from docker-compose.yml\'s (both can run at once)', () => {
    for (const [name, s] of services) {
      for (const d of Object.keys(dependsOn(s))) expect(compose.services[d], `${name} depends on ${d}`).toBeDefined();
      for (const v of s.volumes ?? []) {
        const [source = ''] = v.split(':');
        if (source.startsWith('./')) expect(existsSync(join(REPO_ROOT, source)), `${name} mounts ${source}`).toBe(true);
        else expect(compose.volumes[source], `${name} volume ${source}`).toBeDefined();
      }
    }
    const published = publishedPorts(compose);
    expect(published.length).toBe(new Set(published).size);
    const single = publishedPorts(composeKeepingPorts('docker-compose.yml'));
    expect(published.filter((p) => single.includes(p))).toEqual([]);
  });
});

describe('docker-compose.multi-cluster.yml locks NATS down with the keys of infra/nats/auth/README.md', () => {
  /** The job whose files a server includes: its auth.conf lies in the job's directory. */
  const jobOfServer = (server: string): readonly [string, KeyJob] => {
    const s = compose.services[server] as ComposeService;
    const auth = serverIncludes(s).includes.find((i) => i.endsWith('/auth.conf')) ?? '';
    const job = keyJobs.find(([, j]) => j.files.includes(inVolume(s, j.volume, auth)?.file ?? '?'));
    if (job === undefined) throw new Error(`${server}: no key job writes ${auth}`);
    return job;
  };

  it('a one-shot job per server writes its keys once into the keys\' volume', () => {
    expect(keyJobs.map(([n]) => n).sort()).toEqual(['nats-auth-hub', 'nats-auth-leaf-a', 'nats-auth-leaf-b']);
    for (const [name, job] of keyJobs) {
      const s = compose.services[name] as ComposeService;
      expect(s.restart, name).toBe('no');
      expect(job.command, name).toContain('--if-missing');
      expect(compose.volumes[job.volume], name).toBeDefined();
    }
    expect(new Set(keyJobs.map(([, j]) => j.dir)).size).toBe(keyJobs.length);
  });

  it('each job scopes its keys as the README does for that server: the hub both clusters, each leaf its own with its mcs in the hub\'s domain', () => {
    const readme = readFileSync(join(REPO_ROOT, 'infra/nats/auth/README.md'), 'utf8');
    for (const server of ['hub', 'leaf-a', 'leaf-b']) {
      const [name, job] = jobOfServer(server);
      const out = new RegExp(`--out infra/nats/auth/${server}(\\s|$)`);
      const line = readme.split('\n').find((l) => l.startsWith('slicemesh nats-auth ') && out.test(l));
      expect(line, `the README's command for ${server}`).toBeDefined();
      const fromReadme = parseNatsAuthCommandLine((line ?? '').split(/\s+/).slice(2), {});
      expect(job.scopes, name).toEqual(fromReadme.scopes);
    }
  });

  for (const [server] of natsServers) {
    it(`${server}: starts after the jobs whose files it includes, which lie in the keys' volume mounted read-only; its health check needs no credentials`, () => {
      const s = compose.services[server] as ComposeService;
      const { text, includes } = serverIncludes(s);
      expect(includes.length).toBeGreaterThan(0);
      for (const inc of includes) {
        const writers = keyJobs.filter(([, j]) => {
          const at = inVolume(s, j.volume, inc);
          return at !== undefined && j.files.includes(at.file);
        });
        expect(writers.length, `${server}: ${inc} is written by one job`).toBe(1);
        expect(inVolume(s, writers[0]?.[1].volume ?? '', inc)?.readOnly, `${server}: ${inc}`).toBe(true);
        expect(dependsOn(s)[writers[0]?.[0] ?? '']?.condition, `${server} waits for ${writers[0]?.[0] ?? '?'}`).toBe('service_completed_successfully');
      }
      const port = /^http:\s*[\d.]+:(\d+)$/m.exec(text)?.[1];
      expect(JSON.stringify(s.healthcheck)).toContain(`http://127.0.0.1:${port ?? '?'}/`);
    });
  }

  it('the leaves dial the hub by its service name on its leafnode port, as the hub job\'s URL says', () => {
    const [, hubJob] = jobOfServer('hub');
    const url = new URL(hubJob.command[hubJob.command.indexOf('--hub-url') + 1] ?? '');
    expect(compose.services[url.hostname], url.hostname).toBeDefined();
    expect(serverIncludes(compose.services[url.hostname] as ComposeService).text).toMatch(new RegExp(`leafnodes \\{\\s*listen: [\\d.]+:${url.port}`));
    for (const leaf of ['leaf-a', 'leaf-b']) {
      expect(hubJob.command.join(' ')).toMatch(new RegExp(`--leafnodes \\S*${leaf}`));
      expect(dependsOn(compose.services[leaf] as ComposeService)[url.hostname]?.condition, leaf).toBe('service_healthy');
    }
  });

  for (const [name, s] of pipeline) {
    it(`${name}: reads the seed of its own role (${ROLE_OF[programOf(s)] ?? '?'}) and cluster from the job of the server it connects to, read-only`, () => {
      const env = envOf(s);
      const server = serverOf(env['NATS_URL'] ?? '');
      const [, job] = jobOfServer(server);
      const seed = env['NATS_NKEY_SEED_FILE'] ?? '';
      const at = inVolume(s, job.volume, seed);
      expect(at, `${seed} lies in a mount of ${job.volume}`).toBeDefined();
      expect(at?.readOnly).toBe(true);
      const written = job.seeds.find((f) => f.file === at?.file);
      expect(written, `${seed} is a file ${server}'s job writes`).toBeDefined();
      expect(written?.role).toBe(ROLE_OF[programOf(s)]);
      expect(written?.cluster).toBe(env['CLUSTER']);
      expect((PARSERS[programOf(s)]?.(env) as { natsNkeySeedFile?: string }).natsNkeySeedFile).toBe(seed);
    });
  }

  it('no service but the jobs may write the keys, and only those that connect to NATS see them', () => {
    const volumes = new Set(keyJobs.map(([, j]) => j.volume));
    for (const [name, s] of services) {
      if (keyJobs.some(([n]) => n === name)) continue;
      const mounts = volumeMounts(s).filter((m) => volumes.has(m.source));
      for (const m of mounts) expect(m.readOnly, `${name} mounts ${m.source} read-only`).toBe(true);
      const connects = PARSERS[programOf(s)] !== undefined || /^nats:/.test(s.image ?? '');
      expect(mounts.length > 0, `${name} ${connects ? 'needs' : 'has no use for'} the keys`).toBe(connects);
    }
  });
});
