#!/usr/bin/env bash
# Sets up (scripts/setup.sh, the public-domain test photos, a Python with the independent
# `standardwebhooks` package that verifies our webhook signatures, and Chromium for the
# playground's browser test) and runs every test, then every fuzz target briefly, then a short
# soak with faults.
set -euo pipefail
cd "$(dirname "$0")/.."
export VTO_MODELS_DIR="${VTO_MODELS_DIR:-$PWD/models}"
scripts/setup.sh
scripts/fetch-models.sh --test-photos "$VTO_MODELS_DIR"

venv="$PWD/target/test-python"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import standardwebhooks" 2>/dev/null; then
  python3 -m venv "$venv" 2>/dev/null || {
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get install -y -qq python3-venv
    python3 -m venv "$venv"
  }
  "$venv/bin/pip" install -q standardwebhooks==1.1.0
fi
export VTO_TEST_PYTHON="$venv/bin/python"

# Chromium (the distribution's package) for the playground's browser test; with
# VTO_REQUIRE_BROWSER set, that test fails rather than skips when no browser is found.
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium
fi
export VTO_REQUIRE_BROWSER=1

# The end-to-end tests in tests/ run the `vto` binary this same `cargo test` builds (for
# vto-cli's tests) and the examples beside it; see tests/lib.rs.
target=$(cargo metadata --format-version 1 --no-deps |
         python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
export VTO_BIN="${VTO_BIN:-$target/debug/vto}"

# Servers of its own for the backend tests, stopped on exit: a throwaway PostgreSQL for
# vto-postgres (scripts/pg.sh, deleted on exit) and SeaweedFS, a real S3-compatible server,
# for vto-s3 (scripts/s3.sh). With VTO_REQUIRE_POSTGRES / VTO_REQUIRE_S3 set, those tests fail
# rather than skip without them.
trap 'scripts/pg.sh stop; scripts/s3.sh stop' EXIT
export VTO_PG_PORT="${VTO_PG_TEST_PORT:-54339}"
eval "$(scripts/pg.sh start)"
export VTO_REQUIRE_POSTGRES=1
eval "$(scripts/s3.sh start)"
export VTO_REQUIRE_S3=1

cargo test --workspace --all-features

# Every fuzz target for 20 s from its seed corpus (issue #34; the build is its own workspace
# under fuzz/, on stable; about 6 minutes in all on 2 cores). Longer runs: scripts/fuzz.sh.
scripts/fuzz.sh --seconds "${VTO_FUZZ_SECONDS:-20}"

# Two minutes of the soak with faults (issue #34): two instances on their own PostgreSQL and
# S3, real try-ons, an instance killed, PostgreSQL restarted, S3 frozen; fails on anything lost
# or billed twice. Longer runs: scripts/soak.sh --minutes 20.
scripts/soak.sh --minutes "${VTO_SOAK_MINUTES:-2}"
