#!/usr/bin/env bash
# `npm start`: the whole control plane on a simulated multi-zone cluster, run as built for
# production (dist/, bundled here first, about half a second). Flags go to the stack: npm start -- --help
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-env.sh
bash scripts/ensure-servers.sh
node scripts/build.ts >/dev/null
exec node --enable-source-maps dist/stack.js "$@"
