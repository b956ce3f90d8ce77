#!/usr/bin/env python3
"""A steady publisher for the live tests: POSTs one binary-mode CloudEvent
after another (ids PREFIX1, PREFIX2, ...) until STOPFILE exists, reading
the bearer token from TOKENFILE before each request (so a test can switch
tokens under it), and counts what happened.

  MODE keep   one keep-alive connection, opened again only when it fails
  MODE new    a new connection for every request (a load balancer's view)

While it runs, OUT.progress holds the number of requests answered so far.
At the end OUT holds one line:

  sent=N ok=N conns=N other=STATUS:N,...

where ok counts 202s, conns the connections opened, and other every other
outcome ("reset" for a connection error or a request without an answer).

With CONC > 1, that many such clients run at once (ids PREFIX<k>-<n>),
so that connections are queued to the server at any moment.  With LOG,
each answer is also a line "<unix ms> <status>" there.

Usage: steady.py BASEURL TOKENFILE SUBJECT PREFIX STOPFILE OUT MODE
                 [PAUSE_MS [CONC [LOG]]]
"""
import http.client
import os
import sys
import threading
import time
import urllib.parse

base, tokfile, subject, prefix, stopfile, out, mode = sys.argv[1:8]
pause = float(sys.argv[8]) / 1000 if len(sys.argv) > 8 else 0.005
conc = int(sys.argv[9]) if len(sys.argv) > 9 else 1
log = open(sys.argv[10], "a") if len(sys.argv) > 10 else None
u = urllib.parse.urlsplit(base)
ctype = "dev.%s.v1" % ".".join(subject.split(".")[2:])
lock = threading.Lock()
sent = ok = conns = 0
other = {}


def connect():
    global conns
    with lock:
        conns += 1
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.connect()
    return c


def client(k):
    global sent, ok
    conn = None
    i = 0
    pre = prefix if conc == 1 else "%s%d-" % (prefix, k)
    while not os.path.exists(stopfile):
        i += 1
        with open(tokfile) as f:
            token = f.read().strip()
        headers = {"Authorization": "Bearer " + token,
                   "ce-specversion": "1.0", "ce-id": "%s%d" % (pre, i),
                   "ce-source": "/steady", "ce-type": ctype,
                   "Content-Type": "text/plain"}
        try:
            if conn is None:
                conn = connect()
            conn.request("POST", "/v1/events/" + subject,
                         body=b"steady %d" % i, headers=headers)
            r = conn.getresponse()
            r.read()
            st = r.status
            if mode == "new" or \
                    r.getheader("Connection", "").lower() == "close":
                conn.close()
                conn = None
        except (OSError, http.client.HTTPException):
            if conn is not None:
                conn.close()
            conn = None
            st = "reset"
        with lock:
            if log is not None:
                log.write("%d %s\n" % (time.time() * 1000, st))
            sent += 1
            if st == 202:
                ok += 1
            else:
                other[st] = other.get(st, 0) + 1
            with open(out + ".progress.tmp", "w") as f:
                f.write("%d\n" % sent)
            os.replace(out + ".progress.tmp", out + ".progress")
        time.sleep(pause)


threads = [threading.Thread(target=client, args=(k,)) for k in range(conc)]
for t in threads:
    t.start()
for t in threads:
    t.join()
if log is not None:
    log.close()

with open(out, "w") as f:
    f.write("sent=%d ok=%d conns=%d other=%s\n" % (
        sent, ok, conns, ",".join("%s:%d" % kv for kv in sorted(
            other.items(), key=str))))
