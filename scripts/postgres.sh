#!/usr/bin/env bash
# Starts the private PostgreSQL server hands serve's tests use (several nodes sharing one
# database), and does nothing if it already answers: Debian's `postgresql` binaries
# (/usr/lib/postgresql/*/bin, installed by scripts/test-env.sh), a cluster of its own in
# $HANDS_TEST_PG_DIR (default /tmp/hands-test-pg) on 127.0.0.1:$HANDS_TEST_PG_PORT (55432),
# superuser "hands", trust authentication on loopback only, fsync off (throwaway test data).
# As root it runs as the `postgres` user (PostgreSQL refuses to run as root).
set -uo pipefail
log() { echo "postgres.sh: $*" >&2; }
dir="${HANDS_TEST_PG_DIR:-/tmp/hands-test-pg}"
port="${HANDS_TEST_PG_PORT:-55432}"

bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then log "no PostgreSQL binaries (apt install postgresql)"; exit 1; fi
if "$bin/pg_isready" -q -h 127.0.0.1 -p "$port"; then exit 0; fi

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then log "no postgres user (apt install postgresql creates it)"; exit 1; fi

if [ ! -f "$dir/PG_VERSION" ]; then
  rm -rf "$dir"
  mkdir -p "$dir" && chmod 700 "$dir"
  [ "$(id -u)" = 0 ] && chown postgres: "$dir"
  log "initdb $dir"
  as_owner "$bin/initdb" -D "$dir" -U hands --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir.initdb.log" 2>&1 \
    || { log "initdb failed: $(tail -5 "$dir.initdb.log")"; exit 1; }
fi
start() {
  as_owner "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 30 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
    start >/dev/null
}
log "starting PostgreSQL on 127.0.0.1:$port"
if ! start; then
  # A server of an earlier boot or session left its lock file (its pid may now be another process's).
  if [ -f "$dir/postmaster.pid" ] && ! "$bin/pg_isready" -q -h 127.0.0.1 -p "$port"; then
    log "removing a stale postmaster.pid and trying again"
    rm -f "$dir/postmaster.pid"
    start || { log "pg_ctl start failed: $(tail -5 "$dir/server.log")"; exit 1; }
  else
    log "pg_ctl start failed: $(tail -5 "$dir/server.log")"
    exit 1
  fi
fi
exit 0
