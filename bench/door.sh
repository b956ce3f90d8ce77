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

# flood PORT PID CONNS BYTES READ_PER_S SECONDS: test/live/flood.py (the
# live test's attack): "peak_rss_kib rss_at_end_kib p50_ms p99_ms max_ms
# probes".
flood() { python3 test/live/flood.py "$@"; }

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
