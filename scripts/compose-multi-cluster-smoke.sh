#!/usr/bin/env bash
# Proves docker-compose.multi-cluster.yml by running it (needs a Docker engine, so it is not part
# of `npm test`): builds the image, brings up the hub, both leaves (locked down with the keys of
# the three one-shot jobs) and both clusters' services, waits for every service's /readyz, then
# checks the cluster set: each mcs sees both clusters live and imports both exports, cluster B's
# agent programs cluster A's exported shop/cart at its ClusterSet IP with A's pod addresses (and A's
# agent B's shop/search), NATS refuses a client without credentials and cluster B's reader seed
# reads B's log. Tears it all down. Where no registry can be pulled from, it first makes local
# stand-ins for the base images (infra/local-images/build.sh). Works with `docker compose` (v2)
# and `docker-compose` (v1).
#   bash scripts/compose-multi-cluster-smoke.sh     # KEEP=1 leaves the stack running
set -euo pipefail
cd "$(dirname "$0")/.."
PROJECT="${PROJECT:-slicemesh-mc-smoke}"
FILE=docker-compose.multi-cluster.yml
NODE_MAJOR="$(tr -dc '0-9' < .nvmrc)"
t0=$SECONDS
say() { printf '[%4ss] %s\n' "$((SECONDS - t0))" "$*"; }
fail() { say "FAIL: $*"; exit 1; }

command -v docker >/dev/null || fail "docker is not installed"
docker info >/dev/null 2>&1 || fail "no Docker engine answers (start dockerd)"
if docker compose version >/dev/null 2>&1; then compose=(docker compose); else compose=(docker-compose); fi
command -v "${compose[0]}" >/dev/null || fail "neither 'docker compose' nor 'docker-compose' is installed"
say "compose: $("${compose[@]}" version --short 2>/dev/null || "${compose[@]}" version | head -1)"

missing=0
for image in "node:${NODE_MAJOR}-bookworm-slim" nats:2.9-alpine postgres:15-alpine; do
  docker image inspect "$image" >/dev/null 2>&1 && continue
  if docker pull -q "$image" >/dev/null 2>&1; then say "pulled $image"; else missing=1; fi
done
if [ "$missing" = 1 ]; then say "a base image cannot be pulled; making local stand-ins"; bash infra/local-images/build.sh; fi

# Free host ports for everything the file publishes (the host may run other stacks).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
for name in HUB HUB_MONITOR LEAF_A LEAF_A_MONITOR LEAF_B LEAF_B_MONITOR POSTGRES SIM_A SIM_B \
  WATCHER_A SLICER_A HINTS_A MCS_A AGENT_A WATCHER_B SLICER_B HINTS_B MCS_B AGENT_B; do
  export "SLICEMESH_MC_${name}_PORT=$(free_port)"
done
dc() { "${compose[@]}" -p "$PROJECT" -f "$FILE" "$@"; }

cleanup() {
  local code=$?
  if [ "$code" != 0 ]; then say "logs of the last lines:"; dc logs --no-color --tail 15 2>&1 | tail -100 || true; fi
  if [ "${KEEP:-0}" = 1 ]; then say "KEEP=1: left running (project $PROJECT)"; else dc down -v --remove-orphans >/dev/null 2>&1 || true; say "torn down"; fi
  exit "$code"
}
trap cleanup EXIT

say "building the image"
tb=$SECONDS
build_log="$(mktemp)"
# One build for every service (they share the image slicemesh:dev).
if ! docker build -f infra/Dockerfile -t slicemesh:dev . >"$build_log" 2>&1; then tail -40 "$build_log"; rm -f "$build_log"; fail "the image did not build (its last lines are above)"; fi
rm -f "$build_log"
say "image slicemesh:dev built in $((SECONDS - tb)) s"

say "compose up ($FILE)"
dc up -d --no-build >/dev/null 2>&1 || dc up -d --no-build
declare -A port=([cluster-sim-a]=SIM_A [watcher-a]=WATCHER_A [slicer-a]=SLICER_A [hints-a]=HINTS_A [mcs-a]=MCS_A [proxy-agent-a]=AGENT_A
  [cluster-sim-b]=SIM_B [watcher-b]=WATCHER_B [slicer-b]=SLICER_B [hints-b]=HINTS_B [mcs-b]=MCS_B [proxy-agent-b]=AGENT_B)
tu=$SECONDS
for svc in cluster-sim-a watcher-a slicer-a hints-a mcs-a proxy-agent-a cluster-sim-b watcher-b slicer-b hints-b mcs-b proxy-agent-b; do
  var="SLICEMESH_MC_${port[$svc]}_PORT"
  until curl -fs -o /dev/null "http://127.0.0.1:${!var}/readyz" 2>/dev/null; do
    [ $((SECONDS - tu)) -lt 240 ] || fail "$svc: /readyz on :${!var} not 200 after 240 s"
    sleep 1
  done
  say "$svc /readyz 200 ($((SECONDS - tu)) s after up)"
