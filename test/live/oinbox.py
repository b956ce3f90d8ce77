#!/usr/bin/env python3
"""Workers of an ordered pull inbox (SPEC 18), for t-ordered-inbox.

  oinbox.py work URLFILE INBOX TOKEN LOG STOPFILE LEASE_MS [SEED [THREADS]]
      THREADS workers (2) each GET /v1/inbox/INBOX?lease=true&max=4&wait=500
      from the relays whose base URLs URLFILE lists (a line each, read
      again before each GET: a relay replaced is found), in turn, until
      STOPFILE exists.  Of each envelope: 5 % are left to run out, 10 %
      released (delay 0), the rest acknowledged (DELETE) after 0-40 ms,
      each through the next relay in turn.
      A connection error or a non-2xx GET is logged and tried again on
      the next URL.  Each envelope is one JSON line of LOG, in the
      format ordered.py check reads:
        {"start": when the GET's answer came (Unix ms), "end": when the
         DELETE or release was sent, or for a lease left to run out
         start + LEASE_MS - 1000 (the relay's lease began before start,
         so it ran out no later), "path": "/" + INBOX, "id", "key": the
         event's partitionkey, "status": the DELETE's status (0: released
         or left), "attempt": its deliveryCount}
      so that "two requests of a key open at once" reads "two leases of a
      key held at once", and "first answered 2xx" "first acknowledged".
"""
import json
import random
import sys
import threading
import time
import urllib.error
import urllib.request


def now_ms():
    return time.time_ns() // 1000000


def call(method, url, token, timeout=15):
    req = urllib.request.Request(url, method=method,
                                 headers={"Authorization": "Bearer " + token})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def work(urls, inbox, token, log, stop, lease_ms, seed=3, threads=2):
    import os
    urlfile = urls
    lock = threading.Lock()
    out = open(log, "a")

    def record(r):
        with lock:
            out.write(json.dumps(r) + "\n")
            out.flush()

    def worker(n):
        rnd = random.Random(int(seed) * 100 + n)
        turn = n
        while not os.path.exists(stop):
            urls = [l.strip() for l in open(urlfile) if l.strip()]
            base = urls[turn % len(urls)]
            turn += 1
            try:
                st, body = call("GET", "%s/v1/inbox/%s?lease=true&max=4&wait=500"
                                % (base, inbox), token)
            except OSError:
                time.sleep(0.1)
                continue
            start = now_ms()
            if st != 200:
                sys.stderr.write("GET %s: %d %s\n" % (base, st, body[:200]))
                time.sleep(0.1)
                continue
            for e in json.loads(body)["envelopes"]:
                key = e["event"].get("partitionkey", e["event"].get("subject"))
                rec = {"start": start, "path": "/" + inbox, "id": e["id"],
                       "key": key, "attempt": e["deliveryCount"], "status": 0}
                roll = rnd.random()
                ack = urls[turn % len(urls)]
                turn += 1
                if roll < 0.05:
                    rec["end"] = start + int(lease_ms) - 1000
                    record(rec)
                    continue
                q = urllib.request.quote(e["id"], safe="")
                r = urllib.request.quote(e["receipt"], safe="")
                if roll < 0.15:
                    rec["end"] = now_ms()
                    try:
                        call("POST", "%s/v1/inbox/%s/%s/release?receipt=%s"
                             % (ack, inbox, q, r), token)
                    except OSError:
                        pass
                    record(rec)
                    continue
                time.sleep(rnd.random() * 0.04)
                rec["end"] = now_ms()
                try:
                    rec["status"], _ = call("DELETE", "%s/v1/inbox/%s/%s?receipt=%s"
                                            % (ack, inbox, q, r), token)
                except OSError:
                    rec["status"] = -1
                record(rec)

    ts = [threading.Thread(target=worker, args=(i,), daemon=True)
          for i in range(int(threads))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"work": work}[cmd](*args)
