#!/usr/bin/env bash
# Makes sure PostgreSQL and NATS (with JetStream) answer on 127.0.0.1, starting them if they are
# installed but stopped, and installing Debian's packages if they are missing (needs root).
# Skipped entirely when DATABASE_URL and NATS_URL already point somewhere else.
set -euo pipefail

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() {
  for _ in $(seq 1 60); do port_open "$1" && return 0; sleep 0.5; done
  echo "ensure-servers: nothing answers on 127.0.0.1:$1 after 30 s ($2)" >&2
  return 1
}

apt_install() {
  if [ "$(id -u)" != 0 ]; then echo "ensure-servers: $* missing and not root; install it or set the URL" >&2; return 1; fi
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

if [ -z "${DATABASE_URL:-}" ]; then
  if ! port_open 5432; then
    command -v pg_ctlcluster >/dev/null || apt_install postgresql
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
    wait_port 5432 postgres
  fi
  echo "ensure-servers: postgres up on 127.0.0.1:5432"
fi

if [ -z "${NATS_URL:-}" ]; then
  if ! port_open 4222; then
    command -v nats-server >/dev/null || apt_install nats-server
    mkdir -p /var/lib/nats-server
    start-stop-daemon --start --oknodo --background --exec "$(command -v nats-server)" -- \
      -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
    wait_port 4222 nats-server
  fi
  echo "ensure-servers: nats up on 127.0.0.1:4222"
fi
