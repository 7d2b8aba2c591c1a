#!/usr/bin/env bash
# Sync glasses try-ons through HTTP on the release `vto serve`: N clients (default 4) send the
# public-domain astronaut photo resized to SIDE x SIDE (default 512; PNG, or JPEG above 1024)
# with a sample frame for D seconds (default 20, after a 3 s warm-up), back to back. Prints
# try-ons/s, latency p50/p90/p99, how many were refused busy (503 after `sync_wait_secs`), how
# long the server took to be ready, the first request's latency, and the server's RSS (now and
# peak).
#
# Usage: scripts/bench-tryon-http.sh [clients=4] [seconds=20] [side=512]
# Env: VTO_RENDER_CONCURRENCY, VTO_VISION_BACKEND (passed to the server), CARGO_TARGET_DIR,
#      VTO_MODELS_DIR (default ./models; scripts/fetch-models.sh --test-photos),
#      VTO_SYNC_WAIT_SECS (passed to the server),
#      VTO_BIN (a `vto` binary to measure instead of building this tree's, e.g. an older
#      build kept aside to compare before/after in one run; nothing is built then).
set -euo pipefail
CLIENTS=${1:-4}; SECS=${2:-20}; SIDE=${3:-512}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
export VTO_MODELS_DIR="${VTO_MODELS_DIR:-$ROOT/models}"
if [ -z "${VTO_BIN:-}" ]; then
  cargo build --release -q -p vto-cli --bin vto -p vto-examples --example make_glasses >&2
fi
TARGET=$(cargo metadata --format-version 1 --no-deps |
         python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
BIN=$TARGET/release
VTO=${VTO_BIN:-$BIN/vto}
VENV=$TARGET/venv-bench
if ! "$VENV/bin/python" -c "import PIL" 2>/dev/null; then
  python3 -m venv "$VENV" && "$VENV/bin/pip" install -q pillow >&2
fi
WORK=$(mktemp -d)
SERVER_PID=""
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; rm -rf "$WORK"; true; }
trap cleanup EXIT

export VTO_DATA_DIR=$WORK/data VTO_FETCH_MODELS=false RUST_LOG=info,warp::server=off
export VTO_RATE_CREATE_TRY_ON=1000000/1 VTO_RATE_GET_TRY_ON=1000000/1
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export VTO_LISTEN=127.0.0.1:$PORT
ACCT=$("$VTO" --json admin account create --name bench --balance 1000000 |
       python3 -c 'import json,sys; print(json.load(sys.stdin)["account"]["id"])')
KEY=$("$VTO" --json admin key create "$ACCT" --name bench |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["secret"])')
"$BIN/examples/make_glasses" "$WORK/frames" >/dev/null

started=$(date +%s.%N)
"$VTO" serve >"$WORK/server.log" 2>&1 & SERVER_PID=$!
for _ in $(seq 1200); do curl -sf "http://$VTO_LISTEN/readyz" >/dev/null 2>&1 && break; sleep 0.05; done
ready=$(date +%s.%N)
echo "server ready after $(python3 -c "print(f'{$ready - $started:.2f}')") s (process start to /readyz 200)"
grep -o 'built-in engines ready.*' "$WORK/server.log" | sed 's/\x1b\[[0-9;]*m//g' || true

"$VENV/bin/python" - "$VTO_LISTEN" "$KEY" "$VTO_MODELS_DIR/test-photos/astronaut.png" \
  "$WORK/frames/round_black.glb" "$CLIENTS" "$SECS" "$SERVER_PID" "$SIDE" <<'PY'
import base64, io, json, statistics, sys, threading, time, urllib.error, urllib.request
listen, key, photo, frame, clients, secs, pid, side = sys.argv[1:]
clients, secs, side = int(clients), float(secs), int(side)
from PIL import Image
img = Image.open(photo).convert("RGB").resize((side, side), Image.BICUBIC)
fmt, mime = ("PNG", "image/png") if side <= 1024 else ("JPEG", "image/jpeg")
buf = io.BytesIO(); img.save(buf, fmt, quality=90); person = buf.getvalue()
body = json.dumps({"category": "glasses",
                   "person_image": f"data:{mime};base64," + base64.b64encode(person).decode(),
                   "product_model": "data:model/gltf-binary;base64," +
                   base64.b64encode(open(frame, "rb").read()).decode()}).encode()
url = f"http://{listen}/v1/virtual-try-on"

def one():
    req = urllib.request.Request(url, data=body, headers={
        "Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=300) as r:
            status = json.load(r).get("status")
    except urllib.error.HTTPError as e:
        status = f"{e.code} {json.load(e).get('error', {}).get('code')}"
    return time.perf_counter() - t0, status

def rss():
    kv = dict(l.split(":", 1) for l in open(f"/proc/{pid}/status"))
    return kv["VmRSS"].strip(), kv["VmHWM"].strip()

first, status = one()
print(f"first request: {first * 1e3:.0f} ms ({status})")
lat, bad, busy, lock = [], 0, 0, threading.Lock()
def client(until, record):
    global bad, busy
    while time.perf_counter() < until:
        t, s = one()
        with lock:
            if record:
                lat.append(t)
                busy += s == "503 service_unavailable"
                bad += s not in ("success", "503 service_unavailable")
warm_until = time.perf_counter() + 3
ts = [threading.Thread(target=client, args=(warm_until, False)) for _ in range(clients)]
[t.start() for t in ts]; [t.join() for t in ts]
t0 = time.perf_counter(); until = t0 + secs
ts = [threading.Thread(target=client, args=(until, True)) for _ in range(clients)]
[t.start() for t in ts]; [t.join() for t in ts]
took = time.perf_counter() - t0
q = statistics.quantiles(lat, n=100)
now, peak = rss()
print(f"{clients} clients, {took:.1f} s: {len(lat)} try-ons, {len(lat) / took:.2f}/s, "
      f"p50 {q[49] * 1e3:.0f} ms, p90 {q[89] * 1e3:.0f} ms, p99 {q[98] * 1e3:.0f} ms, "
      f"busy (503): {busy}, other not success: {bad}; server RSS {now} (peak {peak}), "
      f"photo {side}x{side} {fmt} {len(person)} B")
PY
