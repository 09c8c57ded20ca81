import { chmodSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVICE_ROLES, natsAuthenticator } from '@slicemesh/nats';
import { run } from '../run.ts';

interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function natsAuth(argv: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<Result> {
  let stdout = '';
  let stderr = '';
  const code = await run(['nats-auth', ...argv], { stdin: '', stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) }, env });
  return { code, stdout, stderr };
}

const tempDir = (): string => mkdtempSync(join(tmpdir(), 'nats-auth-'));
const mode = (path: string): number => statSync(path).mode & 0o777;

/** The public key a seed file signs with (what the server checks against auth.conf). */
function publicKeyOf(seedFile: string): string {
  const auth = natsAuthenticator({ nkeySeedFile: seedFile });
  return (auth?.('nonce') as { nkey: string }).nkey;
}

/** auth.conf's users as `role publicKey`, in file order. */
function usersOf(authConf: string): string[] {
  return [...authConf.matchAll(/# ([a-z]+)\n\s+\{ nkey: "(U[A-Z0-9]+)"/g)].map((m) => `${m[1]} ${m[2]}`);
}

/** What a run writes: every service role's seed, the agents' (`agents`, file names) and auth.conf. */
const filesWith = (...agents: string[]): string[] => [...SERVICE_ROLES.map((r) => `${r}.nk`), ...agents, 'auth.conf'].sort();

describe('slicemesh nats-auth writes a seed per role and the authorization block for their keys', () => {
  const cases: { name: string; argv: string[]; env?: Record<string, string>; files: string[]; confHas: string[]; confLacks?: string[] }[] = [
    {
      name: 'one seed per service role, one agent key shared by every agent, scoped to the cluster',
      argv: ['--cluster', 'c1'],
      files: filesWith('agent.nk'),
      confHas: ['"kube.c1.>"', '"$KV.views.c1.>"'],
    },
    {
      name: '--agents gives each named agent a key of its own and writes no shared one',
      argv: ['--cluster', 'c1', '--agents', 'worker-a-1,worker-b-1'],
      files: filesWith('agent-worker-a-1.nk', 'agent-worker-b-1.nk'),
      confHas: ['"kube.c1.>"'],
    },
    {
      name: 'the stream and bucket names and the subject prefix shape the permissions, as the services run with them',
      argv: ['--cluster', 'c1', '--subject-prefix', 't1.', '--kube-stream', 'KUBE2', '--views-bucket', 'views2'],
      files: filesWith('agent.nk'),
      confHas: ['"t1.kube.c1.>"', '"$JS.API.STREAM.INFO.KUBE2"', '"$KV.views2.c1.>"'],
      confLacks: ['"kube.c1.>"', '"$KV.views.c1.>"'],
    },
    {
      name: "--exports-domain lets a leaf's mcs reach the cluster set's exports bucket through the hub's JetStream API",
      argv: ['--cluster', 'c1', '--exports-domain', 'hub'],
      files: filesWith('agent.nk'),
      confHas: ['"$JS.hub.API.STREAM.INFO.KV_exports"', '"$JS.hub.API.CONSUMER.CREATE.KV_exports.>"', '"$JS.hub.API.$KV.exports.>"'],
      confLacks: ['"$JS.API.STREAM.INFO.KV_exports"'],
    },
    {
      name: '--exports-bucket names the bucket the mcs reaches on its own server',
      argv: ['--cluster', 'c1', '--exports-bucket', 'set-1'],
      files: filesWith('agent.nk'),
      confHas: ['"$JS.API.STREAM.INFO.KV_set-1"', '"$KV.set-1.>"'],
      confLacks: ['KV_exports"', 'KV_exports.', '$JS.hub.'],
    },
    {
      name: 'EXPORTS_DOMAIN and EXPORTS_BUCKET stand in for absent flags, as the mcs reads them',
      argv: ['--cluster', 'c1'],
      env: { EXPORTS_DOMAIN: 'hub', EXPORTS_BUCKET: 'xb' },
      files: filesWith('agent.nk'),
      confHas: ['"$JS.hub.API.STREAM.INFO.KV_xb"'],
    },
    {
      name: 'CLUSTER and the name variables stand in for absent flags, as in slicemesh log',
      argv: [],
      env: { CLUSTER: 'from-env', KUBE_STREAM: 'KENV' },
      files: filesWith('agent.nk'),
      confHas: ['"kube.from-env.>"', '"$JS.API.STREAM.INFO.KENV"', 'cluster "from-env"'],
    },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const dir = join(tempDir(), 'auth');
      const r = await natsAuth([...tc.argv, '--out', dir], tc.env);
      expect([r.code, r.stderr]).toEqual([0, '']);
      expect(readdirSync(dir).sort()).toEqual(tc.files);
      expect(mode(dir)).toBe(0o700);
      const conf = readFileSync(join(dir, 'auth.conf'), 'utf8');
      for (const s of tc.confHas) expect(conf).toContain(s);
      for (const s of tc.confLacks ?? []) expect(conf).not.toContain(s);
      const seeds = tc.files.filter((f) => f.endsWith('.nk'));
      // Each seed: one SU line, owner-only, and auth.conf has its public key under its role.
      const expected = seeds.map((f) => `${f.startsWith('agent') ? 'agent' : f.replace('.nk', '')} ${publicKeyOf(join(dir, f))}`);
      expect(usersOf(conf).sort()).toEqual(expected.sort());
      for (const f of seeds) {
        const text = readFileSync(join(dir, f), 'utf8');
        expect(text, f).toMatch(/^SU[A-Z0-9]+\n$/);
        expect(mode(join(dir, f)), f).toBe(0o600);
        // Never printed: stdout names files and public keys only.
        expect(r.stdout).not.toContain(text.trim());
        expect(r.stdout).toContain(`wrote ${join(dir, f)} (`);
      }
      expect(r.stdout).toContain(`wrote ${join(dir, 'auth.conf')} (${seeds.length} users`);
    });
  }

  it('--leafnodes gives each leaf a user and password at the hub and the URL to dial with them, and prints no password', async () => {
    const dir = join(tempDir(), 'hub');
    const r = await natsAuth(['--cluster', 'c1', '--out', dir, '--leafnodes', 'leaf-a,leaf-b', '--hub-url', 'nats-leaf://hub:7422']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const users = readFileSync(join(dir, 'leafnodes.conf'), 'utf8');
    const passwords = Object.fromEntries([...users.matchAll(/\{ user: "([^"]+)", password: "([A-Za-z0-9_-]{32})" \}/g)].map((m) => [m[1], m[2]]));
    expect(Object.keys(passwords)).toEqual(['leaf-a', 'leaf-b']);
    expect(passwords['leaf-a']).not.toBe(passwords['leaf-b']);
    expect(users).toMatch(/^authorization \{\n {2}users = \[\n/m);
    for (const leaf of ['leaf-a', 'leaf-b']) {
      const file = join(dir, `leafnode-${leaf}.conf`);
      expect(readFileSync(file, 'utf8')).toMatch(new RegExp(`^HUB_LEAF_URL: "nats-leaf://${leaf}:${passwords[leaf] ?? '?'}@hub:7422"$`, 'm'));
      expect(mode(file)).toBe(0o600);
      expect(r.stdout).toContain(`wrote ${file} (`);
      expect(r.stdout).not.toContain(passwords[leaf]);
    }
    expect(mode(join(dir, 'leafnodes.conf'))).toBe(0o600);
  });

  it('--cluster given twice writes one block with the users of both, each cluster\'s seeds in a directory of its own and its own subject prefix', async () => {
    const dir = join(tempDir(), 'hub');
    const r = await natsAuth(['--cluster', 'cluster-a', '--cluster', 'cluster-b', '--subject-prefix', 'a.', '--subject-prefix', 'b.', '--agents', 'n1', '--out', dir]);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(readdirSync(dir).sort()).toEqual(['auth.conf', 'cluster-a', 'cluster-b']);
    const conf = readFileSync(join(dir, 'auth.conf'), 'utf8');
    for (const [cluster, prefix] of [['cluster-a', 'a.'], ['cluster-b', 'b.']] as const) {
      const keys = join(dir, cluster);
      expect(readdirSync(keys).sort()).toEqual(filesWith('agent-n1.nk').filter((f) => f !== 'auth.conf'));
      expect(mode(keys)).toBe(0o700);
      for (const f of readdirSync(keys)) {
        const role = f.startsWith('agent') ? 'agent' : f.replace('.nk', '');
        expect(conf, f).toContain(`# ${role} of cluster "${cluster}"\n    { nkey: "${publicKeyOf(join(keys, f))}"`);
        expect(r.stdout).toContain(`wrote ${join(keys, f)} (${role} of "${cluster}", public key U`);
      }
      expect(conf).toContain(`"${prefix}kube.${cluster}.>"`);
    }
    expect(conf).not.toContain('"kube.cluster-a.>"');
    expect(r.stdout).toContain(`wrote ${join(dir, 'auth.conf')} (16 users of clusters "cluster-a", "cluster-b"; `);
  });

  it('one --subject-prefix serves every --cluster', async () => {
    const dir = join(tempDir(), 'hub');
    expect((await natsAuth(['--cluster', 'x', '--cluster', 'y', '--subject-prefix', 't.', '--out', dir])).code).toBe(0);
    const conf = readFileSync(join(dir, 'auth.conf'), 'utf8');
    for (const c of ['x', 'y']) expect(conf).toContain(`"t.kube.${c}.>"`);
  });

  it('every run makes new keys', async () => {
    const [a, b] = [join(tempDir(), 'a'), join(tempDir(), 'b')];
    expect((await natsAuth(['--cluster', 'c1', '--out', a])).code).toBe(0);
    expect((await natsAuth(['--cluster', 'c1', '--out', b])).code).toBe(0);
    expect(readFileSync(join(a, 'watcher.nk'), 'utf8')).not.toBe(readFileSync(join(b, 'watcher.nk'), 'utf8'));
  });
});

describe('slicemesh nats-auth and the keys already there', () => {
  /** The files of `dir` with their contents. */
  const snapshot = (dir: string): Record<string, string> => Object.fromEntries(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f), 'utf8')]));

  const cases: { name: string; first: string[]; second: string[]; code: number; stderr: RegExp | ''; changed: boolean }[] = [
    { name: 'an existing seed is never overwritten without --force, and the error names it', first: [], second: [], code: 2, stderr: /^slicemesh: nats-auth: --out: \S+\/watcher\.nk exists: keys are never replaced by accident \(give --force to rotate them all\)$/m, changed: false },
    { name: '--force replaces every key', first: [], second: ['--force'], code: 0, stderr: '', changed: true },
    { name: '--if-missing keeps a complete set as it is', first: [], second: ['--if-missing'], code: 0, stderr: '', changed: false },
    { name: '--if-missing refuses a set that lacks a key, naming it', first: ['--agents', 'n1'], second: ['--if-missing', '--agents', 'n1,n2'], code: 2, stderr: /holds some of the files but not \S+\/agent-n2\.nk; --force writes a new set/, changed: false },
    { name: '--if-missing refuses a set that lacks a leaf\'s credentials', first: [], second: ['--if-missing', '--leafnodes', 'a', '--hub-url', 'nats-leaf://hub:7422'], code: 2, stderr: /holds some of the files but not \S+\/leafnodes\.conf/, changed: false },
    { name: 'existing leaf credentials are never replaced without --force', first: ['--leafnodes', 'a', '--hub-url', 'nats-leaf://hub:7422'], second: ['--leafnodes', 'a', '--hub-url', 'nats-leaf://hub:7422'], code: 2, stderr: /--out: \S+\/leafnodes\.conf exists: passwords are never replaced by accident/, changed: false },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const dir = join(tempDir(), 'auth');
      expect((await natsAuth(['--cluster', 'c1', '--out', dir, ...tc.first])).code).toBe(0);
      const before = snapshot(dir);
      const r = await natsAuth(['--cluster', 'c1', '--out', dir, ...tc.second]);
      expect(r.code).toBe(tc.code);
      if (tc.stderr === '') expect(r.stderr).toBe('');
      else expect(r.stderr).toMatch(tc.stderr);
      const after = snapshot(dir);
      if (tc.changed) for (const f of Object.keys(before)) expect(after[f], f).not.toBe(before[f]);
      else expect(after).toEqual(before);
    });
  }

  it('--if-missing writes the set into an empty directory', async () => {
    const dir = join(tempDir(), 'auth');
    const r = await natsAuth(['--cluster', 'c1', '--out', dir, '--if-missing']);
    expect(r.code).toBe(0);
    expect(readdirSync(dir)).toContain('auth.conf');
  });

  it('an existing directory others could read is closed to them', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'README.md'), 'generated keys go here\n');
    chmodSync(dir, 0o755);
    expect((await natsAuth(['--cluster', 'c1', '--out', dir])).code).toBe(0);
    expect(mode(dir)).toBe(0o700);
  });
});

