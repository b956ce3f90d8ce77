#!/usr/bin/env python3
"""A scripted stand-in for the relay, for the client's live tests: answers
POSTs by a script taken from the request path and logs the monotonic
arrival time of each request.

A request for /KEY/SCRIPT/v1/events/SUBJECT (treaty --url
http://127.0.0.1:PORT/KEY/SCRIPT) is the k-th of KEY (k from 1) and gets
the k-th step of SCRIPT, a dot-separated list whose last step repeats:

  202      202 {"id":<the event's id>,"duplicate":false}
  NNN      status NNN with a JSON error body (503, 401, 500, ...)
  NNNraS   status NNN with Retry-After: S
  hang     no answer (the connection is held for 60 s)

GETs and DELETEs (a worker's polls and acknowledgements) take the same
scripts, with two more steps:

  html     200 text/html, which is no inbox answer
  up       the request passed on to UPSTREAM (without /KEY/SCRIPT), and
           its answer passed back

Log: one tab-separated line per request, written on arrival (before the
answer): KEY k arrival-ms(monotonic) event-id sha256(body) authorization.

Usage: status.py PORTFILE LOGFILE [UPSTREAM]   (binds 127.0.0.1 on a free
port and writes it to PORTFILE once listening; UPSTREAM is a base URL)
"""
import hashlib
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORTFILE, LOG = sys.argv[1], sys.argv[2]
UPSTREAM = sys.argv[3] if len(sys.argv) > 3 else None
lock = threading.Lock()
seen = {}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        t = time.monotonic() * 1000.0
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        parts = self.path.split("/")
        key = parts[1] if len(parts) > 1 else ""
        script = (parts[2] if len(parts) > 2 else "503").split(".")
        try:
            eid = str(json.loads(body).get("id", ""))
        except Exception:
            eid = "-"
        with lock:
            seen[key] = seen.get(key, 0) + 1
            k = seen[key]
            with open(LOG, "a") as f:
                f.write("%s\t%d\t%.3f\t%s\t%s\t%s\n" % (
                    key, k, t, eid, hashlib.sha256(body).hexdigest(),
                    self.headers.get("Authorization", "-")))
        step = script[min(k, len(script)) - 1]
        if step == "hang":
            time.sleep(60)
            return
        status, ra = step, None
        if "ra" in step:
            status, ra = step.split("ra", 1)
        status = int(status)
        if status == 202:
            out = json.dumps({"id": eid, "duplicate": False},
                             separators=(",", ":")).encode()
        else:
            out = json.dumps({"error": "scripted",
                              "detail": "scripted %d" % status}).encode()
        self.send_response(status)
        if ra is not None:
            self.send_header("Retry-After", ra)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


    def step(self):
        """The step of this request's script (counted and logged)."""
        parts = self.path.split("/")
        key = parts[1] if len(parts) > 1 else ""
        script = (parts[2] if len(parts) > 2 else "503").split(".")
        with lock:
            seen[key] = seen.get(key, 0) + 1
            k = seen[key]
            with open(LOG, "a") as f:
                f.write("%s\t%d\t%.3f\t%s\t-\t%s\n" % (
                    key, k, time.monotonic() * 1000.0, self.command,
                    self.headers.get("Authorization", "-")))
        return script[min(k, len(script)) - 1], "/" + "/".join(parts[3:])

    def answer(self, status, ctype, out):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def do_GET(self):
        step, rest = self.step()
        if step == "html":
            self.answer(200, "text/html", b"<html>hi</html>")
        elif step == "up":
            req = urllib.request.Request(UPSTREAM + rest, method=self.command,
                                         headers={"Authorization": self.headers.get("Authorization", "")})
            try:
                with urllib.request.urlopen(req, timeout=30) as r:
                    status, ctype, out = r.status, r.headers.get("Content-Type", ""), r.read()
            except urllib.error.HTTPError as e:
                status, ctype, out = e.code, e.headers.get("Content-Type", ""), e.read()
            self.answer(status, ctype or "application/json", out)
        else:
            self.answer(int(step), "application/json", json.dumps(
                {"error": "scripted", "detail": "scripted " + step}).encode())

    do_DELETE = do_GET


ThreadingHTTPServer.daemon_threads = True
srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(PORTFILE + ".tmp", "w") as f:
    f.write("%d\n" % srv.server_address[1])
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
