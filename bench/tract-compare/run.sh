#!/usr/bin/env bash
# tract beside our native executor and LiteRT, in one run on this machine: builds this crate
# (its own workspace and target dir, never part of the vto workspace's build), rewrites the
# models into graphs tract-tflite reads (float32_models.py: DEQUANTIZE folded, PRELU
# expanded), runs scripts/bench-vision.sh (ours, then LiteRT) and then tract on 2 threads and
# on 1, and prints tract's times beside the first two.
#
# Usage: bench/tract-compare/run.sh [--runs N]
# Env: VTO_TRACT_TARGET (default <repo>/target/tract) is the crate's own target dir:
# tract's release build takes several minutes; keep it out of the shared target dir.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
MODELS=${VTO_MODELS_DIR:-$ROOT/models}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
VENV=${VTO_LITERT_VENV:-$TARGET/venv-litert}
TRACT_TARGET=${VTO_TRACT_TARGET:-$ROOT/target/tract}
RUNS=100
if [ "${1:-}" = "--runs" ]; then RUNS=$2; fi

(cd "$HERE" && CARGO_TARGET_DIR=$TRACT_TARGET cargo build -q --release >&2)
F32=$(mktemp -d)
OURS=$(mktemp)
trap 'rm -rf "$F32" "$OURS"' EXIT

# ours then LiteRT (installs the LiteRT venv when missing; float32_models.py needs it too)
"$ROOT/scripts/bench-vision.sh" --runs "$RUNS" | tee "$OURS"
"$VENV/bin/python" "$HERE/float32_models.py" "$MODELS" "$F32"
echo
echo "tract (tract-tflite $(grep -A1 'name = "tract-tflite"' "$HERE/Cargo.lock" | sed -n 's/version = "\(.*\)"/\1/p'), models rewritten by float32_models.py), right after:"
for threads in 2 1; do
    echo "-- $threads thread(s)"
    "$TRACT_TARGET/release/tract-compare" "$F32" "$RUNS" "$threads"
done
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
