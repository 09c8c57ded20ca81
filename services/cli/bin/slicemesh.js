#!/usr/bin/env node
// `slicemesh` in the repository (`npx slicemesh` right after `npm ci`): runs the TypeScript
// sources, which Node strips of their types. The image runs the bundle dist/slicemesh.js instead.
import { readFileSync } from 'node:fs';

const need = Number(readFileSync(new URL('../../../.nvmrc', import.meta.url), 'utf8').trim());
const major = Number(process.versions.node.split('.')[0]);
if (major < need) {
  process.stderr.write(`slicemesh: needs Node.js ${need} or newer (this is ${process.version}); install it, or run through the project's: bash scripts/with-node.sh npx slicemesh …\n`);
  process.exit(1);
}
await import('../src/main.ts');
