#!/usr/bin/env bash
# Proves infra/Dockerfile and docker-compose.yml by running them (needs a Docker engine, so it is
# not part of `npm test`): builds the image, brings the whole stack up (NATS locked down with the
# keys of the one-shot nats-auth service), waits for every service's /readyz, asks the simulated
# cluster through kubectl, reads the agents' rules, checks that NATS refuses a client without
# credentials and lets the reader's seed read the log, and tears it all down. Where no registry can be pulled from, it first makes local stand-ins for the base images
# (infra/local-images/build.sh). Works with `docker compose` (v2) and `docker-compose` (v1).
#   bash scripts/compose-smoke.sh              # KEEP=1 leaves the stack running
set -euo pipefail
cd "$(dirname "$0")/.."
PROJECT="${PROJECT:-slicemesh-smoke}"
NODE_MAJOR="$(tr -dc '0-9' < .nvmrc)"
t0=$SECONDS
say() { printf '[%4ss] %s\n' "$((SECONDS - t0))" "$*"; }
fail() { say "FAIL: $*"; exit 1; }

command -v docker >/dev/null || fail "docker is not installed"
docker info >/dev/null 2>&1 || fail "no Docker engine answers (start dockerd)"
if docker compose version >/dev/null 2>&1; then compose=(docker compose); else compose=(docker-compose); fi
command -v "${compose[0]}" >/dev/null || fail "neither 'docker compose' nor 'docker-compose' is installed"
say "compose: $("${compose[@]}" version --short 2>/dev/null || "${compose[@]}" version | head -1)"

# Base images: as they are, pulled, or (where nothing can be pulled) local stand-ins.
missing=0
for image in "node:${NODE_MAJOR}-bookworm-slim" nats:2.9-alpine postgres:15-alpine; do
  docker image inspect "$image" >/dev/null 2>&1 && continue
  if docker pull -q "$image" >/dev/null 2>&1; then say "pulled $image"; else missing=1; fi
done
if [ "$missing" = 1 ]; then say "a base image cannot be pulled; making local stand-ins"; bash infra/local-images/build.sh; fi

# Free host ports: the host may run its own NATS and Postgres on the default ones.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
for name in NATS NATS_MONITOR POSTGRES SIM WATCHER SLICER HINTS MCS PUBLISHER AGENT_A AGENT_B AGENT_C; do
  export "SLICEMESH_${name}_PORT=$(free_port)"
done
dc() { "${compose[@]}" -p "$PROJECT" "$@"; }

cleanup() {
  local code=$?
  if [ "$code" != 0 ]; then say "logs of the last 40 s:"; dc logs --no-color --tail 15 2>&1 | tail -80 || true; fi
  if [ "${KEEP:-0}" = 1 ]; then say "KEEP=1: left running (project $PROJECT)"; else dc down -v --remove-orphans >/dev/null 2>&1 || true; say "torn down"; fi
  exit "$code"
}
trap cleanup EXIT

say "building the image"
tb=$SECONDS
build_log="$(mktemp)"
if ! dc build >"$build_log" 2>&1; then tail -40 "$build_log"; rm -f "$build_log"; fail "the image did not build (its last lines are above)"; fi
rm -f "$build_log"
size=$(docker image inspect slicemesh:dev --format '{{.Size}}')
base=$(docker image inspect "node:${NODE_MAJOR}-bookworm-slim" --format '{{.Size}}')
say "image slicemesh:dev built in $((SECONDS - tb)) s: $((size / 1048576)) MiB, $(((size - base) / 1048576)) MiB over its base"

say "docker compose up"
dc up -d >/dev/null 2>&1 || dc up -d
ours=(cluster-sim watcher slicer hints mcs publisher proxy-agent-a proxy-agent-b proxy-agent-c)
declare -A port=([cluster-sim]=SIM [watcher]=WATCHER [slicer]=SLICER [hints]=HINTS [mcs]=MCS [publisher]=PUBLISHER [proxy-agent-a]=AGENT_A [proxy-agent-b]=AGENT_B [proxy-agent-c]=AGENT_C)
tu=$SECONDS
for svc in "${ours[@]}"; do
  var="SLICEMESH_${port[$svc]}_PORT"
  until curl -fs -o /dev/null "http://127.0.0.1:${!var}/readyz" 2>/dev/null; do
    [ $((SECONDS - tu)) -lt 180 ] || fail "$svc: /readyz on :${!var} not 200 after 180 s"
    sleep 1
  done
  say "$svc /readyz 200 ($((SECONDS - tu)) s after up)"
done
for svc in "${ours[@]}"; do
  id=$(dc ps -q "$svc")
  until [ "$(docker inspect -f '{{.State.Health.Status}}' "$id")" = healthy ]; do
    [ $((SECONDS - tu)) -lt 240 ] || fail "$svc: HEALTHCHECK not healthy after 240 s"
    sleep 2
  done
  uid=$(docker inspect -f '{{.Config.User}}' "$id")
  say "$svc: docker health healthy, runs as user '${uid:-root}'"
done

