import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { oneLine, run } from './run.ts';
import type { CliResult } from './test-io.ts';
import { runCli } from './test-io.ts';

const FIXTURE = readFileSync(new URL('../../../test/fixtures/example-cluster.json', import.meta.url), 'utf8');
const files = { 'cluster.json': FIXTURE, 'broken.json': '{\n  "kind": "List",\n' };
const service = (port: unknown): string =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { selector: { app: 'web' }, ports: [{ port }] } });

/** Exactly one line on stderr, nothing on stdout, no stack trace. */
function expectOneLineError(r: CliResult, code: number, line: RegExp): void {
  expect(r.code).toBe(code);
  expect(r.stdout).toBe('');
  expect(r.stderr.endsWith('\n')).toBe(true);
  expect(r.stderr.slice(0, -1)).not.toContain('\n');
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(r.stderr.slice(0, -1)).toMatch(line);
}

describe('run maps failures to exit codes with one stderr line', () => {
  const cases: { name: string; argv: string[]; stdin?: string; code: number; line: RegExp }[] = [
    { name: 'invalid JSON exits 2 naming the position', argv: ['plan'], stdin: '{"kind": "List", "items": [}', code: 2, line: /^slicemesh: stdin: <json>: invalid JSON at line 1 column 28: / },
    { name: 'an unreadable file exits 2', argv: ['hints', '-f', 'bad.json'], code: 2, line: /^slicemesh: cannot read "bad.json": no such file$/ },
    { name: 'invalid JSON in a file names the file', argv: ['hints', '-f', 'broken.json'], code: 2, line: /^slicemesh: broken\.json: <json>: invalid JSON at line 3 column 1: unexpected end of input$/ },
    { name: 'an invalid object exits 2 naming object and field', argv: ['plan'], stdin: service(0), code: 2, line: /^slicemesh: Service default\/web: spec\.ports\[0\]\.port: must be between 1 and 65535/ },
    { name: 'an invalid object in proxy-plan exits 2 too', argv: ['proxy-plan', '--node', 'n1'], stdin: service(70000), code: 2, line: /^slicemesh: Service default\/web: spec\.ports\[0\]\.port: / },
    { name: 'a hostile name is escaped onto one line', argv: ['hints'], stdin: '[{"kind":"Node","metadata":{"name":"a\\nb\\u2028c"}}]', code: 2, line: /^slicemesh: item 0 \(kind Node\): metadata\.name: "a\\u000ab\\u2028c"/ },
    { name: 'a bad flag exits 2', argv: ['plan', '--frobnicate'], code: 2, line: /^slicemesh: unknown flag --frobnicate$/ },
    { name: '--max-endpoints-per-slice 0 exits 2 (A.8.1)', argv: ['plan', '--max-endpoints-per-slice', '0'], code: 2, line: /between 1 and 1000 \(got "0"\)$/ },
    { name: '--max-endpoints-per-slice 1001 exits 2 (A.8.1)', argv: ['plan', '--max-endpoints-per-slice', '1001'], code: 2, line: /between 1 and 1000 \(got "1001"\)$/ },
    { name: 'a non-numeric --max-endpoints-per-slice exits 2', argv: ['plan', '--max-endpoints-per-slice', '1e2'], code: 2, line: /between 1 and 1000/ },
    { name: 'proxy-plan without --node exits 2', argv: ['proxy-plan'], code: 2, line: /needs --node NAME$/ },
    { name: 'an unknown --format exits 2', argv: ['proxy-plan', '--node', 'n1', '--format', 'bpf'], code: 2, line: /--format must be one of json, iptables, nftables, ipvs/ },
    { name: 'an unknown --ip-family exits 2', argv: ['proxy-plan', '--node', 'n1', '--ip-family', 'v4'], code: 2, line: /--ip-family must be IPv4 or IPv6/ },
    { name: 'an unknown --iptables-chains exits 2', argv: ['proxy-plan', '--node', 'n1', '--iptables-chains', 'KUBE'], code: 2, line: /--iptables-chains must be one of own, kube-proxy \(got "KUBE"\)$/ },
    { name: '--iptables-chains belongs to proxy-plan only', argv: ['plan', '--iptables-chains', 'own'], code: 2, line: /iptables-chains/ },
    { name: 'an empty stdin exits 2', argv: ['plan'], stdin: '', code: 2, line: /^slicemesh: stdin: <json>: is empty/ },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      expectOneLineError(await runCli(tc.argv, tc.stdin ?? '', files), tc.code, tc.line);
    });
  }

  it('an unexpected error exits 1 with one line and no stack', async () => {
    const failing: AsyncIterable<string> = {
      [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new TypeError('stream exploded\nsecond line')) }),
    };
    let stderr = '';
    const code = await run(['plan'], { stdin: failing, stdout: { write: () => true }, stderr: { write: (s: string) => (stderr += s) } });
    expectOneLineError({ code, stdout: '', stderr }, 1, /^slicemesh: internal error: TypeError: stream exploded$/);
  });

  it('refuses to wait on a terminal when no input is piped', async () => {
    let stderr = '';
    const code = await run(['hints'], { stdin: '', stdinIsTTY: true, stdout: { write: () => true }, stderr: { write: (s: string) => (stderr += s) } });
    expectOneLineError({ code, stdout: '', stderr }, 2, /no input: pipe Kubernetes JSON into stdin or pass -f FILE/);
  });
});

