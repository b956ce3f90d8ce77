#!/usr/bin/env python3
"""Clients that pipeline and do not read (SPEC 13), for the live tests and
bench/door.sh.

  flood.py PORT PID CONNS BYTES READ_PER_S SECONDS

CONNS connections each send BYTES of pipelined GET /metrics and read
READ_PER_S bytes a second (0: nothing) for SECONDS, while the relay's
resident size (process PID) is sampled every 0.1 s and GET /healthz is
sent on a fresh connection every 0.1 s by a process of its own (the
flood's threads share this one's interpreter lock and would delay the
probes, not the relay).  Prints one line:

  peak_rss_kib rss_at_end_kib p50_ms p99_ms max_ms probes

a probe that got no 200 within 5 s counting as 1e9 ms.
"""
import resource
import socket
import subprocess
import sys
import threading
import time

PROBE = r"""
import socket, sys, time
port, stop = int(sys.argv[1]), float(sys.argv[2])
while time.time() < stop:
    t0 = time.time()
    try:
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        ok = c.recv(4096).startswith(b"HTTP/1.1 200")
        c.close()
    except OSError:
        ok = False
    print((time.time() - t0) * 1000 if ok else 1e9, flush=True)
    time.sleep(0.1)
"""

port, pid, n, size, rate, secs = sys.argv[1:7]
port, n, size, rate, secs = int(port), int(n), int(size), int(rate), \
    float(secs)
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
req = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
data = req * (size // len(req))
stop = time.time() + secs
socks = []


def rss():
    with open("/proc/%s/status" % pid) as f:
        return int(f.read().split("VmRSS:")[1].split()[0])


def one():
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    socks.append(s)
    s.settimeout(secs)
    try:
        s.sendall(data)
    except OSError:
        pass


def reader():
    while time.time() < stop:
        for s in list(socks):
            try:
                s.setblocking(False)
                s.recv(rate)
            except OSError:
                pass
        time.sleep(1)


prober = subprocess.Popen([sys.executable, "-c", PROBE, str(port),
                           str(stop)], stdout=subprocess.PIPE, text=True)
for _ in range(n):
    threading.Thread(target=one, daemon=True).start()
if rate > 0:
    threading.Thread(target=reader, daemon=True).start()
peak = 0
while time.time() < stop:
    peak = max(peak, rss())
    time.sleep(0.1)
probes = sorted(float(x) for x in prober.communicate()[0].split()) or [1e9]


def q(p):
    return probes[min(len(probes) - 1, int(p * len(probes)))]


print(peak, rss(), "%.2f %.2f %.2f %d" % (q(0.5), q(0.99), probes[-1],
                                          len(probes)))
