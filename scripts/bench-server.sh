#!/usr/bin/env bash
# Benchmarks the release vto-server on loopback with wrk, beside a minimal warp hello-world
# (vto-server/examples/hello.rs) in the same run:
#   1. GET /hello on the hello-world server (the floor: warp + hyper + loopback)
#   2. GET /healthz on vto-server (routing, request id, metrics, tracing span)
#   3. GET /v1/virtual-try-on/{id} (auth lookup in SQLite + rate limit + job read)
#   4. POST /v1/virtual-try-on, asynchronous category (auth + limit + validate + durable
#      hold + durable insert, group-committed), with no engine registered for rendering the
#      jobs (they stay queued; we measure the API, not an engine).
# Usage: scripts/bench-server.sh [duration_secs=10] [connections=64] [threads=2]
# Env: CARGO_TARGET_DIR (default target), BENCH_DIR (default a temp dir).
set -euo pipefail
DUR=${1:-10}; CONN=${2:-64}; THREADS=${3:-2}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
WORK=${BENCH_DIR:-$(mktemp -d)}
cd "$ROOT"
if ! command -v wrk >/dev/null; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq wrk >&2
fi
cargo build --release -p vto-server -p vto-cli --bin vto --example hello --example bench_server >&2
BIN=$TARGET/release
HELLO_PID=""; SERVER_PID=""
cleanup() { [ -n "$HELLO_PID" ] && kill "$HELLO_PID" 2>/dev/null; [ -n "$SERVER_PID" ] && kill -9 "$SERVER_PID" 2>/dev/null; true; }
trap cleanup EXIT

"$BIN/examples/hello" 127.0.0.1:18099 & HELLO_PID=$!

export VTO_DATA_DIR=$WORK/data VTO_LISTEN=127.0.0.1:18080 RUST_LOG=warn,warp::server=off
# Generous limits and funds: we measure throughput, not the limiter.
export VTO_RATE_CREATE_TRY_ON=1000000/1 VTO_RATE_GET_TRY_ON=1000000/1 VTO_JOB_DEADLINE_SECS=0
# An asynchronous category is accepted only when it has an engine; the release server has none
# yet, so the bench runs examples/bench_server.rs: the real server (vto_server::start) with a
# BENCH DOUBLE engine for `shirt` that never finishes (jobs stay queued), to measure the API.
ACCT=$("$BIN/vto" admin account create --name bench --balance 100000000 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["account"]["id"])')
KEY=$("$BIN/vto" admin key create "$ACCT" --name bench --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["secret"])')
VTO_WORKERS=1 "$BIN/examples/bench_server" & SERVER_PID=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:18080/readyz" >/dev/null && break; sleep 0.1; done

# data: inputs, so the (only) worker gets past fetching and parks in the never-finishing engine.
BODY='{"category":"shirt","person_image":"data:image/png;base64,iVBORw0KGgo=","product_image":"data:image/png;base64,iVBORw0KGgo="}'
ID=$(curl -sf -X POST -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
      -d "$BODY" http://127.0.0.1:18080/v1/virtual-try-on | python3 -c 'import json,sys; print(json.load(sys.stdin)["request_id"])')

cat > "$WORK/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$BODY'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $KEY"
LUA

run() { echo "== $1"; shift; wrk -t"$THREADS" -c"$CONN" -d"${DUR}s" --latency "$@" | grep -E 'Requests/sec|Latency|50%|99%|Non-2xx'; }
run "hello-world warp: GET /hello" http://127.0.0.1:18099/hello
run "vto-server: GET /healthz" http://127.0.0.1:18080/healthz
run "vto-server: GET /v1/virtual-try-on/{id}" -H "Authorization: Bearer $KEY" "http://127.0.0.1:18080/v1/virtual-try-on/$ID"
run "vto-server: POST /v1/virtual-try-on (async, durable)" -s "$WORK/post.lua" http://127.0.0.1:18080/v1/virtual-try-on
echo "== server CPU seconds so far: $(ps -o time= -p "$SERVER_PID")"
sleep 5; echo "== server CPU seconds after 5 s idle with the backlog: $(ps -o time= -p "$SERVER_PID")"
echo "== jobs stored: $("$BIN/vto" admin jobs list --limit 1000000 --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')"
