#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster for tests, benchmarks and CI.
#
#   scripts/pg.sh start   # init (once) and start; prints `export VTO_TEST_POSTGRES_URL=...`
#   scripts/pg.sh env     # prints the export line of a running cluster
#   scripts/pg.sh restart # a fast shutdown and start, data kept (scripts/soak.sh's fault)
#   scripts/pg.sh stop    # stops it and deletes its data
#
# The cluster runs as the unprivileged `postgres` user (as root) or as the caller, with its data
# in $VTO_PG_DIR (default /tmp/vto-pg-<port>, where `postgres` can reach it even when the
# checkout is under /root), listening on 127.0.0.1:$VTO_PG_PORT (default 54329) and a private
# socket directory, trust auth on the socket and localhost only. PostgreSQL 15 is installed
# with apt when absent (CI machines are fresh Debian/Ubuntu; where the distribution has no
# postgresql-15, its default `postgresql` is installed and the newest version found is used).
set -euo pipefail
cd "$(dirname "$0")/.."
port="${VTO_PG_PORT:-54329}"
dir="${VTO_PG_DIR:-/tmp/vto-pg-$port}"
find_bin() {
  if [ -n "${VTO_PG_BIN:-}" ]; then echo "$VTO_PG_BIN"; return; fi
  if [ -x /usr/lib/postgresql/15/bin/pg_ctl ]; then echo /usr/lib/postgresql/15/bin; return; fi
  local newest
  newest=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
  echo "${newest:-/usr/lib/postgresql/15/bin}"
}
bin=$(find_bin)
data="$dir/data"
sock="$dir/sock"
url="postgres://postgres@127.0.0.1:$port/postgres"

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

install_pg() {
  [ -x "$bin/pg_ctl" ] && return 0
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql-15 >/dev/null \
    || DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
  bin=$(find_bin)
  [ -x "$bin/pg_ctl" ] || { echo "pg.sh: no pg_ctl in $bin after installing PostgreSQL" >&2; exit 1; }
}

start() {
  install_pg
  mkdir -p "$dir" "$sock"
  if [ "$(id -u)" -eq 0 ]; then chown -R postgres: "$dir"; fi
  if [ ! -f "$data/PG_VERSION" ]; then
    as_owner "$bin/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 --no-locale \
      >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    # Trust only on the private socket and the loopback addresses.
    as_owner tee "$data/pg_hba.conf" >/dev/null <<HBA
local all all trust
host  all all 127.0.0.1/32 trust
host  all all ::1/128 trust
HBA
  fi
  if ! as_owner "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    as_owner "$bin/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 start \
      -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$sock \
          -c max_connections=400 -c shared_buffers=128MB -c max_wal_size=96MB -c min_wal_size=32MB" >/dev/null \
      || { tail -20 "$dir/server.log" >&2; exit 1; }
  fi
  echo "export VTO_TEST_POSTGRES_URL=$url"
}

case "${1:-}" in
  start) start ;;
  env)
    as_owner "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1 \
      || { echo "pg.sh: no cluster running in $data (run: scripts/pg.sh start)" >&2; exit 1; }
    echo "export VTO_TEST_POSTGRES_URL=$url" ;;
  restart)
    as_owner "$bin/pg_ctl" -D "$data" -l "$dir/server.log" -m fast -w -t 60 restart >/dev/null \
      || { tail -20 "$dir/server.log" >&2; exit 1; } ;;
  stop)
    if [ -f "$data/PG_VERSION" ]; then
      as_owner "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir" ;;
  *) echo "usage: scripts/pg.sh start|restart|stop|env" >&2; exit 2 ;;
esac
