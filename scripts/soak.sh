#!/usr/bin/env bash
# The soak with faults (issue #34): two `vto serve` instances on one PostgreSQL database and one
# S3 bucket, a webhook receiver, a mixed load of real try-ons (sync glasses, async shirts with
# webhooks, GETs, cancels, idempotent retries, hostile inputs) while an instance is killed and
# restarted, PostgreSQL restarted, S3 frozen for 10 s and the webhook receiver slowed down.
# Prints what was submitted, succeeded and failed (by reason), `lost N`, `double-billed N`,
# webhooks delivered vs owed, the balance check and each instance's RSS; exits non-zero if
# anything was lost or billed twice or RSS grew more than 20 % after the warm-up. The load and
# the checks are in scripts/soak.py.
#
#   scripts/soak.sh [--minutes N]   # default 20; CI runs 2 (scripts/test.sh)
#
# It starts its own PostgreSQL (scripts/pg.sh on port VTO_SOAK_PG_PORT, default 54371) and
# SeaweedFS (scripts/s3.sh on VTO_SOAK_S3_PORT, default 18433, data in target/soak-s3), and stops
# both on exit. The binary: VTO_BIN if set (scripts/test.sh passes the one its tests built),
# else `cargo build -p vto-cli --bin vto` (dev profile: the renderer and the dependencies are
# optimised in it). Models from VTO_MODELS_DIR (default ./models, fetched if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=20
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    *) echo "usage: scripts/soak.sh [--minutes N]" >&2; exit 2 ;;
  esac
done

export VTO_MODELS_DIR="${VTO_MODELS_DIR:-$PWD/models}"
scripts/setup.sh
scripts/fetch-models.sh --test-photos "$VTO_MODELS_DIR" >/dev/null

target=$(cargo metadata --format-version 1 --no-deps |
         python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
if [ -z "${VTO_BIN:-}" ]; then
  cargo build -q -p vto-cli --bin vto
  export VTO_BIN="$target/debug/vto"
fi
make_glasses="$(dirname "$VTO_BIN")/examples/make_glasses"
[ -x "$make_glasses" ] || cargo build -q -p vto-examples --example make_glasses
[ -x "$make_glasses" ] || make_glasses="$target/debug/examples/make_glasses"

# The Python of the tests (standardwebhooks verifies the webhook signatures).
venv="$target/test-python"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import standardwebhooks" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q standardwebhooks==1.1.0
fi

work=$(mktemp -d /tmp/vto-soak.XXXXXX)
chmod 755 "$work"
export VTO_PG_PORT="${VTO_SOAK_PG_PORT:-54371}"
export VTO_S3_PORT="${VTO_SOAK_S3_PORT:-18433}" VTO_S3_DIR="$target/soak-s3" VTO_S3_BUCKET=vto-soak
trap 'scripts/pg.sh stop; scripts/s3.sh stop; rm -rf "$work" "$target/soak-s3/data"' EXIT
eval "$(scripts/pg.sh start)"
eval "$(scripts/s3.sh start)"
psql=$(command -v psql || ls /usr/lib/postgresql/*/bin/psql | sort -V | tail -1)
"$psql" "$VTO_TEST_POSTGRES_URL" -qc "CREATE DATABASE vto_soak" >/dev/null

"$make_glasses" "$work/glasses" >/dev/null

# Both instances and `vto admin` read the same settings from the environment.
export VTO_STORAGE_URL="${VTO_TEST_POSTGRES_URL%/*}/vto_soak"
export VTO_RESULTS_URL="s3://$VTO_TEST_S3_BUCKET/soak"
export VTO_S3_ENDPOINT=$VTO_TEST_S3_ENDPOINT VTO_S3_REGION=us-east-1 VTO_S3_ALLOW_HTTP=true
export VTO_S3_ACCESS_KEY_ID=$VTO_TEST_S3_ACCESS_KEY_ID
export VTO_S3_SECRET_ACCESS_KEY=$VTO_TEST_S3_SECRET_ACCESS_KEY
export VTO_DATA_DIR="$work/admin" VTO_FETCH_MODELS=false VTO_PLAYGROUND=false
export VTO_OUTBOUND_ALLOW=127.0.0.1/32 VTO_LEASE_SECS=10 VTO_RECONCILE_AFTER_SECS=15
export VTO_WORKERS=1 VTO_STORAGE_POOL_SIZE=8 RUST_LOG=warn
export VTO_RATE_CREATE_TRY_ON=1000/1 VTO_RATE_GET_TRY_ON=1000/1
export VTO_SOAK_PORT="${VTO_SOAK_PORT:-18190}"
unset VTO_CONFIG

"$venv/bin/python" scripts/soak.py --minutes "$minutes" --work "$work" \
  --glasses "$work/glasses/round_black.glb" \
  --people "$VTO_MODELS_DIR/test-photos/grace_hopper.jpg" "$VTO_MODELS_DIR/test-photos/astronaut.png" \
  --pg-restart "scripts/pg.sh restart" \
  --s3-port "$VTO_S3_PORT"
