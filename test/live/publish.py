#!/usr/bin/env python3
"""Publish many events quickly for the live tests: CONC threads, each with
one keep-alive connection, POST binary-mode CloudEvents with ids
PREFIX1..PREFIXN to SUBJECT.  Prints how many were answered 202 (and any
other statuses), so a caller can assert what was accepted.

Usage: publish.py BASEURL TOKEN SUBJECT PREFIX N [CONC]
"""
import http.client
import sys
import threading
import urllib.parse

base, token, subject, prefix, n = sys.argv[1:6]
n = int(n)
conc = int(sys.argv[6]) if len(sys.argv) > 6 else 8
u = urllib.parse.urlsplit(base)
lock = threading.Lock()
statuses = {}
ids = iter(range(1, n + 1))
# The type that matches the subject: evt.<tenant>.<p>.<e>.<v> -> dev.<p>.<e>.<v>.v1
ctype = "dev.%s.v1" % ".".join(subject.split(".")[2:])


def worker():
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    while True:
        with lock:
            i = next(ids, None)
        if i is None:
            break
        headers = {"Authorization": "Bearer " + token,
                   "ce-specversion": "1.0", "ce-id": "%s%d" % (prefix, i),
                   "ce-source": "/test", "ce-type": ctype,
                   "Content-Type": "application/json"}
        try:
            conn.request("POST", "/v1/events/" + subject, body=b'{"n":%d}' % i,
                         headers=headers)
            r = conn.getresponse()
            r.read()
            st = r.status
        except (OSError, http.client.HTTPException):
            conn.close()
            conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
            st = 0
        with lock:
            statuses[st] = statuses.get(st, 0) + 1


threads = [threading.Thread(target=worker) for _ in range(conc)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(statuses.get(202, 0), " ".join("%s:%d" % kv for kv in sorted(statuses.items()) if kv[0] != 202))
