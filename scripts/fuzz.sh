#!/usr/bin/env bash
# Fuzzes every parser that sees untrusted bytes (issue #34): one libFuzzer target each, under
# fuzz/ (its own workspace: the normal build never compiles it). Works on the stable
# toolchain: the coverage instrumentation `cargo fuzz` would add is set here in RUSTFLAGS
# (sancov passes; no sanitizer, which would need nightly), and the `libfuzzer-sys` crate
# builds libFuzzer itself (it needs a C++ compiler).
#
#   scripts/fuzz.sh [--seconds N] [--jobs J] [TARGET...]
#
# Runs each target (default: all) for N seconds (default 60; J targets at a time, default one
# per core),
# starting from its checked-in seed corpus fuzz/seeds/TARGET, the inputs of past findings
# (fuzz/regressions/TARGET, also replayed by the regression tests) and what earlier runs
# found (fuzz/target/corpus/TARGET), and prints one line per target:
#   target NAME: EXECS execs, CRASHES crashes
# A crash (panic, abort), a hang (one input over 2 s) or an out-of-memory (over 1 GB RSS or
# one allocation over 1 GB) stops that target, leaves the input in
# fuzz/target/artifacts/TARGET/ and makes the script exit 1 after all targets ran.
# Replay one with: fuzz/target/<triple>/release/TARGET fuzz/target/artifacts/TARGET/crash-…
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
jobs=$(nproc 2>/dev/null || echo 1)
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --seconds=*) seconds="${1#*=}"; shift ;;
    --jobs) jobs="$2"; shift 2 ;;
    --jobs=*) jobs="${1#*=}"; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
all=(gltf obj photo request data_url render_reply tflite)
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

if ! command -v c++ >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq g++
fi

# Build scripts and proc macros are host artifacts: with an explicit --target, RUSTFLAGS
# reach only the fuzzed code (as with cargo fuzz).
host=$(rustc -vV | sed -n 's/^host: //p')
export RUSTFLAGS="--cfg fuzzing -Cpasses=sancov-module \
 -Cllvm-args=-sanitizer-coverage-level=4 \
 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
 -Cllvm-args=-sanitizer-coverage-pc-table \
 -Cllvm-args=-sanitizer-coverage-trace-compares"
export CARGO_INCREMENTAL=0
t0=$SECONDS
bins=()
for t in "${targets[@]}"; do bins+=(--bin "$t"); done
cargo build --release --locked --manifest-path fuzz/Cargo.toml --target "$host" "${bins[@]}"
echo "fuzz: built in $((SECONDS - t0)) s"

out=fuzz/target

# One target: fuzz it, then write its summary line (and the finding) to $out/summary-$t.
run_target() {
  local t=$1 corpus="$out/corpus/$1" artifacts="$out/artifacts/$1" log="$out/fuzz-$1.log"
  mkdir -p "$corpus" "$artifacts"
  local before after execs crashes status=0
  before=$(find "$artifacts" -type f | wc -l)
  local dirs=("$corpus" "fuzz/seeds/$t")
  [ -d "fuzz/regressions/$t" ] && dirs+=("fuzz/regressions/$t")
  # -timeout: a hang is one input over 2 s; -rss_limit_mb / -malloc_limit_mb: 1 GB.
  "$out/$host/release/$t" "${dirs[@]}" \
    -max_total_time="$seconds" -timeout=2 -rss_limit_mb=1024 -malloc_limit_mb=1024 \
    -artifact_prefix="$artifacts/" -print_final_stats=1 -close_fd_mask=1 \
    >"$log" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  after=$(find "$artifacts" -type f | wc -l)
  crashes=$((after - before))
  if [ "$status" -ne 0 ] && [ "$crashes" -eq 0 ]; then crashes=1; fi
  {
    echo "target $t: ${execs:-0} execs, $crashes crashes"
    if [ "$crashes" -ne 0 ]; then
      grep -E "ERROR: libFuzzer|panicked at|SUMMARY|Test unit written" "$log" | head -5 | sed 's/^/  /'
      echo "  (full log: $log)"
    fi
  } >"$out/summary-$t"
}

# libFuzzer is single-threaded: run J targets at once (each still gets N s).
running=0
for t in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
  run_target "$t" &
  running=$((running + 1))
done
wait
failed=0
for t in "${targets[@]}"; do
  cat "$out/summary-$t"
  grep -q ", 0 crashes$" "$out/summary-$t" || failed=1
done
echo "fuzz: done in $((SECONDS - t0)) s"
exit "$failed"
