#!/usr/bin/env python3
"""A push subscriber for the live tests: records every delivery as one JSON
line (time, headers, body) and answers by the event id's prefix:

  ok-...        204
  fail2-...     503 twice (Retry-After: 0 when the id has "ra"), then 204
  reject-...    400
  always500-... 500
  slow-...      never answers within the test (sleeps 60 s)
  hold1-...     the first attempt sleeps 60 s, later ones 204 at once
  delay1-...    204 after 1 s
  delay6-...    204 after 6 s
  delay15-...   204 after 15 s
  d50-...       204 after 50 ms
  once400-...   400 the first time at each path, then 204

Usage: receiver.py PORT LOGFILE [CERT KEY]   (with CERT and KEY: https;
each TLS handshake's SNI name, or "-" without one, is a line of LOGFILE.sni)
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, LOG = int(sys.argv[1]), sys.argv[2]
lock = threading.Lock()
attempts = {}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        cid = self.headers.get("ce-id", "")
        with lock:
            attempts[cid] = attempts.get(cid, 0) + 1
            k = attempts[cid]
            attempts[(self.path, cid)] = attempts.get((self.path, cid), 0) + 1
            kp = attempts[(self.path, cid)]
            with open(LOG, "a") as f:
                f.write(json.dumps({"t": time.time(), "attempt": k, "path": self.path,
                                    "headers": {h.lower(): v for h, v in self.headers.items()},
                                    "body": body.hex()}) + "\n")
        status, extra = 204, {}
        if cid.startswith("fail2-") and k <= 2:
            status = 503
            if "ra" in cid:
                extra["Retry-After"] = "1"
        elif cid.startswith("reject-"):
            status = 400
        elif cid.startswith("always500-"):
            status = 500
        elif cid.startswith("slow-") or (cid.startswith("hold1-") and k == 1):
            time.sleep(60)
        elif cid.startswith("delay1-"):
            time.sleep(1)
        elif cid.startswith("delay6-"):
            time.sleep(6)
        elif cid.startswith("delay15-"):
            time.sleep(15)
        elif cid.startswith("d50-"):
            time.sleep(0.05)
        elif cid.startswith("once400-") and kp == 1:
            status = 400
        self.send_response(status)
        for h, v in extra.items():
            self.send_header(h, v)
        self.send_header("Content-Length", "0")
        self.end_headers()


ThreadingHTTPServer.daemon_threads = True
server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
if len(sys.argv) > 4:
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[3], sys.argv[4])

    def sni(sock, name, context):
        with lock, open(LOG + ".sni", "a") as f:
            f.write((name or "-") + "\n")
    ctx.sni_callback = sni
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
server.serve_forever()
