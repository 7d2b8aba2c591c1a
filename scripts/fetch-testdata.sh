#!/usr/bin/env bash
# Extracts the public-domain test photos (astronaut.png, camera.png) from the scikit-image
# wheel into target/testdata (never committed). The glasses tests read
# ${VTO_ASTRONAUT:-target/testdata/astronaut.png}.
#
#   scripts/fetch-testdata.sh [DIR]     # default: <repo>/target/testdata
#
# Reuses an already-downloaded wheel from $VTO_WHEEL_DIR (if set), else downloads it with pip.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$root/target/testdata}"
python="${PYTHON:-python3}"
mkdir -p "$dir"
if [[ -f "$dir/astronaut.png" && -f "$dir/camera.png" ]]; then
  echo "testdata: present in $dir"
  exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
wheel="$(ls "${VTO_WHEEL_DIR:-/nonexistent}"/scikit_image-0.25.2-*.whl 2>/dev/null | head -1 || true)"
if [[ -z "$wheel" ]]; then
  "$python" -m pip download --no-deps --only-binary=:all: \
    --platform manylinux2014_x86_64 --python-version 3.11 \
    scikit-image==0.25.2 -d "$tmp" >&2
  wheel="$(ls "$tmp"/scikit_image-*.whl)"
fi
"$python" - "$wheel" "$dir" <<'PY'
import os, sys, zipfile
wheel, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    for name in ("astronaut.png", "camera.png"):
        with open(os.path.join(out, name + ".part"), "wb") as f:
            f.write(z.read("skimage/data/" + name))
        os.replace(os.path.join(out, name + ".part"), os.path.join(out, name))
PY
echo "testdata: astronaut.png, camera.png in $dir"
