#!/usr/bin/env bash
# The fill stage beside its anchor, in one run on this machine: holes cut where the truth is
# known (boxes, strokes and blobs, ~5 % of each photo, fixed seed) into real photos, filled by
# vto's fill stage and by OpenCV's cv2.inpaint (Telea and Navier-Stokes, radius 3); prints
# mean PSNR and SSIM inside the holes, ms per fill and ms per megapixel, per hole kind, over
# all photos and over the 1024x1024 ones.
#
# Usage: scripts/bench-inpaint.sh [DIR]   (DIR: the photos, default ../shared/testdata/people)
# Ours runs as `cargo run --release -p vto-render --example bench_inpaint`, which times only
# the fill (no process start, no decoding); cv2.inpaint is timed around the call alone.
# OpenCV comes from a venv (VTO_INPAINT_VENV, default <target dir>/venv-inpaint) with
# opencv-python-headless, numpy and pillow, made when missing.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PHOTOS=${1:-$ROOT/../shared/testdata/people}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
VENV=${VTO_INPAINT_VENV:-$TARGET/venv-inpaint}
CASES=$TARGET/bench-inpaint/cases

if ! "$VENV/bin/python" -c "import cv2, numpy, PIL" 2>/dev/null; then
    echo "installing opencv-python-headless, numpy, pillow into $VENV" >&2
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --upgrade pip
    "$VENV/bin/pip" install --quiet opencv-python-headless numpy pillow
fi

cd "$ROOT"
# Build first, so that compiling does not sit between the measurements.
cargo build -q --release -p vto-render --example bench_inpaint >&2

rm -rf "$CASES"
"$VENV/bin/python" scripts/bench_inpaint.py holes "$PHOTOS" "$CASES"
TIMES=$(mktemp)
trap 'rm -f "$TIMES"' EXIT
echo "load before: $(uptime)"
"$TARGET/release/examples/bench_inpaint" "$CASES" >"$TIMES"
"$VENV/bin/python" scripts/bench_inpaint.py score "$CASES" "$TIMES"
echo "load after: $(uptime)"