done
for job in nats-auth-hub nats-auth-leaf-a nats-auth-leaf-b; do
  [ "$(docker inspect -f '{{.State.ExitCode}}' "$(dc ps -q "$job")")" = 0 ] || fail "$job: the key job did not exit 0"
done
leaves=$(curl -fsS "http://127.0.0.1:${SLICEMESH_MC_HUB_MONITOR_PORT}/leafz" | python3 -c 'import json, sys; print(json.load(sys.stdin)["leafnodes"])')
[ "$leaves" = 2 ] || fail "the hub has $leaves leafnode connections, not 2"
say "the key jobs exited 0; the hub has both leaves connected"

# Each mcs: both clusters live (heartbeats through the hub) and both exports imported.
metric() { curl -fsS "http://127.0.0.1:$1/metrics" | awk -v m="$2" '$1 ~ "^"m"({|$)" {n += $2} END {print n + 0}'; }
for x in A B; do
  var="SLICEMESH_MC_MCS_${x}_PORT"
  tm=$SECONDS
  until [ "$(metric "${!var}" slicemesh_mcs_live_clusters)" = 2 ] && [ "$(metric "${!var}" slicemesh_mcs_imports)" -ge 2 ]; do
    [ $((SECONDS - tm)) -lt 120 ] || fail "mcs-${x,,}: $(metric "${!var}" slicemesh_mcs_live_clusters) live clusters and $(metric "${!var}" slicemesh_mcs_imports) imports after 120 s (want 2 and 2)"
    sleep 2
  done
  say "mcs-${x,,}: 2 live clusters, $(metric "${!var}" slicemesh_mcs_imports) imports, $(metric "${!var}" slicemesh_mcs_heartbeats_total) heartbeats written to the hub"
done

# The imports reach the data plane: each cluster's agent sends a ClusterSet IP (243.0.0.0/16) to
# the other cluster's pods (A's pods are in 10.244.0.0/14, B's in 10.248.0.0/14; infra/compose).
rules_of() { dc exec -T "proxy-agent-$1" sh -c "cat /rules/cluster-$1-worker-a-1.rules" 2>/dev/null | tr -d '\r'; }
imported() { # agent, the other cluster's pod prefix: the derived Services whose endpoints are the other's pods
  rules_of "$1" | awk -v p="$2" '/-j DNAT --to-destination/ && $0 ~ "--to-destination " p {for (i = 1; i <= NF; i++) if ($i == "--comment") print $(i + 1)}' | sort -u
}
for pair in "b 10.244." "a 10.248."; do
  set -- $pair
  ti=$SECONDS
  until [ -n "$(imported "$1" "$2" | grep derived- || true)" ]; do
    [ $((SECONDS - ti)) -lt 120 ] || fail "proxy-agent-$1: no derived Service with endpoints $2* after 120 s"
    sleep 2
  done
  svc=$(imported "$1" "$2" | grep derived- | head -1 | cut -d: -f1)
  ip=$(rules_of "$1" | grep -- "--comment \"$svc:[^ ]* cluster IP\"" | grep -o -- '-d 243\.0\.[0-9.]*' | head -1 | cut -c4-)
  [ -n "$ip" ] || fail "proxy-agent-$1: $svc has no ClusterSet IP in 243.0.0.0/16"
  say "proxy-agent-$1: imports $svc at ClusterSet IP $ip, sent to the other cluster's pods $(rules_of "$1" | grep -F -- "$svc:" | grep -o -- "--to-destination $2[0-9.:]*" | cut -d' ' -f2 | sort -u | tr '\n' ' ')"
done
[ -n "$(imported b 10.244. | grep derived- || true)" ] && [ -z "$(rules_of b | grep -- '--comment "shop/cart:' || true)" ] || fail "cluster B programs shop/cart under its own name: it has no cart of its own"

# NATS is locked down: no credentials are refused; cluster B's reader seed reads B's log.
if anonymous=$(dc run --rm --no-deps -T -e NATS_NKEY_SEED_FILE= watcher-b dist/slicemesh.js log at latest 2>&1); then fail "leaf-b let slicemesh log in without credentials: $anonymous"; fi
grep -q 'Authorization Violation' <<<"$anonymous" || fail "slicemesh log without credentials failed otherwise: $(tail -1 <<<"$anonymous")"
at=$(dc run --rm --no-deps -T -e NATS_NKEY_SEED_FILE=/nats-auth/leaf-b/reader.nk watcher-b dist/slicemesh.js log at latest --output json 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["at"]["seq"])') \
  || fail "slicemesh log with cluster B's reader seed did not read B's log"
say "NATS locked down: no credentials refused; cluster B's reader seed read B's log up to KUBE seq $at"
say "PASS in $((SECONDS - t0)) s"
