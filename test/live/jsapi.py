#!/usr/bin/env python3
"""One JetStream API request for the live tests, over the NATS text protocol
on a plain socket (no client library needed), e.g. the state of a consumer:

  jsapi.py PORT consumer STREAM CONSUMER
      prints "ack_pending=N pending=N redelivered=N" (JetStream's
      num_ack_pending, num_pending, num_redelivered)
  jsapi.py PORT raw SUBJECT [PAYLOAD]
      prints the JSON reply
  jsapi.py PORT hpub SUBJECT HEADERS PAYLOAD
      publishes PAYLOAD with HEADERS (a JSON object) and prints the reply
      (JetStream's acknowledgement when a stream takes SUBJECT)

Anything else than a reply within 5 s, or an error reply, prints
"ERROR: <why>" on stdout and exits 1, so that a check comparing the output
with an expected state fails when nats-server is gone.
"""
import json
import socket
import sys
import time


def request(port, subject, payload=b"", headers=None):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    f = s.makefile("rb")
    if not f.readline().startswith(b"INFO "):
        raise RuntimeError("no INFO from nats-server")
    inbox = "_INBOX.jsapi.%d.%d" % (time.time_ns(), id(s))
    if headers is None:
        pub = b"PUB %s %s %d\r\n%s\r\n" % (
            subject.encode(), inbox.encode(), len(payload), payload)
    else:
        hdr = b"NATS/1.0\r\n" + b"".join(
            b"%s: %s\r\n" % (k.encode(), v.encode())
            for k, v in headers.items()) + b"\r\n"
        pub = b"HPUB %s %s %d %d\r\n%s%s\r\n" % (
            subject.encode(), inbox.encode(), len(hdr),
            len(hdr) + len(payload), hdr, payload)
    s.sendall(b'CONNECT {"verbose":false,"pedantic":false%s}\r\n'
              b"SUB %s 1\r\n%s" % (b"" if headers is None else
                                     b',"headers":true', inbox.encode(),
                                     pub))
    end = time.time() + 5
    while time.time() < end:
        line = f.readline()
        if not line:
            raise RuntimeError("nats-server closed the connection")
        if line.startswith(b"PING"):
            s.sendall(b"PONG\r\n")
        elif line.startswith(b"-ERR"):
            raise RuntimeError(line.decode().strip())
        elif line.startswith(b"MSG "):
            n = int(line.split()[-1])
            data = f.read(n + 2)[:n]
            s.close()
            return json.loads(data)
    raise RuntimeError("no reply within 5 s")


def main():
    port, what = int(sys.argv[1]), sys.argv[2]
    try:
        if what == "consumer":
            r = request(port, "$JS.API.CONSUMER.INFO.%s.%s" % (sys.argv[3], sys.argv[4]))
            if "error" in r:
                raise RuntimeError(json.dumps(r["error"]))
            print("ack_pending=%d pending=%d redelivered=%d" % (
                r["num_ack_pending"], r["num_pending"], r["num_redelivered"]))
        elif what == "raw":
            payload = sys.argv[4].encode() if len(sys.argv) > 4 else b""
            print(json.dumps(request(port, sys.argv[3], payload)))
        elif what == "hpub":
            print(json.dumps(request(port, sys.argv[3], sys.argv[5].encode(),
                                     json.loads(sys.argv[4]))))
        else:
            raise RuntimeError("usage: jsapi.py PORT consumer STREAM CONSUMER | "
                               "raw SUBJECT [PAYLOAD] | hpub SUBJECT HEADERS PAYLOAD")
    except Exception as e:  # noqa: BLE001 - every failure is a marker
        print("ERROR: %s" % e)
        sys.exit(1)


main()
