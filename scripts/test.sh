#!/usr/bin/env bash
# Sets up (scripts/setup.sh, plus the public-domain test photos) and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
export VTO_MODELS_DIR="${VTO_MODELS_DIR:-$PWD/models}"
scripts/setup.sh
scripts/fetch-models.sh --test-photos "$VTO_MODELS_DIR"
cargo test --workspace --all-features
