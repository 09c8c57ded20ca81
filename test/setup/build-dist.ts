// Integration tests run some programs as users get them, from the bundles in dist/: build them
// once before the tier starts (about half a second).
import { buildDist } from '../../scripts/build.ts';

// vitest calls a global setup file's default export.
// eslint-disable-next-line no-restricted-syntax
export default async function setup(): Promise<void> {
  await buildDist();
}
