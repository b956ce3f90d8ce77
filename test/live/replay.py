#!/usr/bin/env python3
"""A scripted stand-in for the relay's replay routes (SPEC 15), for
treaty admin replay's live tests:

  POST   /v1/admin/subscribers/NAME/replay?since=T[&dropped=true]
         202 {"replay":ID,"matched":N|null}, ID "rp-NAME-<n>"
  GET    /v1/admin/replays/ID   200 the k-th step of NAME's script
  DELETE /v1/admin/replays/ID   204; later GETs say "cancelled"

NAME picks the script (the last step repeats); any other name is 404
unknown_subscriber, an unknown ID 404 {"error":"unknown_replay"}, a
since that is not an RFC 3339 date-time (a '+' read as a space) or is in
the year 2999 or later 400, a token other than TOKEN 401.

  steady   matched 5000: running 0, 1200, 1200 (no change), 2400, done
  stopped  matched 100: running 10, 20, then cancelled
  unsized  matched null: running 5, 10, done 15 (remaining null)
  forever  matched 1000000: running, 10 more each time, never done
  vanish   matched 10: running, then 404 unknown_replay
  flaky    matched 10: running, 503 (Retry-After: 0), done
  gone503  matched 10: every GET 503
  busy     the POST itself: 503 with Retry-After: 0, every time
  full     the POST itself: 429 too_many_replays with Retry-After: 0,
           every time
  fullonce the POST itself: 429 too_many_replays with Retry-After: 1
           the first time, then matched 10: done
  garbage  the POST itself: 202 with a body that is not JSON
  broken   the POST itself: 500, every time
  closing  the POST itself: 503 (the connection kept), then the
           connection closed at the second POST without an answer, then
           503 again

Log: one tab-separated line per request, written on arrival: METHOD,
the raw path, arrival ms (monotonic), the decoded subscriber name or
replay id, the decoded since ("-" when none), dropped ("-" when none).

Usage: replay.py PORTFILE LOGFILE TOKEN   (binds 127.0.0.1 on a free port
and writes it to PORTFILE once listening)
"""
import json
import os
import re
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORTFILE, LOG, TOKEN = sys.argv[1], sys.argv[2], sys.argv[3]
lock = threading.Lock()
replays = {}            # id -> {"name", "k", "cancelled"}
count = [0]
closing = [0]           # POSTs for "closing"
fullonce = [0]          # POSTs for "fullonce"

# name -> (matched, [steps]); a step is (state, delivered, dropped) or an
# HTTP status for the GET.
SCRIPTS = {
    "steady": (5000, [("running", 0, 0), ("running", 1200, 3),
                      ("running", 1200, 3), ("running", 2400, 3),
                      ("done", 4997, 3)]),
    "stopped": (100, [("running", 10, 0), ("running", 20, 0),
                      ("cancelled", 20, 0)]),
    "unsized": (None, [("running", 5, 0), ("running", 10, 1),
                       ("done", 15, 1)]),
    "forever": (1000000, None),
    "vanish": (10, [("running", 1, 0), 404]),
    "flaky": (10, [("running", 1, 0), 503, ("done", 10, 0)]),
    "gone503": (10, [503]),
    "fullonce": (10, [("done", 10, 0)]),
}
TOO_MANY = {"error": "too_many_replays",
            "detail": "at most 2 replays run at once (scripted)"}


