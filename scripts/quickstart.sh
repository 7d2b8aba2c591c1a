#!/usr/bin/env bash
# Sets up vto on this machine and runs the server on the embedded defaults: SQLite file and
# result folder under ./vto-data, in-process workers, listening on 127.0.0.1:8080.
# On first run it also creates a demo account with 10.00 USD and an API key, and writes a
# ready-to-send glasses request (./vto-data/demo-request.json) using public-domain sample data.
set -euo pipefail
cd "$(dirname "$0")/.."
export VTO_MODELS_DIR="${VTO_MODELS_DIR:-$PWD/models}"
export VTO_DATA_DIR="${VTO_DATA_DIR:-$PWD/vto-data}"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
scripts/setup.sh
scripts/fetch-models.sh --test-photos "$VTO_MODELS_DIR" >/dev/null
cargo build --release -q -p vto-cli -p vto-examples --example make_glasses
vto=target/release/vto

if [ ! -f "$VTO_DATA_DIR/demo-key.txt" ]; then
  mkdir -p "$VTO_DATA_DIR"
  acct=$($vto --json admin account create --name "Demo shop" --balance 10.00 |
         python3 -c 'import json,sys; print(json.load(sys.stdin)["account"]["id"])')
  $vto --json admin key create "$acct" --name demo |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["secret"])' > "$VTO_DATA_DIR/demo-key.txt"
  target/release/examples/make_glasses "$VTO_DATA_DIR/sample-glasses" >/dev/null
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
cat <<MSG

vto is starting on http://127.0.0.1:8080 (data in $VTO_DATA_DIR). In another terminal:

  curl -s http://127.0.0.1:8080/v1/balance -H "Authorization: Bearer $key"
  curl -s -X POST http://127.0.0.1:8080/v1/virtual-try-on -H "Authorization: Bearer $key" \\
       -H 'Content-Type: application/json' -d @$VTO_DATA_DIR/demo-request.json

The second answers a glasses try-on with result.image_url. More accounts and keys:
  $vto admin account create --name "My shop" --balance 25.00
  $vto admin key create <acct_id>

MSG
exec $vto serve
