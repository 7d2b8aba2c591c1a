#!/usr/bin/env python3
"""The soak with faults (issue #34): two `vto serve` instances on one PostgreSQL database and
one S3 bucket, a webhook receiver, and a mixed load of real try-ons while faults are injected.
Run it through scripts/soak.sh, which builds the binaries and starts the servers.

Load (every request goes to one instance, the other on a connection error or a 5xx):
  - synchronous glasses try-ons (the sample frame on the test portraits), some of them sent
    twice with one Idempotency-Key on purpose (the second must replay the first);
  - asynchronous shirt try-ons (a drawn tee on a portrait) with a webhook_url, a tenth of them
    canceled right after the submit;
  - GETs of the jobs seen so far, and of the balance;
  - hostile inputs (a corrupt GLB, a PNG header claiming 100 000² pixels, a category that does
    not exist): each must get a 4xx, never a 5xx and never a charge.
A POST that gets no answer or a 5xx is retried with the same Idempotency-Key, as a client
would; a 503 while a dependency is down is expected and counted, not a failure.

Faults, at fixed fractions of the run: instance B killed with SIGKILL (restarted 3 s later),
PostgreSQL restarted, S3 frozen with SIGSTOP for 10 s, the webhook receiver slowed to 2 s per
answer.

At the end, from the server's own records (`vto admin jobs list`, `vto admin account show`):
lost (a job not in a final state after the drain, or a request id the client was given that
the server does not know), double-billed (the balance against the sum of every successful
job's cost, to the cent), webhooks delivered vs owed (every finished asynchronous job with a
webhook_url: one verified delivery with a 2xx answer), and each instance's RSS after the
warm-up and at the end. Exits 1 if anything was lost or billed twice, a webhook is missing, a
hostile input got a 5xx or was billed, or a process that ran the whole time grew its RSS by
more than 20 % after the warm-up.
"""
import argparse
import base64
import http.client
import json
import os
import random
import signal
import struct
import subprocess
import sys
import threading
import time
import uuid
import zlib
from collections import Counter
from decimal import Decimal

FINAL = {"success", "failed", "canceled"}


def png(width: int, height: int, pixel) -> bytes:
    """An RGB PNG; `pixel(x, y)` gives each pixel's (r, g, b)."""
    rows = b"".join(
        b"\x00" + bytes(c for x in range(width) for c in pixel(x, y)) for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b""))


def tee_photo() -> bytes:
    """A flat-lay tee product photo: a navy T shape with short sleeves and a round neckline on
    a white background, lit a little from the top."""
    w, h = 360, 400

    def inside(x: int, y: int) -> bool:
        cx = w / 2
        dx = abs(x - cx)
        if y < 40 or y > 370:
            return False
        if (x - cx) ** 2 + (y - 30) ** 2 < 38 ** 2:  # the neckline
            return False
        if dx < 95:  # the body
            return True
        # the sleeves: from the shoulder's slope down to the underside, out to the cuff
        return dx < 165 and 40 + (dx - 95) * 0.55 < y < 150 - (dx - 95) * 0.3

    def pixel(x: int, y: int):
        if not inside(x, y):
            return (250, 250, 250)
        shade = 1.0 - 0.25 * y / h
        return (int(30 * shade), int(45 * shade), int(110 * shade))
    return png(w, h, pixel)


def data_url(mime: str, data: bytes) -> str:
    return f"data:{mime};base64," + base64.b64encode(data).decode()


