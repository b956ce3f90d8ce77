#!/usr/bin/env python3
"""SPEC 18's ordered delivery, from outside: a publisher, a receiver that
fails and stalls at random, and the checker that reads the receiver's log.

  ordered.py publish BASEURL TOKENFILE SUBJECT N KEYS OUT [SEED [STOPFILE
             [PAUSE_MS]]]
      POSTs N binary-mode events one after another on one keep-alive
      connection, each answered before the next is sent, so WORK stores
      them in this order; event i has id o<SEED>-<i> and ce-partitionkey
      acct-<k> for a key k drawn at random among KEYS.  Each answered 202
      is a line "<id> <key>" of OUT, in order; OUT.progress holds the
      count so far.  Stops early when STOPFILE exists; waits PAUSE_MS
      between events.

  ordered.py receive PORT LOG FAIL_PCT STALL_PCT [SEED]
      A push subscriber for any path: FAIL_PCT % of requests answered 500,
      STALL_PCT % held 100-600 ms first (answered 204 otherwise).  Each
      request is one JSON line of LOG once answered:
      {"start", "end" (Unix ms, this clock), "path", "id", "key",
       "status", "attempt"}.

  ordered.py check OUT LOG PATH [DROPPED [AFTER_MS]]
      The verdict for the requests to PATH (with AFTER_MS, a time on the
      receiver's clock: the requests begun then or later, and the events
      first answered 2xx then or later), a line each:
        overlap <n>     requests of one key open at the same time
        order <n>       keys whose events were first answered 2xx out of
                        OUT's order
        missing <n>     events of OUT never answered 2xx and not DROPPED
                        (a file of dropped ids, a line each)
        requests <n>    requests seen
      and exits 1 unless the first three are 0 and requests > 0.  With
      ORDER_GLOBAL=1 in the environment, every event counts as one key
      (a subscriber whose maxInFlight is 1: strict order).  With
      ORDER_ONLY_AFTER=1, the requests begun before AFTER_MS do not count
      at all (a replay: each event is answered 2xx again after it).
"""
import http.client
import json
import os
import random
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def now_ms():
    return time.time_ns() // 1000000


def publish(base, tokenfile, subject, n, keys, out, seed=1, stop=None,
            pause_ms=0):
    u = urllib.parse.urlsplit(base)
    token = open(tokenfile).read().strip()
    rnd = random.Random(int(seed))
    ctype = "dev.%s.v1" % ".".join(subject.split(".")[2:])
    conn, done = None, 0
    with open(out, "w") as f:
        for i in range(1, int(n) + 1):
            if stop and os.path.exists(stop):
                break
            if float(pause_ms) > 0:
                time.sleep(float(pause_ms) / 1000.0)
            key = "acct-%d" % rnd.randrange(int(keys))
            hdrs = {"Authorization": "Bearer " + token,
                    "ce-specversion": "1.0",
                    "ce-id": "o%s-%d" % (seed, i),
                    "ce-source": "/ordered", "ce-type": ctype,
                    "ce-partitionkey": key, "Content-Type": "text/plain"}
            for _ in range(50):
                try:
                    if conn is None:
                        conn = http.client.HTTPConnection(
                            u.hostname, u.port, timeout=30)
                    conn.request("POST", "/v1/events/" + subject,
                                 body=b"x", headers=hdrs)
                    r = conn.getresponse()
                    r.read()
                    if r.status == 202:
                        break
                except OSError:
                    conn = None
                time.sleep(0.1)
            else:
                print("publish: o%s-%d not stored" % (seed, i),
                      file=sys.stderr)
                sys.exit(1)
            f.write("o%s-%d %s\n" % (seed, i, key))
            f.flush()
            done += 1
            if done % 50 == 0:
                with open(out + ".progress", "w") as p:
                    p.write(str(done))
    with open(out + ".progress", "w") as p:
        p.write(str(done))


def receive(port, log, fail_pct, stall_pct, seed=2):
    rnd = random.Random(int(seed))
    lock = threading.Lock()
    fail_pct, stall_pct = float(fail_pct), float(stall_pct)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            start = now_ms()
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with lock:
                fail = rnd.random() * 100 < fail_pct
                stall = rnd.random() * 100 < stall_pct
                hold = rnd.randrange(100, 600)
            if stall:
                time.sleep(hold / 1000.0)
            status = 500 if fail else 204
            rec = {"start": start, "end": now_ms(), "path": self.path,
                   "id": self.headers.get("ce-id", ""),
                   "key": self.headers.get("ce-partitionkey", ""),
                   "status": status,
                   "attempt": self.headers.get("x-treaty-attempt")}
            with lock, open(log, "a") as f:
                f.write(json.dumps(rec) + "\n")
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 256

    Server(("127.0.0.1", int(port)), Handler).serve_forever()


def check(out, log, path, dropped=None, after=0):
    order = [l.split() for l in open(out) if l.strip()]
    if os.environ.get("ORDER_GLOBAL") == "1":
        order = [(i, "all") for i, _ in order]
    key_of = {i: k for i, k in order}
    recs = []
    after = int(after)
    only_after = os.environ.get("ORDER_ONLY_AFTER") == "1"
    for l in open(log):
        r = json.loads(l)
        if r["path"] == path and (not only_after or r["start"] >= after):
            recs.append(r)
    gone = set()
    if dropped and os.path.exists(dropped):
        gone = {l.strip() for l in open(dropped) if l.strip()}
    by_key = {}
    for r in recs:
        if r["start"] >= after and r["id"] in key_of:
            by_key.setdefault(key_of[r["id"]], []).append(r)
    # No two requests of a key open at once (the receiver's own clock).
    overlap = 0
    for rs in by_key.values():
        rs.sort(key=lambda r: (r["start"], r["end"]))
        for a, b in zip(rs, rs[1:]):
            if b["start"] < a["end"]:
                overlap += 1
    # Each key's events first answered 2xx in OUT's order.
    first_ok = {}
    for r in sorted(recs, key=lambda r: r["end"]):
        if 200 <= r["status"] < 300 and r["id"] not in first_ok:
            first_ok[r["id"]] = r["end"]
    bad_keys = 0
    want = {}
    for i, k in order:
        want.setdefault(k, []).append(i)
    for k, ids in want.items():
        got = [i for i in ids if i in first_ok and first_ok[i] >= after]
        if [first_ok[i] for i in got] != sorted(first_ok[i] for i in got):
            bad_keys += 1
    missing = [i for i, _ in order if i not in first_ok and i not in gone]
    print("overlap", overlap)
    print("order", bad_keys)
    print("missing", len(missing), " ".join(missing[:5]))
    print("requests", len(recs))
    ok = overlap == 0 and bad_keys == 0 and not missing and recs
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"publish": publish, "receive": receive, "check": check}[cmd](*args)
