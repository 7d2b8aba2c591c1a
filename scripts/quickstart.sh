#!/usr/bin/env bash
# Sets up vto on this machine and runs the server on the embedded defaults: SQLite file and
# result folder under ./vto-data, in-process workers, listening on 127.0.0.1:8080.
# On first run it also creates a demo account with 10.00 USD and an API key, and writes a
# ready-to-send glasses request (./vto-data/demo-request.json) using public-domain sample data.
#
#   scripts/quickstart.sh           # set up, build, print two curl commands, run the server
#   scripts/quickstart.sh --smoke   # the same set-up and build, then: start the server on a
#                                   # free port, send the printed demo request, check that it
#                                   # answers `success`, stop the server; exit 0 or 1 (CI)
#
# Env: VTO_DATA_DIR (./vto-data), VTO_MODELS_DIR (./models), VTO_LISTEN (127.0.0.1:8080),
#      VTO_PROFILE (release, the default, or dev: reuse the test build), CARGO_TARGET_DIR,
#      VTO_BIN (use this vto binary, with examples/make_glasses beside it; no build).
# The binaries are built by name (`--bin vto`, `--example make_glasses`), so a fresh clone
# with an empty target dir works; the first release build takes several minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
smoke=0
case "${1:-}" in
  "") ;;
  --smoke) smoke=1 ;;
  *) echo "usage: scripts/quickstart.sh [--smoke]" >&2; exit 2 ;;
esac
export VTO_MODELS_DIR="${VTO_MODELS_DIR:-$PWD/models}"
export VTO_DATA_DIR="${VTO_DATA_DIR:-$PWD/vto-data}"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
case "${VTO_PROFILE:-release}" in
  release) profile=(--release); pdir=release ;;
  dev|debug) profile=(); pdir=debug ;;
  *) echo "VTO_PROFILE must be release or dev" >&2; exit 2 ;;
esac

scripts/setup.sh
scripts/fetch-models.sh --test-photos "$VTO_MODELS_DIR" >/dev/null
if [ -n "${VTO_BIN:-}" ]; then
  # An already built binary (the end-to-end tests pass the one their cargo test built); the
  # sample-frame writer is expected beside it, in examples/.
  vto="$VTO_BIN"
  make_glasses="$(dirname "$VTO_BIN")/examples/make_glasses"
else
  echo "quickstart: building vto and the sample frames (${VTO_PROFILE:-release}; a first build takes several minutes)" >&2
  cargo build "${profile[@]}" -q -p vto-cli --bin vto -p vto-examples --example make_glasses
  target=$(cargo metadata --format-version 1 --no-deps |
           python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
  vto="$target/$pdir/vto"
  make_glasses="$target/$pdir/examples/make_glasses"
fi
for bin in "$vto" "$make_glasses"; do
  [ -x "$bin" ] || { echo "quickstart: $bin was not built" >&2; exit 1; }
done

if [ ! -f "$VTO_DATA_DIR/demo-key.txt" ] || [ ! -f "$VTO_DATA_DIR/demo-request.json" ]; then
  mkdir -p "$VTO_DATA_DIR"
  acct=$("$vto" --json admin account create --name "Demo shop" --balance 10.00 |
         python3 -c 'import json,sys; print(json.load(sys.stdin)["account"]["id"])')
  "$vto" --json admin key create "$acct" --name demo |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["secret"])' > "$VTO_DATA_DIR/demo-key.txt.part"
  mv "$VTO_DATA_DIR/demo-key.txt.part" "$VTO_DATA_DIR/demo-key.txt"
  "$make_glasses" "$VTO_DATA_DIR/sample-glasses" >/dev/null
  python3 - "$VTO_MODELS_DIR/test-photos/astronaut.png" "$VTO_DATA_DIR/sample-glasses/round_black.glb" \
    "$VTO_DATA_DIR/demo-request.json" <<'PY'
import base64, json, sys
person, model, out = sys.argv[1:]
b64 = lambda p: base64.b64encode(open(p, "rb").read()).decode()
json.dump({"category": "glasses",
           "person_image": "data:image/png;base64," + b64(person),
           "product_model": "data:model/gltf-binary;base64," + b64(model)}, open(out, "w"))
PY
fi
key=$(cat "$VTO_DATA_DIR/demo-key.txt")

if [ "$smoke" = 1 ]; then
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  base="http://127.0.0.1:$port"
  log="$VTO_DATA_DIR/smoke-server.log"
  started=$(date +%s)
  VTO_LISTEN="127.0.0.1:$port" "$vto" serve >"$log" 2>&1 &
  pid=$!
  trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true' EXIT
  up=0
  for _ in $(seq 1200); do
    if curl -sf "$base/healthz" >/dev/null 2>&1; then up=1; break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ "$up" != 1 ]; then
    echo "smoke: FAILED: the server did not come up; its log:" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
  reply=$(curl -s -X POST "$base/v1/virtual-try-on" -H "Authorization: Bearer $key" \
          -H 'Content-Type: application/json' -d @"$VTO_DATA_DIR/demo-request.json")
  status=$(printf '%s' "$reply" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("status"))' 2>/dev/null || echo "?")
  if [ "$status" = success ]; then
    url=$(printf '%s' "$reply" | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["image_url"])')
    curl -sf -o /dev/null "$url" || { echo "smoke: FAILED: the result image $url did not download" >&2; exit 1; }
    curl -sf "$base/metrics" | grep -q '^vto_builtin_render_concurrency_limit{category="glasses"} [1-9]' ||
      { echo "smoke: FAILED: /metrics does not show the built-in render concurrency" >&2; exit 1; }
    echo "smoke: success in $(( $(date +%s) - started )) s (server start + one glasses try-on; result $url)"
    exit 0
  fi
  echo "smoke: FAILED: status $status; reply: ${reply:0:600}" >&2
  tail -n 30 "$log" >&2
  exit 1
fi

listen="${VTO_LISTEN:-127.0.0.1:8080}"
cat <<MSG

vto is starting on http://$listen (data in $VTO_DATA_DIR). In another terminal:

  curl -s http://$listen/v1/balance -H "Authorization: Bearer $key"
  curl -s -X POST http://$listen/v1/virtual-try-on -H "Authorization: Bearer $key" \\
       -H 'Content-Type: application/json' -d @$VTO_DATA_DIR/demo-request.json

The second answers a glasses try-on with result.image_url. More accounts and keys:
  $vto admin account create --name "My shop" --balance 25.00
  $vto admin key create <acct_id>

MSG
exec "$vto" serve
