#!/usr/bin/env python3
"""A push subscriber whose answers the test sets per path, for the tests of
SPEC 17 (pause, 410, breaker, pace).  Every request is one JSON line of
LOGFILE when it is answered:

  {"start": ms, "end": ms, "path": "/brk", "id": "<ce-id>", "status": 503,
   "attempt": "2", "probe": "1" or null, "open": <requests open at its
   start, this one included>, "traceparent": .., "tracestate": ..}

(times in Unix milliseconds, this process's clock).  A path answers 204
until set otherwise with

  POST /_ctl?path=/brk&status=503[&for_ms=60000][&hold_ms=300]
       [&max_open=4][&retry_after=3][&count=1]

status for for_ms (then 204 again; without it, until set again), each of
those answers held hold_ms first, 429 instead whenever more than max_open requests
of that path are open, and a Retry-After header with its answers other
than 2xx; with count, status only for that many requests.  GET /_open?path=/brk answers the requests of that path open now.

Usage: gate-receiver.py PORT LOGFILE
"""
import json
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, LOG = int(sys.argv[1]), sys.argv[2]
lock = threading.Lock()
modes = {}          # path -> dict(status, until, hold_ms, max_open, retry_after)
opened = {}         # path -> requests open


def now_ms():
    return time.time_ns() // 1000000


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(u.query))
        if u.path != "/_open":
            self.answer(404)
            return
        with lock:
            n = opened.get(q.get("path", ""), 0)
        body = str(n).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(n)
        u = urllib.parse.urlsplit(self.path)
        if u.path == "/_ctl":
            q = dict(urllib.parse.parse_qsl(u.query))
            m = {"status": int(q.get("status", "204")),
                 "until": now_ms() + int(q["for_ms"]) if "for_ms" in q else None,
                 "hold_ms": int(q.get("hold_ms", "0")),
                 "max_open": int(q.get("max_open", "0")),
                 "retry_after": q.get("retry_after"),
                 "count": int(q["count"]) if "count" in q else None}
            with lock:
                modes[q["path"]] = m
            self.answer(204)
            return
        path = u.path
        start = now_ms()
        with lock:
            opened[path] = opened.get(path, 0) + 1
            open_now = opened[path]
            m = modes.get(path)
        status, hold, ra = 204, 0, None
        if m is not None:
            with lock:
                left = m["count"] is None or m["count"] > 0
                if left and m["count"] is not None:
                    m["count"] -= 1
            if left and (m["until"] is None or start < m["until"]):
                status = m["status"]
                hold = m["hold_ms"]
            ra = m["retry_after"]
            if m["max_open"] and open_now > m["max_open"]:
                status = 429
        if hold:
            time.sleep(hold / 1000.0)
        hdrs = []
        if ra is not None and not 200 <= status < 300:
            hdrs.append(("Retry-After", ra))
        end = now_ms()
        rec = {"start": start, "end": end, "path": path,
               "id": self.headers.get("ce-id", ""), "status": status,
               "attempt": self.headers.get("x-treaty-attempt"),
               "probe": self.headers.get("x-treaty-probe"),
               "open": open_now,
               "traceparent": self.headers.get("traceparent"),
               "tracestate": self.headers.get("tracestate")}
        with lock:
            opened[path] -= 1
            with open(LOG, "a") as f:
                f.write(json.dumps(rec) + "\n")
        self.answer(status, hdrs)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


Server(("127.0.0.1", PORT), Handler).serve_forever()
