#!/usr/bin/env bash
# `npm run chaos`: the fault campaign (services/stack/src/chaos/). The services run as built
# (dist/, bundled here first); the campaign starts its own nats-server and Postgres, so it never
# touches the machine's shared ones. Flags: npm run chaos -- --help
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-env.sh
node scripts/build.ts >/dev/null
exec node --enable-source-maps services/stack/src/chaos/main.ts --built "$@"
