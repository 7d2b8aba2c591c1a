#!/usr/bin/env bash
# Sets up what vto needs and runs the main job on the embedded defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo run --release -p vto-examples --example embedded
