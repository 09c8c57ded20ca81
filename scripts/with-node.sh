#!/usr/bin/env bash
# Runs a command with the Node.js slicemesh needs first on PATH (see node-env.sh):
#   bash scripts/with-node.sh node services/cli/src/main.ts plan -f cluster.json
set -euo pipefail
source "$(dirname "$0")/node-env.sh"
exec "$@"
