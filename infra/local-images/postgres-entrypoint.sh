#!/usr/bin/env bash
# First start: initdb into PGDATA with POSTGRES_USER's password, accept password logins from any
# address; then run the server as the postgres user (the official image behaves the same way).
set -euo pipefail
if [ "${1:-postgres}" != postgres ]; then exec "$@"; fi
: "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}"
user="${POSTGRES_USER:-postgres}"
mkdir -p "$PGDATA" /run/postgresql
chown -R postgres:postgres "$PGDATA" /run/postgresql
chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile="$(mktemp)"; printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"; chown postgres "$pwfile"
  su postgres -c "initdb -D '$PGDATA' -U '$user' --pwfile='$pwfile' --auth-host=scram-sha-256 --auth-local=trust" >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ -n "${POSTGRES_DB:-}" ] && [ "$POSTGRES_DB" != "$user" ]; then
    su postgres -c "postgres --single -D '$PGDATA' postgres" <<< "CREATE DATABASE \"$POSTGRES_DB\";" >/dev/null
  fi
fi
shift || true
exec su postgres -c "exec postgres -D '$PGDATA' -c listen_addresses='*' $*"