def rfc3339(s):
    return re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?"
                    r"(Z|[+-]\d\d:\d\d)$", s) is not None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, obj=None, headers=()):
        out = b"" if obj is None else (
            obj if isinstance(obj, bytes) else
            json.dumps(obj, separators=(",", ":")).encode())
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        if obj is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log(self, what, since="-", dropped="-"):
        with lock, open(LOG, "a") as f:
            f.write("%s\t%s\t%.3f\t%s\t%s\t%s\n" % (
                self.command, self.path, time.monotonic() * 1000.0, what,
                since, dropped))

    def route(self):
        u = urllib.parse.urlsplit(self.path)
        parts = u.path.split("/")
        if self.headers.get("Authorization") != "Bearer " + TOKEN:
            self.log("-")
            return self.answer(401, {"error": "unauthenticated",
                                     "detail": "not an admin token"})
        if (self.command == "POST" and len(parts) == 6 and
                parts[:4] == ["", "v1", "admin", "subscribers"] and
                parts[5] == "replay"):
            return self.start(urllib.parse.unquote(parts[4]),
                              urllib.parse.parse_qs(u.query))
        if len(parts) == 5 and parts[:4] == ["", "v1", "admin", "replays"]:
            rid = urllib.parse.unquote(parts[4])
            self.log(rid)
            with lock:
                r = replays.get(rid)
                if r is not None:
                    r["k"] += self.command == "GET"
                    k = r["k"]
                    if self.command == "DELETE":
                        r["cancelled"] = True
            if r is None:
                return self.answer(404, {"error": "unknown_replay"})
            if self.command == "DELETE":
                return self.answer(204)
            if self.command == "GET":
                return self.report(rid, r, k)
        self.log("-")
        self.answer(404, {"error": "not_found", "detail": "no such route"})

    def start(self, name, q):
        since = q.get("since", [""])[0]
        dropped = q.get("dropped", ["-"])[0]
        self.log(name, since or "-", dropped)
        if not rfc3339(since) or since >= "2999":
            return self.answer(400, {"error": "bad_request",
                                     "detail": "since: not an RFC 3339 "
                                               "date-time in the past"})
        if name == "busy":
            return self.answer(503, {"error": "unavailable",
                                     "detail": "JetStream unavailable"},
                               [("Retry-After", "0")])
        if name == "full":
            return self.answer(429, TOO_MANY, [("Retry-After", "0")])
        if name == "fullonce":
            with lock:
                fullonce[0] += 1
                k = fullonce[0]
            if k == 1:
                return self.answer(429, TOO_MANY, [("Retry-After", "1")])
        if name == "garbage":
            return self.answer(202, b"<html>")
        if name == "closing":
            with lock:
                closing[0] += 1
                k = closing[0]
            if k == 2:
                self.close_connection = True
                return
            return self.answer(503, {"error": "unavailable",
                                     "detail": "JetStream unavailable"},
                               [("Retry-After", "0")])
        if name == "broken":
            return self.answer(500, {"error": "internal",
                                     "detail": "scripted 500"})
        if name not in SCRIPTS:
            return self.answer(404, {"error": "unknown_subscriber",
                                     "detail": "no subscriber %s" % name})
        with lock:
            count[0] += 1
            rid = "rp-%s-%d" % (name, count[0])
            replays[rid] = {"name": name, "k": 0, "cancelled": False}
        self.answer(202, {"replay": rid, "matched": SCRIPTS[name][0]})

    def report(self, rid, r, k):
        matched, steps = SCRIPTS[r["name"]]
        if steps is None:
            step = ("running", 10 * k, 0)
        else:
            step = steps[min(k, len(steps)) - 1]
        if step == 404:
            return self.answer(404, {"error": "unknown_replay"})
        if step == 503:
            return self.answer(503, {"error": "unavailable",
                                     "detail": "JetStream unavailable"},
                               [("Retry-After", "0")])
        state, delivered, dropped = step
        if r["cancelled"]:
            state = "cancelled"
        left = None if matched is None else matched - delivered - dropped
        self.answer(200, {"id": rid, "subscriber": r["name"],
                          "state": state, "matched": matched,
                          "delivered": delivered, "dropped": dropped,
                          "remaining": left})

    do_GET = do_POST = do_DELETE = route


ThreadingHTTPServer.daemon_threads = True
srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(PORTFILE + ".tmp", "w") as f:
    f.write("%d\n" % srv.server_address[1])
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
