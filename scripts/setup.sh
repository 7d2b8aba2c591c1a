#!/usr/bin/env bash
# Installs what vto needs on a fresh Debian/Ubuntu machine with Rust:
#   - a Vulkan driver (lavapipe, a CPU device) so wgpu runs without a GPU,
#   - the MediaPipe models (pip download of mediapipe==0.10.14, SHA-256 checked).
# Idempotent: a second run does nothing that is already done.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
dpkg -s mesa-vulkan-drivers >/dev/null 2>&1 || need_apt+=(mesa-vulkan-drivers)
dpkg -s libvulkan1 >/dev/null 2>&1 || need_apt+=(libvulkan1)
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

if [ -x scripts/fetch-models.sh ]; then
  scripts/fetch-models.sh "${VTO_MODELS_DIR:-models}"
fi
