// `npm run build`: bundles every program into dist/ as plain JavaScript with source maps, which
// is what the image, `npm start`, the replay and the benchmark run. Our own workspaces are
// bundled (one file per program, shared code in dist/chunks/); npm packages stay imports, so
// dist/ needs the production node_modules beside it. Development runs the sources directly.
//   node scripts/build.ts            # writes dist/
import { chmod, cp, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Plugin } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** dist/<name>.js ← source entry. */
export const PROGRAMS: Readonly<Record<string, string>> = {
  slicemesh: 'services/cli/src/main.ts',
  watcher: 'services/watcher/src/main.ts',
  slicer: 'services/slicer/src/main.ts',
  hints: 'services/hints/src/main.ts',
  publisher: 'services/publisher/src/main.ts',
  mcs: 'services/mcs/src/main.ts',
  'proxy-agent': 'services/proxy-agent/src/main.ts',
  'cluster-sim': 'services/cluster-sim/src/main.ts',
  stack: 'services/stack/src/main.ts',
  replay: 'services/stack/src/replay-main.ts',
  // Started by the proxy-agent's userspace backend inside the node's namespace (NETNS).
  'userspace-proxy-host': 'libs/netfilter/src/userspace-host.ts',
};

/** Bare imports other than our workspaces (and node: builtins) stay imports of node_modules. */
const npmPackagesExternal: Plugin = {
  name: 'npm-packages-external',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('@slicemesh/') ? undefined : { path: args.path, external: true }));
  },
};

export interface BuildResult {
  readonly ms: number;
  readonly bytes: number;
}

/**
 * Writes dist/ afresh; resolves with its time and size. `out` (default <root>/dist) lets a test
 * build a copy of its own without removing the dist/ other tests run; it must be a directory
 * named dist inside the repository, so the bundles find node_modules and their layout (builtRootOf).
 */
export async function buildDist(root = ROOT, final = join(root, 'dist')): Promise<BuildResult> {
  const t0 = performance.now();
  // Built beside dist/ and swapped in with two renames, so a program that starts meanwhile (a
  // restart during someone else's build) finds a whole dist/, never a half-written one.
  const out = `${final}.building-${process.pid}`;
  await rm(out, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: Object.entries(PROGRAMS).map(([name, src]) => ({ in: src, out: name })),
    outdir: out,
    bundle: true,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    format: 'esm',
    platform: 'node',
    target: 'node24',
    sourcemap: true,
    sourcesContent: false,
    // The bundles start like a program: `./dist/slicemesh.js plan …` works on its own.
    banner: { js: '#!/usr/bin/env -S node --enable-source-maps' },
    plugins: [npmPackagesExternal],
    metafile: true,
    logLevel: 'warning',
  });
  for (const name of Object.keys(PROGRAMS)) await chmod(join(out, `${name}.js`), 0o755);
  await mkdir(join(out, 'scenarios'), { recursive: true });
  await cp(join(root, 'services/cluster-sim/scenarios'), join(out, 'scenarios'), { recursive: true });
  // The web view's page (`slicemesh ui`), read from dist/ui by services/cli/src/ui/assets.ts.
  await cp(join(root, 'services/cli/src/ui/assets'), join(out, 'ui'), { recursive: true });
  // dist/ is ESM: a package.json there keeps it so wherever it is copied.
  await writeFile(join(out, 'package.json'), '{ "type": "module" }\n');
  const old = `${final}.old-${process.pid}`;
  await rename(final, old).catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  });
  await rename(out, final);
  await rm(old, { recursive: true, force: true });
  const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
  return { ms: performance.now() - t0, bytes };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const r = await buildDist();
  process.stdout.write(`build: dist/ written (${Object.keys(PROGRAMS).length} programs, ${(r.bytes / 1024).toFixed(0)} KiB with source maps) in ${r.ms.toFixed(0)} ms\n`);
}
