// A Service port sent with `"name": ""` — what clients that write every field send for an
// unnamed port — is an unnamed port, as the API server reads it (F.13). Run as users run the
// sources: `node services/cli/src/main.ts` on a small cluster written that way.

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MAIN = 'services/cli/src/main.ts';
const FIXTURE = 'test/fixtures/unnamed-service-port.json';

function slicemesh(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [MAIN, ...args, '-f', FIXTURE], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface SliceOut {
  readonly metadata: { readonly labels: Record<string, string> };
  readonly endpoints: readonly { readonly addresses: readonly string[] }[];
  readonly ports: readonly unknown[];
}

describe('slicemesh on a Service whose only port is named ""', () => {
  it('plan exits 0 and plans the slice with port name "", as the EndpointSlice controller writes it', () => {
    const r = slicemesh(['plan', '--output', 'changes']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const { create } = JSON.parse(r.stdout) as { create: SliceOut[] };
    expect(create).toHaveLength(1);
    const slice = create[0] as SliceOut;
    expect(slice.metadata.labels['kubernetes.io/service-name']).toBe('web');
    // The unnamed service port's targetPort "http" resolves to the pods' container port.
    expect(slice.ports).toEqual([{ name: '', port: 8080, protocol: 'TCP' }]);
    expect(slice.endpoints.flatMap((e) => e.addresses).sort()).toEqual(['10.244.1.5', '10.244.2.7']);
  });

  const others: { name: string; args: string[] }[] = [
    { name: 'hints exits 0', args: ['hints'] },
    { name: 'proxy-plan exits 0', args: ['proxy-plan', '--node', 'node-a1'] },
  ];
  for (const tc of others) {
    it(tc.name, () => {
      const r = slicemesh(tc.args);
      expect([r.code, r.stderr]).toEqual([0, '']);
      expect(() => JSON.parse(r.stdout) as unknown).not.toThrow();
    });
  }
});
