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
#
# Against another build in the same run: VTO_INPAINT_BASELINE=PATH (that build's
# bench_inpaint example, e.g. main's, copied aside) runs it and ours twice, alternating
# (baseline, ours, baseline, ours), prints each run's CPU time and the load average between
# them, and adds its row ("vto fill (baseline)", times the mean of its two runs) to the table.
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
trap 'rm -f "$TIMES" "$TIMES".*' EXIT
OURS=$TARGET/release/examples/bench_inpaint
# One run of a build: its fills as <case>-ours.png, "<case> <ms>" lines into $2, its CPU time.
run() {
    local user sys
    /usr/bin/env time -f "%U %S" -o "$TIMES.cpu" "$1" "$CASES" >"$2"
    read -r user sys <"$TIMES.cpu"
    echo "$3: CPU ${user}s user + ${sys}s system; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
}
echo "load before: $(uptime)"
if [ -n "${VTO_INPAINT_BASELINE:-}" ]; then
    for pass in 1 2; do
        run "$VTO_INPAINT_BASELINE" "$TIMES.base$pass" "baseline, pass $pass"
        for f in "$CASES"/*-ours.png; do mv "$f" "${f%-ours.png}-base.png"; done
        run "$OURS" "$TIMES.ours$pass" "ours, pass $pass"
    done
    paste -d' ' "$TIMES.ours1" "$TIMES.ours2" | awk '{print $1, ($2 + $4) / 2}' >"$TIMES"
    paste -d' ' "$TIMES.base1" "$TIMES.base2" | awk '{print $1, ($2 + $4) / 2}' >"$TIMES.base"
    echo "load after the fills: $(uptime)"
    "$VENV/bin/python" scripts/bench_inpaint.py score "$CASES" "$TIMES" --base "$TIMES.base"
else
    run "$OURS" "$TIMES" "ours"
    "$VENV/bin/python" scripts/bench_inpaint.py score "$CASES" "$TIMES"
fi
echo "load after: $(uptime)"
