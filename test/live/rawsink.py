#!/usr/bin/env python3
"""A push subscriber that misbehaves at the HTTP level, on raw sockets, for
t-deliver-pool.  Keep-alive; answers by the event id's prefix:

  two-...      200, then a second 200 in the same write
  e103-...     103 Early Hints and 200 in the same write
  f500-...     500
  poison-...   200, and the next request on that connection is read and
               the connection closed without an answer (a server closing
               an idle keep-alive connection as a request crosses it)
  else         200

Every request is a line of LOGFILE: "<connection number> <ce-id>".
Usage: rawsink.py PORT LOGFILE
"""
import socket
import sys
import threading

PORT, LOG = int(sys.argv[1]), sys.argv[2]
lock = threading.Lock()
nconn = [0]
OK = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"


def read_request(f):
    line = f.readline()
    if not line:
        return None
    headers = {}
    while True:
        h = f.readline()
        if h in (b"\r\n", b"\n", b""):
            break
        k, _, v = h.decode("latin-1").partition(":")
        headers[k.strip().lower()] = v.strip()
    n = int(headers.get("content-length", "0"))
    if n:
        f.read(n)
    return headers


def serve(c, k):
    f = c.makefile("rb")
    poisoned = False
    while True:
        h = read_request(f)
        if h is None:
            break
        cid = h.get("ce-id", "")
        with lock, open(LOG, "a") as out:
            out.write("%d %s\n" % (k, cid))
        if poisoned:
            break
        if cid.startswith("two-"):
            c.sendall(OK + OK)
        elif cid.startswith("e103-"):
            c.sendall(b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n" + OK)
        elif cid.startswith("f500-"):
            c.sendall(b"HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n")
        else:
            c.sendall(OK)
            poisoned = cid.startswith("poison-")
    c.close()


s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", PORT))
s.listen(64)
while True:
    c, _ = s.accept()
    with lock:
        nconn[0] += 1
        k = nconn[0]
    threading.Thread(target=serve, args=(c, k), daemon=True).start()