kube=(kubectl --server "http://127.0.0.1:${SLICEMESH_SIM_PORT}")
nodes=$("${kube[@]}" get nodes --no-headers | wc -l)
pods=$("${kube[@]}" get pods -A --no-headers | wc -l)
[ "$nodes" -gt 0 ] && [ "$pods" -gt 0 ] || fail "kubectl sees $nodes nodes and $pods pods"
say "kubectl: $nodes nodes, $pods pods, $("${kube[@]}" get services -A --no-headers | wc -l) services"

# The publisher (write mode in the compose file) puts the control plane's slices into the API.
ts=$SECONDS
until [ "$("${kube[@]}" get endpointslices -A -l endpointslice.kubernetes.io/managed-by=endpointslice-controller.k8s.io --no-headers 2>/dev/null | wc -l)" -gt 0 ]; do
  [ $((SECONDS - ts)) -lt 120 ] || fail "kubectl get endpointslices: none written by the publisher after 120 s"
  sleep 2
done
say "kubectl: $("${kube[@]}" get endpointslices -A --no-headers | wc -l) EndpointSlices in the API, $("${kube[@]}" get endpointslices -A -l endpointslice.kubernetes.io/managed-by=endpointslice-controller.k8s.io --no-headers | wc -l) of them the publisher's"

# Every agent programs rules for the cluster's Services (the default scenario has several).
for zone in a b c; do
  file="/rules/worker-${zone}-1.rules"
  tr=$SECONDS
  until dc exec -T "proxy-agent-$zone" sh -c "test -s $file && grep -q SLICEMESH-SVC- $file" 2>/dev/null; do
    [ $((SECONDS - tr)) -lt 120 ] || fail "proxy-agent-$zone: no service chains in $file after 120 s"
    sleep 2
  done
  svcs=$(dc exec -T "proxy-agent-$zone" sh -c "grep -c '^:SLICEMESH-SVC-' $file" | tr -d '\r')
  seps=$(dc exec -T "proxy-agent-$zone" sh -c "grep -c '^:SLICEMESH-SEP-' $file" | tr -d '\r')
  say "proxy-agent-$zone: $file holds $svcs service chains and $seps endpoint chains"
done

# The pipeline moved: events published, ingested and reconciled, views put into KV.
metric() { curl -fsS "http://127.0.0.1:$1/metrics" | awk -v m="$2" '$1 ~ "^"m"({|$)" {n += $2} END {print n + 0}'; }
published=$(metric "$SLICEMESH_WATCHER_PORT" slicemesh_watcher_events_published_total)
ingested=$(metric "$SLICEMESH_SLICER_PORT" slicemesh_slicer_events_ingested_total)
reconciles=$(metric "$SLICEMESH_SLICER_PORT" slicemesh_slicer_reconciles_total)
puts=$(metric "$SLICEMESH_HINTS_PORT" slicemesh_hints_kv_puts_total)
[ "$published" -gt 0 ] && [ "$ingested" -gt 0 ] && [ "$reconciles" -gt 0 ] && [ "$puts" -gt 0 ] || fail "a stage did nothing: published $published, ingested $ingested, reconciles $reconciles, KV puts $puts"
say "metrics: watcher published $published events, slicer ingested $ingested and ran $reconciles reconciles, hints put $puts KV entries"
# The mcs of a set of one: its own heartbeat reaches the exports bucket on the same server.
tm=$SECONDS
until [ "$(metric "$SLICEMESH_MCS_PORT" slicemesh_mcs_live_clusters)" = 1 ]; do
  [ $((SECONDS - tm)) -lt 60 ] || fail "mcs: its own cluster is not live after 60 s (no heartbeat in the exports bucket)"
  sleep 2
done
say "mcs: its cluster live in the exports bucket ($(metric "$SLICEMESH_MCS_PORT" slicemesh_mcs_heartbeats_total) heartbeats), $(metric "$SLICEMESH_MCS_PORT" slicemesh_mcs_imports) imports"
# NATS is locked down: the key job finished, a client without credentials is refused, and the
# CLI in the image reads the live log with the reader's seed (inside the compose network).
init=$(dc ps -q nats-auth)
[ "$(docker inspect -f '{{.State.ExitCode}}' "$init")" = 0 ] || fail "nats-auth: the key job did not exit 0"
if anonymous=$(dc run --rm --no-deps -T -e NATS_NKEY_SEED_FILE= watcher dist/slicemesh.js log at latest 2>&1); then fail "NATS let slicemesh log in without credentials: $anonymous"; fi
grep -q 'Authorization Violation' <<<"$anonymous" || fail "slicemesh log without credentials failed otherwise: $(tail -1 <<<"$anonymous")"
at=$(dc run --rm --no-deps -T -e NATS_NKEY_SEED_FILE=/nats-auth/reader.nk watcher dist/slicemesh.js log at latest --output json 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["at"]["seq"])') \
  || fail "slicemesh log with the reader's seed did not read the log"
say "NATS locked down: no credentials refused; the reader's seed read the log up to KUBE seq $at"
# The offline planner in the image: the compose file's one-shot `plan` service.
items=$(dc --profile offline run --rm plan 2>/dev/null | grep -c '"kind": "EndpointSlice"' || true)
[ "$items" -gt 0 ] || fail "docker compose --profile offline run plan printed no EndpointSlice"
say "offline plan in the image: $items EndpointSlices planned from examples/example-cluster.json"
say "PASS in $((SECONDS - t0)) s"
