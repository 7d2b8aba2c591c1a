#!/usr/bin/env python3
"""A webhook receiver for vto's tests: verifies every delivery with the independent
`standardwebhooks` package (PyPI), answers 500 to the first N tries of each webhook-id, then 204,
and appends one JSON line per try to a log file.

With --slow-file F, every answer waits --slow-ms (default 2000) while F exists (scripts/soak.py
slows the receiver down that way).

Usage: webhook_receiver.py --secret whsec_... --log FILE [--fail-first N] [--port 0]
                           [--slow-file F --slow-ms MS]
Prints the port it listens on (loopback only) as the first line of stdout.
"""
import argparse
import json
import sys
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--secret", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--fail-first", type=int, default=0)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--slow-file")
    ap.add_argument("--slow-ms", type=int, default=2000)
    args = ap.parse_args()
    wh = Webhook(args.secret)
    tries: dict[str, int] = {}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            headers = {k.lower(): v for k, v in self.headers.items()}
            msg_id = headers.get("webhook-id", "")
            try:
                payload = wh.verify(body, headers)
                verified, error = True, None
            except Exception as e:  # any verification failure is recorded, answered 400
                payload, verified, error = None, False, str(e)
            with lock:
                tries[msg_id] = tries.get(msg_id, 0) + 1
                n = tries[msg_id]
                status = 400 if not verified else (500 if n <= args.fail_first else 204)
                with open(args.log, "a", encoding="utf-8") as f:
                    f.write(json.dumps({"webhook_id": msg_id, "try": n, "verified": verified,
                                        "error": error, "status": status,
                                        "payload": payload}) + "\n")
            if args.slow_file and os.path.exists(args.slow_file):
                time.sleep(args.slow_ms / 1000)
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *a) -> None:
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
