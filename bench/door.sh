#!/usr/bin/env bash
# make bench-door: what the front door holds under the attacks of issue 28,
# on loopback against the relay (real nats-server):
#   unread   100 connections each send 2 MB of pipelined GET /metrics and
#            read nothing: the relay's peak RSS, and /healthz on fresh
#            connections meanwhile (p50, p99, max over the run);
#   slow     1,000 connections each send 200 KB of pipelined GET /metrics
#            and read 1 KB a second: the relay's RSS per connection;
#   idle     a cap of 1,000, 1,500 idle connections, then 100 fresh
#            GET /healthz each on its own connection: the slowest answer.
# BENCH_DOOR=unread,slow,idle chooses.  Figures: docs/BENCHMARKS.md.
set -u
cd "$(dirname "$0")/.."
O=${O:-build}
. bench/lib.sh
bench_init door
WHAT=${BENCH_DOOR:-unread,slow,idle}
bench_nats

# relay [ENV...]: a relay on a fresh port with ENV; sets RP and RELAY.
relay() {
	[ -n "${RELAY:-}" ] && { kill "$RELAY"; wait "$RELAY" 2>/dev/null; }
	RP=$(port)
	env NATS_URL=nats://127.0.0.1:$NP PORT=$RP TREATY_RELAY_LISTEN=127.0.0.1 \
	    TREATY_RELAY_PRODUCERS='[]' "$@" \
	    "$T/treaty-relay" > "$T/relay.log" 2>&1 & RELAY=$!; PIDS+=($RELAY)
	healthy $RP || { echo "bench: the relay did not start"; cat "$T/relay.log"; exit 1; }
}
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$RELAY/status"; }

# flood PORT PID CONNS BYTES READ_PER_S SECONDS: CONNS connections each
# sending BYTES of pipelined GET /metrics, reading READ_PER_S bytes a
# second (0: nothing); /healthz probed on fresh connections every 0.1 s.
# Prints "peak_rss_kib rss_at_end_kib p50_ms p99_ms max_ms probes".
flood() {
	python3 - "$@" <<'PY'
import resource, socket, sys, threading, time
port, pid, n, size, rate, secs = sys.argv[1:7]
port, n, size, rate, secs = int(port), int(n), int(size), int(rate), float(secs)
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
req = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
data = req * (size // len(req))
def rss():
    return int(open("/proc/%s/status" % pid).read().split("VmRSS:")[1].split()[0])
socks, stop = [], time.time() + secs
def one():
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    socks.append(s)
    s.settimeout(secs)
    try:
        s.sendall(data)
    except OSError:
        pass
ts = [threading.Thread(target=one, daemon=True) for _ in range(n)]
for t in ts:
    t.start()
def reader():
    while time.time() < stop:
        for s in list(socks):
            try:
                s.setblocking(False)
                s.recv(rate)
            except OSError:
                pass
        time.sleep(1)
if rate > 0:
    threading.Thread(target=reader, daemon=True).start()
# The probes from a process of their own: the flood's threads share this
# one's interpreter lock, and would delay the probes, not the relay.
import subprocess
prober = subprocess.Popen([sys.executable, "-c", """
import socket, sys, time
port, stop = int(sys.argv[1]), float(sys.argv[2])
while time.time() < stop:
    t0 = time.time()
    try:
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        c.sendall(b"GET /healthz HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
        ok = c.recv(4096).startswith(b"HTTP/1.1 200")
        c.close()
    except OSError:
        ok = False
    print((time.time() - t0) * 1000 if ok else 1e9, flush=True)
    time.sleep(0.1)
""", str(port), str(stop)], stdout=subprocess.PIPE, text=True)
peak = 0
while time.time() < stop:
    peak = max(peak, rss())
    time.sleep(0.1)
probes = sorted(float(x) for x in prober.communicate()[0].split())
q = lambda p: probes[min(len(probes) - 1, int(p * len(probes)))]
print(peak, rss(), "%.2f %.2f %.2f %d" % (q(0.5), q(0.99), probes[-1], len(probes)))
PY
}

case ",$WHAT," in *,unread,*)
	relay
	before=$(rss)
	read -r peak end p50 p99 pmax np < <(flood $RP $RELAY 100 2000000 0 15)
	echo "unread: 100 connections x 2 MB of pipelined /metrics, nothing read, 15 s"
	echo "  relay RSS before ${before} KiB, peak ${peak} KiB (bound: 10 MiB + 128 KiB x 100 = 23040 KiB)"
	echo "  /healthz on fresh connections: p50 ${p50} ms, p99 ${p99} ms, max ${pmax} ms ($np probes)"
	;;
esac
case ",$WHAT," in *,slow,*)
	relay
	before=$(rss)
	read -r peak end p50 p99 pmax np < <(flood $RP $RELAY 1000 200000 1024 20)
	echo "slow: 1,000 connections x 200 KB of pipelined /metrics, each read at 1 KB/s, 20 s"
	echo "  relay RSS before ${before} KiB, peak ${peak} KiB: $(( (peak - before) / 1000 )) KiB a connection"
	echo "  /healthz on fresh connections: p50 ${p50} ms, p99 ${p99} ms, max ${pmax} ms ($np probes)"
	;;
esac
case ",$WHAT," in *,idle,*)
	relay TREATY_RELAY_MAX_CONNECTIONS=1000
	python3 - $RP <<'PY'
import resource, socket, sys, time
port = int(sys.argv[1])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
held = [socket.create_connection(("127.0.0.1", port)) for _ in range(1500)]
time.sleep(0.5)
ms = []
for i in range(100):
    t0 = time.time()
    c = socket.create_connection(("127.0.0.1", port))
    c.settimeout(30)
    c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    ok = c.recv(4096).startswith(b"HTTP/1.1 200")
    ms.append((time.time() - t0) * 1000 if ok else 1e9)
    c.close()
ms.sort()
print("idle: cap 1,000, 1,500 idle connections, 100 fresh /healthz: "
      "p50 %.2f ms, max %.2f ms, all answered: %s" % (ms[50], ms[-1], ms[-1] < 1e9))
PY
	;;
esac
