#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export VTO_MODELS_DIR="${VTO_MODELS_DIR:-$PWD/models}"
cargo test --workspace --all-features
