#!/usr/bin/env bash
# Durable asynchronous submits/s and status reads/s through HTTP, in one run, on:
#   1. SQLite, one instance (the embedded default)
#   2. PostgreSQL, one instance
#   3. PostgreSQL, two instances on the same database (wrk drives both at once, half the
#      connections each; the numbers are summed)
# The server is vto-server/examples/bench_server.rs (the real server with a BENCH DOUBLE
# engine for `shirt` that never finishes: jobs stay queued, so the API path is measured:
# auth, rate limit, validation, durable hold + insert). PostgreSQL is a throwaway cluster from
# scripts/pg.sh on its own port. Note: on one machine both instances and PostgreSQL share the
# same cores; the two-instance row shows the cost of sharing state, not added hardware.
# Usage: scripts/bench-scale.sh [duration_secs=8] [connections=32]
set -euo pipefail
DUR=${1:-8}; CONN=${2:-32}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
TARGET=${CARGO_TARGET_DIR:-$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')}
WORK=$(mktemp -d)
if ! command -v wrk >/dev/null; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq wrk >&2
fi
cargo build --release -p vto-server --example bench_server >&2
# Admin commands only: the vto binary of the dev profile is enough (no render work).
cargo build -p vto-cli --bin vto >&2
SERVER=$TARGET/release/examples/bench_server
VTO=$TARGET/debug/vto

export VTO_PG_PORT=${VTO_PG_BENCH_PORT:-54361}
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done; scripts/pg.sh stop >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
eval "$(scripts/pg.sh start)"

export RUST_LOG=warn,warp::server=off VTO_FETCH_MODELS=false VTO_PLAYGROUND=false
export VTO_RATE_CREATE_TRY_ON=1000000/1 VTO_RATE_GET_TRY_ON=1000000/1 VTO_JOB_DEADLINE_SECS=0
BODY='{"category":"shirt","person_image":"data:image/png;base64,iVBORw0KGgo=","product_image":"data:image/png;base64,iVBORw0KGgo="}'

start_instance() { # port data_dir
  VTO_LISTEN=127.0.0.1:$1 VTO_DATA_DIR=$2 VTO_WORKERS=1 "$SERVER" & PIDS+=($!)
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$1/readyz" >/dev/null && return; sleep 0.1; done
  echo "instance on $1 did not start" >&2; exit 1
}

wrk_rate() { # conns url [args...] -> requests/s
  local c=$1; shift
  wrk -t1 -c"$c" -d"${DUR}s" "$@" | awk '/Requests\/sec/ {print $2}'
}

measure() { # label storage_url instances
  local label=$1 url=$2 n=$3
  local data="$WORK/$(echo "$label" | tr -c 'a-z0-9\n' '-')"
  mkdir -p "$data"
  export VTO_STORAGE_URL=$url
  local acct key id
  acct=$(VTO_DATA_DIR=$data "$VTO" admin account create --name bench --balance 100000000 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["account"]["id"])')
  key=$(VTO_DATA_DIR=$data "$VTO" admin key create "$acct" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["secret"])')
  local ports=()
  for i in $(seq "$n"); do ports+=($((18180 + i))); start_instance $((18180 + i)) "$data"; done
  id=$(curl -sf -X POST -H "Authorization: Bearer $key" -H 'Content-Type: application/json' -d "$BODY" \
        "http://127.0.0.1:${ports[0]}/v1/virtual-try-on" | python3 -c 'import json,sys; print(json.load(sys.stdin)["request_id"])')
  cat > "$WORK/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$BODY'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $key"
LUA
  local each=$((CONN / n)) post=0 get=0 files=()
  for p in "${ports[@]}"; do
    wrk_rate "$each" "http://127.0.0.1:$p/v1/virtual-try-on" -s "$WORK/post.lua" > "$WORK/post-$p" & files+=($!)
  done
  wait "${files[@]}"
  files=()
  for p in "${ports[@]}"; do
    wrk_rate "$each" "http://127.0.0.1:$p/v1/virtual-try-on/$id" -H "Authorization: Bearer $key" > "$WORK/get-$p" & files+=($!)
  done
  wait "${files[@]}"
  for p in "${ports[@]}"; do
    post=$(python3 -c "print($post + float(open('$WORK/post-$p').read() or 0))")
    get=$(python3 -c "print($get + float(open('$WORK/get-$p').read() or 0))")
  done
  printf '| %-28s | %9.0f | %9.0f |\n' "$label" "$post" "$get"
  for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  PIDS=()
}

createdb() { # name -> url
  local base=${VTO_TEST_POSTGRES_URL%/*}
  psql "$VTO_TEST_POSTGRES_URL" -qc "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1" >&2
  echo "$base/$1"
}

echo "wrk, $DUR s per cell, $CONN connections in all, $(nproc) cores; durable async submits/s and GET status/s"
echo "| storage | submits/s | GET/s |"
echo "|---|---|---|"
measure "sqlite, 1 instance" "" 1
measure "postgres, 1 instance" "$(createdb vto_bench_one)" 1
measure "postgres, 2 instances" "$(createdb vto_bench_two)" 2
