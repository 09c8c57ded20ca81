#!/usr/bin/env bash
# `npm test`: typecheck, lint and every test tier (unit, integration against real Postgres/NATS/
# kernel, end-to-end). Starts local Postgres/NATS first unless DATABASE_URL/NATS_URL are set.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-env.sh
echo "test: node $(node --version)"
bash scripts/ensure-servers.sh
export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
export NATS_URL="${NATS_URL:-nats://127.0.0.1:4222}"
echo "test: typecheck"; npx tsc -p tsconfig.json
echo "test: lint"; npx eslint --max-warnings 0 .
echo "test: vitest"; npx vitest run "$@"
