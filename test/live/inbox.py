#!/usr/bin/env python3
"""Lease GETs on a pull inbox for the live tests.

  inbox.py URL INBOX TOKEN take [counts]
      one GET /v1/inbox/INBOX?lease=true&max=100: the ids handed out,
      sorted, space-separated ("id:deliveryCount" with "counts")
  inbox.py URL INBOX TOKEN until ID SECONDS
      lease GETs every 0.1 s until ID is handed out (at most SECONDS),
      each envelope taken released again at once (delay 0) so that the
      next reader finds it; prints the distinct ids seen, sorted
  inbox.py URL[,URL...] INBOX TOKEN leases
      one lease GET (max=100) on the first URL: one line per envelope,
      "id deliveryCount receipt", in the answer's order
  inbox.py URL[,URL...] INBOX TOKEN ack IDS SECONDS
      lease GETs of 2 every 0.1 s until every id of IDS (comma-separated)
      was handed out (at most SECONDS), the GETs going to the URLs in
      turn, each envelope acknowledged at once (DELETE) through the next
      URL in turn; one line per envelope, in order: "id deliveryCount
      lender ackURL ackStatus receipt", the lender being the replay id the
      receipt names, or "own"; with READY=FILE in the environment, FILE
      is made once the first GET was answered (it is polling now)

Anything but a 200 with an inbox answer, a failed release, or ID not seen
in time prints "ERROR: <why>" and exits 1: a check expecting "" (nothing
handed out) must fail when the relay is gone.
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request

URLS, INBOX, TOKEN, CMD = sys.argv[1:5]
URLS = URLS.split(",")
URL = URLS[0]


class Failed(Exception):
    pass


def call(method, path, url=None):
    req = urllib.request.Request((url or URL) + path, method=method,
                                 headers={"Authorization": "Bearer " + TOKEN})
    try:
        with urllib.request.urlopen(req, timeout=15) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except OSError as e:
        raise Failed("%s %s: no answer (%s)" % (method, path, e))


def take(url=None, n=100):
    path = "/v1/inbox/%s?lease=true&max=%d" % (INBOX, n)
    status, body = call("GET", path, url)
    if status != 200:
        raise Failed("GET %s: HTTP %d %s" % (path, status, body[:200].decode("utf-8", "replace")))
    try:
        return json.loads(body)["envelopes"]
    except (ValueError, KeyError) as e:
        raise Failed("GET %s: not an inbox answer (%s)" % (path, e))


def main():
    if CMD == "take":
        envs = take()
        if len(sys.argv) > 5 and sys.argv[5] == "counts":
            print(" ".join(sorted("%s:%d" % (e["id"], e["deliveryCount"]) for e in envs)))
        else:
            print(" ".join(sorted(e["id"] for e in envs)))
    elif CMD == "until":
        want, end = sys.argv[5], time.time() + float(sys.argv[6])
        seen = set()
        while True:
            for e in take():
                seen.add(e["id"])
                path = "/v1/inbox/%s/%s/release?receipt=%s" % (
                    INBOX, urllib.request.quote(e["id"], safe=""), e["receipt"])
                status, body = call("POST", path)
                if status != 204:
                    raise Failed("release of %s: HTTP %d %s" % (e["id"], status, body[:200]))
            if want in seen:
                break
            if time.time() > end:
                raise Failed("%s not handed out within %s s (saw [%s])" % (
                    want, sys.argv[6], " ".join(sorted(seen))))
            time.sleep(0.1)
        print(" ".join(sorted(seen)))
    elif CMD == "leases":
        for e in take():
            print(e["id"], e["deliveryCount"], e["receipt"])
    elif CMD == "ack":
        want, end = set(sys.argv[5].split(",")), time.time() + float(sys.argv[6])
        seen, i, k = set(), 0, 0
        while True:
            for e in take(URLS[i % len(URLS)], 2):
                seen.add(e["id"])
                k += 1
                url = URLS[(i + k) % len(URLS)]
                fields = e["receipt"].split(".")
                lender = fields[4][1:] if len(fields) == 6 else "own"
                status, _ = call("DELETE", "/v1/inbox/%s/%s?receipt=%s" % (
                    INBOX, urllib.request.quote(e["id"], safe=""), e["receipt"]), url)
                print(e["id"], e["deliveryCount"], lender, url, status, e["receipt"])
            if i == 0 and os.environ.get("READY"):
                open(os.environ["READY"], "w").close()  # polling now
            i += 1
            if want <= seen:
                break
            if time.time() > end:
                raise Failed("%s not handed out within %s s (saw [%s])" % (
                    " ".join(sorted(want - seen)), sys.argv[6], " ".join(sorted(seen))))
            time.sleep(0.1)
    else:
        raise Failed("usage: inbox.py URL INBOX TOKEN take [counts] | until ID SECONDS"
                     " | leases | ack IDS SECONDS")


try:
    main()
except Failed as e:
    print("ERROR: %s" % e)
    sys.exit(1)
