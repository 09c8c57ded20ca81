// The CLI as users run it, in both forms: the bundle the image ships (dist/slicemesh.js, built by
// the test setup) and bin/slicemesh.js in the repository (the sources, which Node strips of their
// types); each is checked for exit codes, one-line errors and JSON output.

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FORMS = [
  { name: 'dist/slicemesh.js', bin: 'dist/slicemesh.js' },
  { name: 'bin/slicemesh.js (sources)', bin: 'services/cli/bin/slicemesh.js' },
];
const FIXTURE = 'test/fixtures/example-cluster.json';

function run(bin: string, args: string[], stdin = ''): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: ROOT, input: stdin, encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe.each(FORMS)('slicemesh process: $name', ({ bin }) => {
  const slicemesh = (args: string[], stdin = '') => run(bin, args, stdin);
  const failures: { name: string; args: string[]; stdin?: string; line: RegExp }[] = [
    { name: 'invalid JSON exits 2 with one line', args: ['plan'], stdin: '{"kind": "List", items: []}', line: /^slicemesh: stdin: <json>: invalid JSON at line 1 column 18: / },
    { name: 'an invalid object exits 2 naming object and field', args: ['plan'], stdin: JSON.stringify({ kind: 'Pod', apiVersion: 'v1', metadata: { name: 'web*', namespace: 'default' }, spec: { containers: [{ name: 'c' }] } }), line: /^slicemesh: Pod default\/web\*: metadata\.name: "web\*" must be a DNS-1123 subdomain/ },
    { name: 'a bad flag exits 2', args: ['plan', '--no-such-flag', '-f', FIXTURE], line: /^slicemesh: unknown flag --no-such-flag$/ },
    { name: '--max-endpoints-per-slice 0 exits 2', args: ['plan', '--max-endpoints-per-slice', '0', '-f', FIXTURE], line: /^slicemesh: --max-endpoints-per-slice must be an integer between 1 and 1000/ },
    { name: '--max-endpoints-per-slice 1001 exits 2', args: ['plan', '--max-endpoints-per-slice', '1001', '-f', FIXTURE], line: /^slicemesh: --max-endpoints-per-slice must be an integer between 1 and 1000/ },
  ];
  for (const tc of failures) {
    it(tc.name, () => {
      const r = slicemesh(tc.args, tc.stdin);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      const lines = r.stderr.split('\n');
      expect(lines).toHaveLength(2); // one line and its newline
      expect(lines[0]).toMatch(tc.line);
    });
  }

  const successes: { name: string; args: string[]; check: (out: unknown) => void }[] = [
    { name: 'plan on the example cluster prints a List of slices', args: ['plan', '-f', FIXTURE], check: (o) => expect((o as { kind: string; items: unknown[] }).items.length).toBeGreaterThan(0) },
    { name: 'plan --output changes on the example cluster', args: ['plan', '-f', FIXTURE, '--output', 'changes'], check: (o) => expect(Object.keys(o as object)).toEqual(['create', 'update', 'delete']) },
    { name: 'hints on the example cluster', args: ['hints', '-f', FIXTURE], check: (o) => expect((o as { decisions: unknown[] }).decisions.length).toBeGreaterThan(0) },
    { name: 'proxy-plan on the example cluster', args: ['proxy-plan', '--node', 'node-a1', '-f', FIXTURE], check: (o) => expect(Array.isArray(o)).toBe(true) },
  ];
  for (const tc of successes) {
    it(tc.name, () => {
      const r = slicemesh(tc.args);
      expect([r.code, r.stderr]).toEqual([0, '']);
      tc.check(JSON.parse(r.stdout));
    });
  }

  it('reads the fixture from stdin like kubectl output piped in', () => {
    const r = slicemesh(['plan'], readFileSync(`${ROOT}/${FIXTURE}`, 'utf8'));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ kind: 'List' });
  });
});