class Instance:
    """One `vto serve` process."""

    def __init__(self, name: str, port: int, env: dict, log_dir: str):
        self.name, self.port, self.env, self.log_dir = name, port, env, log_dir
        self.proc = None
        self.generation = 0

    def start(self) -> None:
        self.generation += 1
        log = open(os.path.join(self.log_dir, f"{self.name}-{self.generation}.log"), "w")
        self.proc = subprocess.Popen([self.env["VTO_BIN"], "serve"], env=self.env,
                                     stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                c.request("GET", "/readyz")
                if c.getresponse().status == 200:
                    return
            except OSError:
                pass
            if self.proc.poll() is not None:
                raise SystemExit(f"soak: instance {self.name} exited at start; see {log.name}")
            time.sleep(0.2)
        raise SystemExit(f"soak: instance {self.name} not ready in 120 s")

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def rss_mb(self):
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            return None
        return None


class Client:
    """HTTP to the instances, with the retries a careful client makes."""

    def __init__(self, instances, key: str):
        self.instances, self.key = instances, key

    def call(self, method: str, path: str, body=None, headers=None, instance=0, timeout=120):
        """One try at one instance: (status, headers, json or None); status 0 = no answer."""
        inst = self.instances[instance % len(self.instances)]
        h = {"Authorization": f"Bearer {self.key}"}
        if body is not None:
            h["Content-Type"] = "application/json"
        h.update(headers or {})
        try:
            c = http.client.HTTPConnection("127.0.0.1", inst.port, timeout=timeout)
            c.request(method, path, body=json.dumps(body) if body is not None else None, headers=h)
            r = c.getresponse()
            raw = r.read()
            try:
                doc = json.loads(raw) if raw else None
            except ValueError:
                doc = None
            return r.status, dict(r.getheaders()), doc
        except (OSError, http.client.HTTPException):
            return 0, {}, None

    def post_retried(self, body, stats: Counter, kind: str, idem=None, tries=30):
        """POST with one Idempotency-Key across retries; (status, headers, doc) of the last try.
        About 80 s in all: a request whose instance died keeps its key for 30 s (409) before a
        retry takes it over."""
        idem = idem or str(uuid.uuid4())
        start = random.randrange(2)
        last = (0, {}, None)
        for attempt in range(tries):
            last = self.call("POST", "/v1/virtual-try-on", body, {"Idempotency-Key": idem},
                             instance=start + attempt)
            status, _, doc = last
            code = (doc or {}).get("error", {}).get("code") if isinstance(doc, dict) else None
            if status == 0 or status >= 500 or (status == 409 and code == "idempotency_conflict"):
                stats[f"{kind}: retried after {status or 'no answer'}{' ' + code if code else ''}"] += 1
                time.sleep(min(0.25 * 2 ** attempt, 3.0))
                continue
            return last
        return last


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=20)
    ap.add_argument("--work", required=True)
    ap.add_argument("--glasses", required=True, help="a sample frame (.glb)")
    ap.add_argument("--people", nargs="+", required=True, help="portrait photos")
    ap.add_argument("--pg-restart", required=True, help="a command that restarts PostgreSQL")
    ap.add_argument("--s3-port", required=True, help="the S3 server's port (to find its processes)")
    args = ap.parse_args()
    duration = args.minutes * 60
    rng = random.Random(7)
    env = dict(os.environ)
    vto = env["VTO_BIN"]

    def admin(*a):
        out = subprocess.run([vto, "--json", "admin", *a], env=env, capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"soak: vto admin {' '.join(a)}: {out.stderr.strip()}")
        return json.loads(out.stdout)

    # The account, its key and its webhook secret (from the shared database).
    initial = Decimal("1000.00")
    acct = admin("account", "create", "--name", "soak", "--balance", str(initial))["account"]["id"]
    key = admin("key", "create", acct, "--name", "soak")["secret"]
    secret = admin("webhooks", "secret", acct)["secret"]

    # The webhook receiver (verifies every signature; slow while the control file exists).
    hook_log = os.path.join(args.work, "webhooks.jsonl")
    slow_file = os.path.join(args.work, "webhooks.slow")
    receiver = subprocess.Popen(
        [sys.executable, os.path.join(os.path.dirname(__file__), "webhook_receiver.py"),
         "--secret", secret, "--log", hook_log, "--slow-file", slow_file, "--slow-ms", "2000"],
        stdout=subprocess.PIPE, text=True)
    hook_url = f"http://127.0.0.1:{receiver.stdout.readline().strip()}/hook"

    instances = []
    for i, name in enumerate(["A", "B"]):
        ienv = dict(env)
        ienv["VTO_LISTEN"] = f"127.0.0.1:{int(env['VTO_SOAK_PORT']) + i}"
        ienv["VTO_DATA_DIR"] = os.path.join(args.work, f"data-{name}")
        instances.append(Instance(name, int(env["VTO_SOAK_PORT"]) + i, ienv, args.work))
    for inst in instances:
        inst.start()
    client = Client(instances, key)

    people = [data_url("image/jpeg" if p.endswith((".jpg", ".jpeg")) else "image/png",
                       open(p, "rb").read()) for p in args.people]
    frame = data_url("model/gltf-binary", open(args.glasses, "rb").read())
    tee = data_url("image/png", tee_photo())
    corrupt_glb = data_url("model/gltf-binary", b"glTF\x02\x00\x00\x00" + os.urandom(200))
    huge_png = data_url("image/png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
                        + struct.pack(">II", 100_000, 100_000) + b"\x08\x02\x00\x00\x00" + b"\x00" * 4)

    stats: Counter = Counter()
    known: dict[str, str] = {}  # request id -> kind
    lock = threading.Lock()
    stop = threading.Event()
    t0 = time.time()

    def remember(doc, kind: str) -> None:
        if isinstance(doc, dict) and doc.get("request_id"):
            with lock:
                known[doc["request_id"]] = kind

    def outcome(status: int, doc) -> str:
        if isinstance(doc, dict) and doc.get("status"):
            s = doc["status"]
            return s + (f" ({doc['error']['code']})" if doc.get("error") else "")
        code = (doc or {}).get("error", {}).get("code") if isinstance(doc, dict) else None
        return f"HTTP {status or 'no answer'}" + (f" {code}" if code else "")

    def sync_client(seed: int) -> None:
        r = random.Random(seed)
        while not stop.is_set():
            roll = r.random()
            if roll < 0.1:
                kind, body = "hostile", r.choice([
                    {"category": "glasses", "person_image": people[0], "product_model": corrupt_glb},
                    {"category": "glasses", "person_image": huge_png, "product_model": frame},
                    {"category": "umbrella", "person_image": people[0], "product_model": frame},
                ])
                status, _, doc = client.call("POST", "/v1/virtual-try-on", body,
                                             instance=r.randrange(2))
                with lock:
                    if status == 0:
                        stats["hostile: no answer (an instance was down)"] += 1
                    elif 400 <= status < 500:
                        stats[f"hostile: {status} {doc['error']['code']}"] += 1
                    elif status == 503:
                        stats["hostile: 503 (a dependency was down)"] += 1
                    else:
                        stats[f"hostile: UNEXPECTED {status}"] += 1
                        stats["!hostile answered other than 4xx"] += 1
                remember(doc, "hostile")
                continue
            body = {"category": "glasses", "person_image": r.choice(people), "product_model": frame}
            idem = str(uuid.uuid4())
            status, _, doc = client.post_retried(body, stats, "sync glasses", idem=idem)
            remember(doc, "sync")
            if status == 202:
                # The retry took over from a request whose server died; the job is finished by
                # a worker: poll it, as the client of a synchronous category would then.
                rid, polled = doc["request_id"], 0
                while doc.get("status") not in FINAL and polled < 240:
                    time.sleep(0.5)
                    polled += 1
                    s2, _, d2 = client.call("GET", f"/v1/virtual-try-on/{rid}",
                                            instance=polled, timeout=10)
                    if s2 == 200:
                        doc = d2
                with lock:
                    stats[f"sync glasses: 202 after a retry, then polled to {doc.get('status')}"] += 1
                continue
            with lock:
                stats[f"sync glasses: {outcome(status, doc)}"] += 1
            if roll > 0.9 and status == 200:
                s2, h2, d2 = client.post_retried(body, stats, "sync replay", idem=idem)
                same = isinstance(d2, dict) and d2.get("request_id") == doc.get("request_id")
                with lock:
                    stats[f"sync replay: {'same job' if same else 'DIFFERENT'}"
                          f"{', replayed' if h2.get('Idempotent-Replayed') == 'true' else ''}"] += 1
                    if not same:
                        stats["!a replay made a second job"] += 1
            time.sleep(r.uniform(0.1, 0.4))

    def async_client(seed: int) -> None:
        r = random.Random(seed)
        while not stop.is_set():
            body = {"category": "shirt", "person_image": r.choice(people), "product_image": tee,
                    "webhook_url": hook_url}
            status, _, doc = client.post_retried(body, stats, "async shirt")
            remember(doc, "async")
            with lock:
                stats[f"async shirt submit: {outcome(status, doc)}"] += 1
            if status == 202 and r.random() < 0.1:
                rid = doc["request_id"]
                s, _, d = client.call("POST", f"/v1/virtual-try-on/{rid}/cancel",
                                      instance=r.randrange(2))
                with lock:
                    stats[f"cancel: {s} {outcome(s, d) if s != 200 else 'canceled'}"] += 1
            time.sleep(r.uniform(1.0, 2.5))

    def reader(seed: int) -> None:
        r = random.Random(seed)
        while not stop.is_set():
            with lock:
                ids = list(known)
            if ids and r.random() < 0.8:
                s, _, _ = client.call("GET", f"/v1/virtual-try-on/{r.choice(ids)}",
                                      instance=r.randrange(2), timeout=10)
                path = "GET try-on"
            else:
                s, _, _ = client.call("GET", "/v1/balance", instance=r.randrange(2), timeout=10)
                path = "GET balance"
            with lock:
                stats[f"{path}: {s or 'no answer'}"] += 1
            time.sleep(r.uniform(0.05, 0.3))

    # Warm-up, then the RSS baseline: a fifth of the run (at least 20 s).
    warm = max(20.0, duration * 0.2)
    rss = {}
    threads = [threading.Thread(target=f, args=(s,), daemon=True)
               for f, s in [(sync_client, 1), (sync_client, 2), (async_client, 3), (reader, 4)]]
    for t in threads:
        t.start()

    def at(frac: float) -> None:
        time.sleep(max(0.0, t0 + duration * frac - time.time()))

    faults = []

    def log_fault(what: str) -> None:
        faults.append(f"{time.time() - t0:6.1f} s  {what}")
        print(f"soak: {faults[-1]}", flush=True)

    time.sleep(max(0.0, t0 + warm - time.time()))
    for inst in instances:
        rss[inst.name] = {"pid": inst.proc.pid, "start": inst.rss_mb(), "end": None}
    at(0.25)
    instances[1].kill()
    log_fault("instance B killed (SIGKILL)")
    time.sleep(3)
    instances[1].start()
    log_fault("instance B restarted")
    at(0.45)
    subprocess.run(args.pg_restart, shell=True, check=True)
    log_fault("PostgreSQL restarted (fast shutdown)")
    at(0.65)
    pids = [p for p in subprocess.run(["pgrep", "-x", "weed"], capture_output=True,
                                      text=True).stdout.split()
            if f"-s3.port={args.s3_port}".encode() in open(f"/proc/{p}/cmdline", "rb").read()]
    for p in pids:
        os.kill(int(p), signal.SIGSTOP)
    log_fault(f"S3 frozen (SIGSTOP, {len(pids)} processes)")
    time.sleep(10)
    for p in pids:
        os.kill(int(p), signal.SIGCONT)
    log_fault("S3 thawed (SIGCONT)")
    at(0.8)
    open(slow_file, "w").close()
    log_fault("webhook receiver slowed to 2 s per answer")
    at(0.95)
    os.remove(slow_file)
    log_fault("webhook receiver back to normal")
    at(1.0)
    stop.set()
    for t in threads:
        t.join(timeout=180)
    for inst in instances:
        if inst.name in rss and rss[inst.name]["pid"] == inst.proc.pid:
            rss[inst.name]["end"] = inst.rss_mb()
        else:
            rss[inst.name + " (restarted)"] = {"pid": inst.proc.pid, "start": None,
                                               "end": inst.rss_mb()}

    # Drain: every job final, every webhook answered (at most 5 minutes).
    problems = []
    deadline = time.time() + 300
    while True:
        jobs = admin("jobs", "list", "--account", acct, "--limit", "1000000")
        open_jobs = [j for j in jobs if j["status"] not in FINAL]
        # Owed: every finished job whose request named a webhook_url, also those whose POST
        # the client never saw answered.
        owed = {j["id"] for j in jobs
                if j["status"] in FINAL and (j.get("request") or {}).get("webhook_url")}
        delivered = set()
        if os.path.exists(hook_log):
            for line in open(hook_log):
                e = json.loads(line)
                if e["verified"] and 200 <= e["status"] < 300 and e["payload"]:
                    delivered.add(e["payload"]["request_id"])
        if (not open_jobs and owed <= delivered) or time.time() > deadline:
            break
        time.sleep(2)
    by_id = {j["id"]: j for j in jobs}
    unknown = [rid for rid, kind in known.items() if rid not in by_id and kind != "hostile"]
    lost = len(open_jobs) + len(unknown)
    if open_jobs:
        problems.append(f"{len(open_jobs)} jobs not final after the drain: "
                        + ", ".join(f"{j['id']} {j['status']}" for j in open_jobs[:5]))
    if unknown:
        problems.append(f"{len(unknown)} request ids the client was given are unknown to the server")

    # The price is held at submit and captured only on success: after the drain nothing is
    # held and the balance is the start less the successful jobs' prices.
    account = admin("account", "show", acct)["balance"]
    balance, held = Decimal(account["balance"]), Decimal(account["held"])
    charged = sum((Decimal(j["price"]["amount"]) for j in jobs if j["status"] == "success"),
                  Decimal(0))
    hostile_billed = [rid for rid, kind in known.items()
                      if kind == "hostile" and by_id.get(rid, {}).get("status") == "success"]
    double = 0 if initial - charged == balance else 1
    if double:
        problems.append(f"balance {balance} != {initial} - {charged} (the successful jobs' costs)")
    if held:
        problems.append(f"{held} still held after the drain")
    if hostile_billed:
        problems.append(f"{len(hostile_billed)} hostile inputs were rendered and billed")
    missing_hooks = owed - delivered
    if missing_hooks:
        problems.append(f"{len(missing_hooks)} webhooks owed and not delivered")
    hook_tries = Counter()
    if os.path.exists(hook_log):
        for line in open(hook_log):
            e = json.loads(line)
            hook_tries["verified" if e["verified"] else "NOT VERIFIED"] += 1
            if not e["verified"]:
                problems.append("a webhook failed signature verification")
    for k, v in stats.items():
        if k.startswith("!"):
            problems.append(f"{k[1:]} ({v}×)")

    # Report.
    final = Counter(j["status"] + (f" ({j['error']['code']})" if j.get("error") else "")
                    for j in jobs)
    print(f"\nsoak: {args.minutes:g} minutes, 2 instances on PostgreSQL + S3, {os.cpu_count()} cores")
    print("faults:")
    for f in faults:
        print(f"  {f}")
    print("client side (requests by outcome):")
    for k in sorted(stats):
        if not k.startswith("!"):
            print(f"  {stats[k]:6d}  {k}")
    print(f"server side: {len(jobs)} jobs")
    for k, v in sorted(final.items()):
        print(f"  {v:6d}  {k}")
    print(f"submitted {sum(1 for k in known.values() if k != 'hostile')}, "
          f"succeeded {final.get('success', 0)}, "
          f"failed {sum(v for k, v in final.items() if k.startswith('failed'))}, "
          f"canceled {sum(v for k, v in final.items() if k.startswith('canceled'))}")
    print(f"lost {lost}")
    print(f"double-billed {double}")
    print(f"webhooks delivered {len(delivered & owed)} of {len(owed)} owed "
          f"({sum(hook_tries.values())} tries: {dict(hook_tries)})")
    print(f"balance {balance} = {initial} - {charged}: {'exact' if not double else 'WRONG'}")
    grew = []
    for name, r in rss.items():
        start = f"{r['start']:.0f} MB" if r["start"] else "-"
        end = f"{r['end']:.0f} MB" if r["end"] else "-"
        print(f"RSS instance {name} (pid {r['pid']}): after warm-up {start}, at the end {end}")
        if r["start"] and r["end"] and r["end"] > 1.2 * r["start"]:
            grew.append(name)
    if grew:
        problems.append(f"RSS grew more than 20 % after the warm-up: {', '.join(grew)}")
    for inst in instances:
        inst.proc.terminate()
    receiver.terminate()
    if problems:
        print("FAILED:")
        for p in problems:
            print(f"  {p}")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
