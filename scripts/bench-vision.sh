#!/usr/bin/env bash
# Vision speed beside its anchor, in one run on this machine: our per-model times (native CPU
# executor; the wgpu executor too with --gpu) and LiteRT's (XNNPACK, 2 threads) back to back,
# with the ratios; then face vision (detectors + mesh) and full-body vision (pose detection +
# landmarks + mask) on astronaut.png at 1024x1024.
#
# Usage: scripts/bench-vision.sh [--gpu] [--runs N]
# Needs the models and test photos (scripts/fetch-models.sh --test-photos). Installs LiteRT
# into a venv (VTO_LITERT_VENV, default <target dir>/venv-litert) when it is missing.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
MODELS=${VTO_MODELS_DIR:-$ROOT/models}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
VENV=${VTO_LITERT_VENV:-$TARGET/venv-litert}

if ! "$VENV/bin/python" -c "import ai_edge_litert, numpy" 2>/dev/null; then
    echo "installing LiteRT into $VENV" >&2
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --upgrade pip
    "$VENV/bin/pip" install --quiet ai-edge-litert numpy
fi

cd "$ROOT"
# Build first, so that compiling does not sit between the two measurements.
cargo bench -q -p vto-render --bench anchor --no-run >&2

OURS=$(mktemp)
THEIRS=$(mktemp)
trap 'rm -f "$OURS" "$THEIRS"' EXIT
VTO_MODELS_DIR=$MODELS cargo bench -q -p vto-render --bench anchor -- "$@" >"$OURS"
"$VENV/bin/python" scripts/bench_litert.py "$MODELS" >"$THEIRS"

python3 - "$OURS" "$THEIRS" <<'EOF'
import sys

ours, theirs = {}, {}
pipelines = {}
header = []
for line in open(sys.argv[1]):
    f = line.split()
    if not f:
        continue
    if f[0] == "model":
        ours.setdefault(f[1], {})[f[2]] = (float(f[3]), float(f[4]))
    elif f[0] == "pipeline":
        pipelines.setdefault(f[1], {})[f[2]] = (float(f[3]), float(f[4]))
    else:
        header.append(line.rstrip())
for line in open(sys.argv[2]):
    f = line.split()
    # "<name> median <ms> ms  min <ms> ms"
    theirs[f[0]] = (float(f[2]), float(f[5]))

executors = sorted({e for v in ours.values() for e in v}, key=lambda e: e != "native")
print("\n".join(header))
print("median (min) ms per inference, warm; LiteRT = ai-edge-litert XNNPACK, 2 threads, measured right after ours\n")
cols = ["model"] + [f"vto {e}" for e in executors] + ["LiteRT"] + [f"{e} / LiteRT" for e in executors]
print("| " + " | ".join(cols) + " |")
print("|" + "---|" * len(cols))
for name, by in ours.items():
    lite = theirs.get(name)
    row = [name]
    row += [f"{by[e][0]:.2f} ({by[e][1]:.2f})" if e in by else "-" for e in executors]
    row.append(f"{lite[0]:.2f} ({lite[1]:.2f})" if lite else "-")
    row += [f"{by[e][0] / lite[0]:.2f}x" if e in by and lite else "-" for e in executors]
    print("| " + " | ".join(row) + " |")
print()
names = {
    "upload": "upload 1024² photo",
    "face": "face vision (short + full detector, mesh)",
    "body": "full-body vision (pose det + landmarks + mask)",
    "selfie": "selfie segmentation + mask warp",
}
print("| pipeline on astronaut.png 1024² | " + " | ".join(executors) + " |")
print("|---|" + "---|" * len(executors))
for key, by in pipelines.items():
    row = [names.get(key, key)] + [f"{by[e][0]:.2f} ({by[e][1]:.2f})" if e in by else "-" for e in executors]
    print("| " + " | ".join(row) + " |")
EOF
