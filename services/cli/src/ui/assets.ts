// The page's static files. From the sources they are read beside this module (ui/assets/); in
// the bundles, scripts/build.ts has copied them to dist/ui/, since dist/ keeps no source tree.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtRootOf } from '@slicemesh/runtime';

export interface Asset {
  readonly type: string;
  readonly body: Buffer;
}

/** Served path → file name and content type. */
export const ASSET_FILES: Readonly<Record<string, { readonly file: string; readonly type: string }>> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
};

/** Where the page's files are for the program running `moduleUrl` (this module by default). */
export function assetDirOf(moduleUrl: string = import.meta.url): string {
  const built = builtRootOf(moduleUrl);
  return built === undefined ? fileURLToPath(new URL('./assets/', moduleUrl)) : join(built, 'dist', 'ui');
}

/** Reads every asset once, at start, so a missing file fails the command rather than a request. */
export async function loadAssets(dir: string = assetDirOf()): Promise<ReadonlyMap<string, Asset>> {
  const out = new Map<string, Asset>();
  for (const [path, { file, type }] of Object.entries(ASSET_FILES)) {
    try {
      out.set(path, { type, body: await readFile(join(dir, file)) });
    } catch (err) {
      throw new Error(`the web view's page is missing: cannot read ${join(dir, file)} (${(err as NodeJS.ErrnoException).code ?? String(err)})`, { cause: err });
    }
  }
  return out;
}
