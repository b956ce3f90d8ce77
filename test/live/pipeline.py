#!/usr/bin/env python3
"""Pipelined requests on one connection, for the live tests (SPEC 13).

  pipeline.py PORT MIX [--tls CAFILE] [--split] [--tag TAG]

MIX is a comma-separated list of KIND:N, KIND one of
  post    POST /v1/events/evt.acme.shop.order.created (ce-id TAG-<i>)
  inbox   GET /v1/inbox/pulled?peek=true
  admin   GET /v1/admin/subscribers
  health  GET /healthz
and the requests are interleaved in turn (post, inbox, admin, post, ...)
until each kind has its N.  Tokens come from the environment: TOKEN (a
producer's), PULL_TOKEN (the inbox "pulled"), ADMIN_TOKEN.

Without --split every request goes out in one write (the relay reads it
in as many reads as the socket gives).  With --split the burst is sent
once per byte offset k (1 .. len-1) on a new connection each: the first k
bytes, a pause the relay reads them in, then the rest.  --every K splits
only at every K-th offset.

Each answer is read in order (by its Content-Length) and matched to its
request: a 202 carrying the POST's own id, a 200 inbox answer
("leaseSeconds"), a 200 subscriber list ("subscribers"), a 200 health
answer ("status":"ok").  Prints "ok <answers>" when every answer came, in
order, else "ERROR: <first difference>".
"""
import json
import os
import socket
import ssl
import sys
import time

PORT = int(sys.argv[1])
MIX = [(k, int(n)) for k, n in (p.split(":") for p in sys.argv[2].split(","))]
args = sys.argv[3:]
CA = args[args.index("--tls") + 1] if "--tls" in args else None
SPLIT = "--split" in args
EVERY = int(args[args.index("--every") + 1]) if "--every" in args else 1
TAG = args[args.index("--tag") + 1] if "--tag" in args else "pl"
TOKEN = os.environ.get("TOKEN", "")
PULL = os.environ.get("PULL_TOKEN", "")
ADMIN = os.environ.get("ADMIN_TOKEN", "")


def request(kind, i):
    """One request's bytes, and what its answer must show."""
    if kind == "post":
        body = b'{"n":%d}' % i
        eid = "%s-%d" % (TAG, i)
        head = ("POST /v1/events/evt.acme.shop.order.created HTTP/1.1\r\n"
                "Host: x\r\nAuthorization: Bearer %s\r\n"
                "ce-specversion: 1.0\r\nce-id: %s\r\nce-source: /pipe\r\n"
                "ce-type: dev.shop.order.created.v1\r\n"
                "Content-Type: application/json\r\n"
                "Content-Length: %d\r\n\r\n" % (TOKEN, eid, len(body)))
        return head.encode() + body, (202, "id", eid)
    if kind == "inbox":
        return ("GET /v1/inbox/pulled?peek=true&max=1 HTTP/1.1\r\nHost: x\r\n"
                "Authorization: Bearer %s\r\n\r\n" % PULL).encode(), \
            (200, "leaseSeconds", None)
    if kind == "admin":
        return ("GET /v1/admin/subscribers HTTP/1.1\r\nHost: x\r\n"
                "Authorization: Bearer %s\r\n\r\n" % ADMIN).encode(), \
            (200, "subscribers", None)
    return b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", (200, "status", "ok")


def plan():
    left = dict(MIX)
    order = [k for k, _ in MIX]
    out, i = [], 0
    while any(left.values()):
        for k in order:
            if left[k] > 0:
                left[k] -= 1
                out.append(request(k, i))
                i += 1
    return out


def connect():
    s = socket.create_connection(("127.0.0.1", PORT), timeout=30)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if CA:
        ctx = ssl.create_default_context(cafile=CA)
        s = ctx.wrap_socket(s, server_hostname="localhost")
    return s


class Reader:
    def __init__(self, s):
        self.s, self.buf = s, b""

    def fill(self):
        d = self.s.recv(65536)
        if not d:
            raise EOFError("connection closed")
        self.buf += d

    def answer(self):
        while b"\r\n\r\n" not in self.buf:
            self.fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        length = 0
        for ln in lines[1:]:
            k, _, v = ln.partition(":")
            if k.strip().lower() == "content-length":
                length = int(v.strip())
        while len(self.buf) < length:
            self.fill()
        body, self.buf = self.buf[:length], self.buf[length:]
        return status, body


def run(burst, want, cut=None):
    s = connect()
    try:
        if cut is None:
            s.sendall(burst)
        else:
            s.sendall(burst[:cut])
            time.sleep(0.02)
            s.sendall(burst[cut:])
        r = Reader(s)
        for n, (status, key, val) in enumerate(want):
            try:
                got, body = r.answer()
            except (OSError, EOFError) as e:
                return "answer %d of %d: %s" % (n + 1, len(want), e)
            try:
                doc = json.loads(body)
            except ValueError:
                doc = {}
            if got != status or key not in doc or \
                    (val is not None and doc[key] != val):
                return "answer %d: %d %s, wanted %d with %s=%s" % (
                    n + 1, got, body[:120], status, key, val)
    finally:
        s.close()
    return None


reqs = plan()
burst = b"".join(r for r, _ in reqs)
want = [w for _, w in reqs]
if not SPLIT:
    err = run(burst, want)
    print("ERROR: " + err if err else "ok %d" % len(want))
    sys.exit(1 if err else 0)
runs = 0
for cut in range(1, len(burst), EVERY):
    runs += 1
    err = run(burst, want, cut)
    if err:
        print("ERROR: split at byte %d of %d: %s" % (cut, len(burst), err))
        sys.exit(1)
print("ok %d" % (runs * len(want)))