describe('slicemesh nats-auth checks its flags before writing anything', () => {
  const cases: { name: string; argv: string[]; line: RegExp }[] = [
    { name: 'no cluster', argv: ['--out', 'DIR'], line: /needs --cluster ID/ },
    { name: 'no output directory', argv: ['--cluster', 'c1'], line: /needs --out DIR/ },
    { name: 'an agent name that is a path', argv: ['--cluster', 'c1', '--out', 'DIR', '--agents', 'a,../b'], line: /--agents: "\.\.\/b" is not a usable agent name/ },
    { name: 'an empty agent name', argv: ['--cluster', 'c1', '--out', 'DIR', '--agents', 'a,,b'], line: /--agents: "" is not a usable agent name/ },
    { name: 'an agent named twice', argv: ['--cluster', 'c1', '--out', 'DIR', '--agents', 'a,b,a'], line: /--agents: an agent is named twice/ },
    { name: '--force with --if-missing', argv: ['--cluster', 'c1', '--out', 'DIR', '--force', '--if-missing'], line: /give --force or --if-missing, not both/ },
    { name: 'a stream name the services would refuse', argv: ['--cluster', 'c1', '--out', 'DIR', '--kube-stream', 'K.UBE'], line: /--kube-stream "K\.UBE": must be \[A-Za-z0-9_-\]\+/ },
    { name: 'a subject prefix without its dot', argv: ['--cluster', 'c1', '--out', 'DIR', '--subject-prefix', 't1'], line: /--subject-prefix "t1": must be empty or dot-terminated tokens/ },
    { name: '--leafnodes without the URL the leaves dial', argv: ['--cluster', 'c1', '--out', 'DIR', '--leafnodes', 'a'], line: /--leafnodes needs --hub-url URL/ },
    { name: '--hub-url without leaves', argv: ['--cluster', 'c1', '--out', 'DIR', '--hub-url', 'nats-leaf://hub:7422'], line: /--hub-url goes with --leafnodes NAMES/ },
    { name: 'a hub URL a leaf remote cannot dial', argv: ['--cluster', 'c1', '--out', 'DIR', '--leafnodes', 'a', '--hub-url', 'http://hub:7422'], line: /--hub-url "http:\/\/hub:7422" must be nats-leaf:\/\/, tls:\/\/, ws:\/\/ or wss:\/\/, not http:\/\// },
    { name: 'a hub URL with credentials of its own', argv: ['--cluster', 'c1', '--out', 'DIR', '--leafnodes', 'a', '--hub-url', 'nats-leaf://u:p@hub:7422'], line: /must not carry credentials: each leaf gets its own/ },
    { name: 'a leaf name that is a path', argv: ['--cluster', 'c1', '--out', 'DIR', '--leafnodes', 'a/b', '--hub-url', 'nats-leaf://hub:7422'], line: /--leafnodes: "a\/b" is not a leaf name/ },
    { name: 'a cluster given twice', argv: ['--cluster', 'c1', '--cluster', 'c1', '--out', 'DIR'], line: /--cluster "c1" is given twice/ },
    { name: 'one of several clusters that cannot name a directory', argv: ['--cluster', 'c1', '--cluster', '../c2', '--out', 'DIR'], line: /--cluster "\.\.\/c2" cannot name its keys' directory/ },
    { name: 'fewer subject prefixes than clusters, but more than one', argv: ['--cluster', 'a', '--cluster', 'b', '--cluster', 'c', '--subject-prefix', 'a.', '--subject-prefix', 'b.', '--out', 'DIR'], line: /2 --subject-prefix for 3 --cluster: give one for all, or one per cluster/ },
    { name: 'two clusters with one subject prefix each, the same', argv: ['--cluster', 'a', '--cluster', 'b', '--subject-prefix', 'p.', '--subject-prefix', 'p.', '--out', 'DIR'], line: /--subject-prefix "p\." is given for two clusters: each needs its own/ },
    { name: 'an exports domain that is no subject token', argv: ['--cluster', 'c1', '--out', 'DIR', '--exports-domain', 'hub.x'], line: /--exports-domain "hub\.x": must be \[A-Za-z0-9_-\]\+/ },
    { name: 'an exports bucket the mcs would refuse', argv: ['--cluster', 'c1', '--out', 'DIR', '--exports-bucket', 'a b'], line: /--exports-bucket "a b": must be \[A-Za-z0-9_-\]\+/ },
    { name: 'an unknown flag', argv: ['--cluster', 'c1', '--out', 'DIR', '--frobnicate'], line: /^slicemesh: nats-auth: Unknown option '--frobnicate'/ },
    { name: 'an extra argument', argv: ['--cluster', 'c1', '--out', 'DIR', 'extra'], line: /unexpected argument "extra"/ },
  ];
  for (const tc of cases) {
    it(`${tc.name}: exit 2, one line, no directory made`, async () => {
      const cwd = tempDir();
      const argv = tc.argv.map((a) => (a === 'DIR' ? join(cwd, 'auth') : a));
      const r = await natsAuth(argv);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.slice(0, -1)).not.toContain('\n');
      expect(r.stderr).toMatch(tc.line);
      expect(readdirSync(cwd)).toEqual([]);
    });
  }

  it('--help prints the usage on stdout', async () => {
    const r = await natsAuth(['--help']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toMatch(/^Usage: slicemesh nats-auth --cluster ID \[--cluster ID \.\.\.\] --out DIR/);
  });
});
