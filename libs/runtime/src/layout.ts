// Where the running program's files are. `npm run build` bundles every program into
// dist/<program>.js (shared code in dist/chunks/), so a module's own URL says little about the
// repository layout there; these helpers answer from the `dist/` directory instead.
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const DIST = `${sep}dist${sep}`;

/** The directory that holds `dist/` when `moduleUrl` is part of the built bundles, else undefined (the TypeScript sources run directly). */
export function builtRootOf(moduleUrl: string): string | undefined {
  const path = fileURLToPath(moduleUrl);
  if (!path.endsWith('.js')) return undefined;
  const at = path.lastIndexOf(DIST);
  return at < 0 ? undefined : path.slice(0, at);
}