describe('run succeeds', () => {
  it('--help prints usage on stdout and exits 0', async () => {
    const r = await runCli(['--help']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toMatch(/^Usage: slicemesh <command>/);
    expect(r.stdout).toContain('proxy-plan --node NAME');
  });

  it('plan --help prints only the plan usage', async () => {
    const r = await runCli(['plan', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: slicemesh plan/);
    expect(r.stdout).not.toContain('proxy-plan');
  });

  const cases: { name: string; argv: string[]; check: (out: unknown) => void }[] = [
    { name: 'plan prints a List of EndpointSlices for the fixture', argv: ['plan', '-f', 'cluster.json'], check: (o) => expect(o).toMatchObject({ apiVersion: 'v1', kind: 'List', items: expect.arrayContaining([expect.objectContaining({ kind: 'EndpointSlice' })]) }) },
    { name: 'plan --output changes prints exactly create/update/delete', argv: ['plan', '-f', 'cluster.json', '--output', 'changes'], check: (o) => expect(Object.keys(o as object)).toEqual(['create', 'update', 'delete']) },
    { name: 'hints prints slices and decisions', argv: ['hints', '-f', 'cluster.json'], check: (o) => expect(Object.keys(o as object)).toEqual(['slices', 'decisions']) },
    { name: 'proxy-plan prints one entry per service port', argv: ['proxy-plan', '--node', 'node-b1', '-f', 'cluster.json'], check: (o) => expect((o as { servicePort: string }[]).map((e) => e.servicePort)).toEqual(['data/legacy-db:pg/TCP', 'shop/api:grpc/TCP', 'shop/api:grpc/TCP', 'shop/web:http/TCP', 'shop/web:metrics/TCP']) },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const r = await runCli(tc.argv, '', files);
      expect([r.code, r.stderr]).toEqual([0, '']);
      expect(r.stdout.endsWith('}\n') || r.stdout.endsWith(']\n')).toBe(true);
      expect(r.stdout).toMatch(/^[[{]\n {2}\S/); // 2-space pretty JSON
      tc.check(JSON.parse(r.stdout));
    });
  }

  it('reads stdin when no file is given and "-" means stdin too', async () => {
    const a = await runCli(['hints'], FIXTURE);
    const b = await runCli(['hints', '-f', '-'], FIXTURE);
    const c = await runCli(['hints', '-f', 'cluster.json'], '', files);
    expect(a.code).toBe(0);
    expect([a.stdout, b.stdout]).toEqual([c.stdout, c.stdout]);
  });

  it('mentions skipped kinds on stderr and keeps stdout pure JSON', async () => {
    const r = await runCli(['plan'], JSON.stringify([{ kind: 'ConfigMap', metadata: { name: 'x' } }, { kind: 'Secret', metadata: { name: 'y' } }, { kind: 'ConfigMap' }]));
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('slicemesh: warning: ignored 3 object(s) of kinds slicemesh does not read: ConfigMap, Secret\n');
    expect(JSON.parse(r.stdout)).toEqual({ apiVersion: 'v1', kind: 'List', items: [], metadata: { resourceVersion: '' } });
  });

  it('the same input gives byte-identical output', async () => {
    const a = await runCli(['plan', '-f', 'cluster.json', '--output', 'changes'], '', files);
    const b = await runCli(['plan', '-f', 'cluster.json', '--output', 'changes'], '', files);
    expect(a.stdout).toBe(b.stdout);
  });
});

/** The `# <family>: ipvsadm-restore` sections of an IPVS node plan, as the older ipvsadm-only output. */
function ipvsadmSections(text: string): string {
  const sections = text.split(/^# IPv[46]: /m).filter((s) => s.startsWith('ipvsadm-restore\n'));
  return sections.map((s) => s.split('\n').slice(1).filter((l) => l !== '').map((l) => `${l}\n`).join('')).join('');
}

describe('D.4.15 proxy-plan --iptables-chains on the example cluster', () => {
  const sha = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);
  // sha256 (first 32 hex digits) of stdout before chain names had a prefix (commit 8c64935),
  // `slicemesh proxy-plan --node N --format F [--ip-family X] -f test/fixtures/example-cluster.json`.
  const before = [
    { node: 'cp-1', format: 'iptables', family: 'IPv4', sha: '5578aa51c2866ceb8d8cdb791a45618c' },
    { node: 'cp-1', format: 'iptables', family: 'IPv6', sha: 'b486821207b3f750dd832e1f8244693b' },
    { node: 'node-a1', format: 'iptables', family: 'IPv4', sha: '5578aa51c2866ceb8d8cdb791a45618c' },
    { node: 'node-b1', format: 'iptables', family: 'IPv4', sha: '83b7bb9529653be30a974e6c3637e3a7' },
    { node: 'node-b2', format: 'iptables', family: 'IPv6', sha: 'b486821207b3f750dd832e1f8244693b' },
    { node: 'node-c1', format: 'iptables', family: 'IPv4', sha: '99344ea66e240c896bc465d7e61c3840' },
    { node: 'node-c2', format: 'iptables', family: 'IPv4', sha: '99344ea66e240c896bc465d7e61c3840' },
    { node: 'node-a1', format: 'nftables', sha: '9f46afa48268b27239e16f1005e5094a' },
    { node: 'node-b1', format: 'nftables', sha: '13ccc10f474f71bef45a93bc2bddd89d' },
    { node: 'node-a1', format: 'ipvs', sha: 'f9f9ec4f86d45c39acea806f0b6ef8f2' },
    { node: 'node-b1', format: 'json', sha: '4c8e866a6bad47b9e5632b185cc356b8' },
  ];
  for (const tc of before) {
    it(`kube-proxy mode prints exactly what it printed before: ${tc.node} ${tc.format}${tc.family ? ` ${tc.family}` : ''}`, async () => {
      const argv = ['proxy-plan', '--node', tc.node, '--format', tc.format, ...(tc.family ? ['--ip-family', tc.family] : []), '--iptables-chains', 'kube-proxy', '-f', 'cluster.json'];
      const r = await runCli(argv, '', files);
      expect(r.code).toBe(0);
      // ipvs now prints the whole node plan; its ipvsadm-restore sections are what it printed before.
      expect(sha(tc.format === 'ipvs' ? ipvsadmSections(r.stdout) : r.stdout)).toBe(tc.sha);
    });
  }

  it('by default the rules carry our own names and mark, and no kube-proxy name', async () => {
    const r = await runCli(['proxy-plan', '--node', 'node-a1', '--format', 'iptables', '-f', 'cluster.json'], '', files);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^:SLICEMESH-SVC-[A-Z2-7]{14} - \[0:0\]$/m);
    expect(r.stdout).toMatch(/^:SLICEMESH-SEP-[A-Z2-7]{14} - \[0:0\]$/m);
    expect(r.stdout).toContain('-A SLICEMESH-MARK-MASQ -j MARK --or-mark 0x2000');
    expect(r.stdout).toContain('-I PREROUTING 1 -m comment --comment "kubernetes service portals" -j SLICEMESH-SERVICES');
    expect(r.stdout).not.toContain('KUBE-');
    expect(r.stdout).not.toContain('0x4000');
  });

  it('the default nftables rules use our mark too (the names were always our own table\'s)', async () => {
    const r = await runCli(['proxy-plan', '--node', 'node-a1', '--format', 'nftables', '-f', 'cluster.json'], '', files);
    expect(r.stdout).toContain('mark set mark or 0x2000');
  });
});

describe('oneLine', () => {
  const cases: { name: string; input: string; want: string }[] = [
    { name: 'joins lines', input: 'a\nb\r\nc', want: 'a b c' },
    { name: 'removes Unicode line and paragraph separators', input: 'a\u2028b\u2029c\u0085d', want: 'a b c d' },
    { name: 'removes other control characters', input: 'a\u0000\u001bb\u007f', want: 'a b' },
  ];
  for (const tc of cases) it(tc.name, () => expect(oneLine(tc.input)).toBe(tc.want));
});
