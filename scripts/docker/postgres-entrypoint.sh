#!/bin/sh
# Entrypoint of the locally built PostgreSQL image (scripts/docker/base-images.sh). It reads
# the same settings as the official image, so compose.yaml works with either: on an empty
# PGDATA it runs initdb with POSTGRES_USER (default postgres) and POSTGRES_PASSWORD
# (required), password authentication from any address, and creates POSTGRES_DB; then it
# runs the server as the postgres user.
set -eu
PGDATA="${PGDATA:-/var/lib/postgresql/data}"
USER_NAME="${POSTGRES_USER:-postgres}"
DB_NAME="${POSTGRES_DB:-$USER_NAME}"

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown -R postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 0700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "POSTGRES_PASSWORD must be set to initialise an empty database directory" >&2
    exit 1
  fi
  pwfile="$(mktemp)"
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb --username="$USER_NAME" --pwfile="$pwfile" --auth=scram-sha-256 --encoding=UTF8 \
    -D "$PGDATA" >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
  if [ "$DB_NAME" != postgres ]; then
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    PGPASSWORD="$POSTGRES_PASSWORD" createdb -h /var/run/postgresql -U "$USER_NAME" "$DB_NAME"
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  fi
  echo "initialised $PGDATA"
fi

if [ "${1:-}" = postgres ]; then
  exec "$@" -D "$PGDATA"
fi
exec "$@"
