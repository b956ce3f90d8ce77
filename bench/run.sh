#!/usr/bin/env bash
# make bench: wrk against the relay (real nats-server, JetStream file store)
# and against bench/sink (evhttp answering 202 without storing: the HTTP
# ceiling on this machine), 64 connections, 10 s each; batches against the
# storage ceiling (BENCH_NO_BATCH=1 skips); plain beside TLS (BENCH_NO_TLS=1
# skips); ordered delivery beside unordered (BENCH_NO_ORDER=1 skips).
# Prints the figures recorded in docs/BENCHMARKS.md.
set -u
cd "$(dirname "$0")/.."
O=${O:-build}
DUR=${BENCH_DURATION:-10s}
CONNS=${BENCH_CONNECTIONS:-64}
THREADS=${BENCH_THREADS:-2}
T=$(mktemp -d /tmp/treaty-bench.XXXXXX)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill $p 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"' EXIT

command -v wrk >/dev/null || { echo "bench: wrk is not installed (apt-get install wrk)"; exit 1; }
port() { echo $((10000 + RANDOM % 22000)); }	# below the ephemeral range
up() { for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.1; done; return 1; }

NP=$(port); RP=$(port); SP=$(port)
cat > "$T/nats.conf" <<CONF
listen: 127.0.0.1:$NP
max_payload: 2MB
jetstream { store_dir: "$T/js" }
CONF
nats-server -c "$T/nats.conf" > "$T/nats.log" 2>&1 & PIDS+=($!)
up $NP || { echo "bench: nats-server did not start"; exit 1; }

export BENCH_TOKEN=bench-token-0123456789
SHA=$(printf '%s' "$BENCH_TOKEN" | sha256sum | cut -c1-64)
NATS_URL=nats://127.0.0.1:$NP PORT=$RP TREATY_RELAY_LISTEN=127.0.0.1 \
    TREATY_RELAY_PRODUCERS='[{"name":"bench","tokenSha256":"'$SHA'","subjects":["evt.bench.>"]}]' \
    "$O/treaty-relay" > "$T/relay.log" 2>&1 & RELAY=$!; PIDS+=($RELAY)
"$O/bench/sink" $SP 202 & SINK=$!; PIDS+=($SINK)
up $SP && up $RP || { echo "bench: relay or sink did not start"; cat "$T/relay.log"; exit 1; }
for _ in $(seq 100); do
	[ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$RP/healthz)" = 200 ] && break
	sleep 0.1
done

echo "# $(nproc) cores, $(uname -r), wrk -t$THREADS -c$CONNS -d$DUR --latency, 256-byte body, unique ce-id"
echo "## ceiling: bench/sink (evhttp, 202, nothing stored)"
wrk -t$THREADS -c$CONNS -d$DUR --latency -s bench/ingest.lua http://127.0.0.1:$SP/ sink | tee "$T/sink.txt" | grep -E 'Requests/sec|Latency|50%|99%|Non-2xx|Socket errors|p50_ms'
NATSPID=${PIDS[0]}
cpu() { awk '{print $14 + $15}' /proc/$1/stat; }	# utime+stime, clock ticks
r0=$(cpu $RELAY); n0=$(cpu $NATSPID)
echo "## treaty-relay (JetStream publish and acknowledgement per request)"
if [ -n "${BENCH_PROFILE:-}" ]; then
	perf record -e cpu-clock -o "$T/perf.data" -p $RELAY -- sleep 8 >/dev/null 2>&1 &
	PERF=$!
fi
wrk -t$THREADS -c$CONNS -d$DUR --latency -s bench/ingest.lua http://127.0.0.1:$RP/ relay | tee "$T/relay.txt" | grep -E 'Requests/sec|Latency|50%|99%|Non-2xx|Socket errors|p50_ms'
r1=$(cpu $RELAY); n1=$(cpu $NATSPID)
[ -n "${BENCH_THREADS_REPORT:-}" ] && for t in /proc/$RELAY/task/*; do echo "thread $(basename $t) $(cat $t/comm) ticks $(awk '{print $14+$15}' $t/stat) $(grep -h ctxt $t/status | tr -s "\t\n" "  ")"; done
hz=$(getconf CLK_TCK)
awk -v r=$((r1 - r0)) -v n=$((n1 - n0)) -v hz=$hz 'BEGIN { printf "CPU seconds during the run: relay %.1f, nats-server %.1f\n", r / hz, n / hz }'
if [ -n "${BENCH_PROFILE:-}" ]; then
	wait $PERF
	perf report -i "$T/perf.data" --tid $RELAY --no-children -g none --sort dso,symbol --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -40 > "${BENCH_PROFILE}"
	echo "profile written to $BENCH_PROFILE"
fi
rss=$(awk '/VmHWM/ {print $2, $3}' /proc/$RELAY/status)
echo "relay peak RSS (VmHWM): $rss"
stored=$(curl -s http://127.0.0.1:$RP/metrics | awk '/^treaty_relay_events_stored_total\{stream="WORK"\}/ {print $2}')
echo "events stored in WORK: $stored"
s=$(awk '/Requests\/sec/ {print $2}' "$T/sink.txt"); r=$(awk '/Requests\/sec/ {print $2}' "$T/relay.txt")
awk -v s="$s" -v r="$r" 'BEGIN { if (s > 0) printf "ratio relay/ceiling: %.2f\n", r / s }'

# Batches (SPEC 14): 100 events of 256 bytes per request, 16 connections,
# against the storage ceiling: nats.c's asynchronous JetStream publishes of
# the same messages (4,096 in flight, bench/jspub) into a fresh nats-server.
[ -n "${BENCH_NO_BATCH:-}" ] || {
	CP=$(port)
	nats-server -a 127.0.0.1 -p $CP -js -sd "$T/js-ceil" > "$T/nats-ceil.log" 2>&1 & CEILNATS=$!; PIDS+=($CEILNATS)
	up $CP || { echo "bench: the ceiling's nats-server did not start"; exit 1; }
	echo "## batches of ${BENCH_BATCH:-100} (wrk -t$THREADS -c16 -d$DUR) against the storage ceiling"
	"$O/bench/jspub" nats://127.0.0.1:$CP 200000 4096 | tee "$T/jspub.txt"
	kill $CEILNATS
	wrk -t$THREADS -c16 -d$DUR --latency -s bench/batch.lua http://127.0.0.1:$RP/ batch > "$T/batch.txt"
	grep -E 'events_per_s|Non-2xx|Socket errors' "$T/batch.txt"
	awk -v c="$(sed -n 's/.*msgs_per_s=\([0-9]*\).*/\1/p' "$T/jspub.txt")" \
	    '/events_per_s=/ { for (i = 1; i <= NF; i++) if ($i ~ /^events_per_s=/) { split($i, a, "="); e = a[2] } }
	    END { if (c > 0) printf "ratio batched events/ceiling: %.2f\n", e / c }' "$T/batch.txt"
}

# Ordered delivery (SPEC 18), bench/deliver.sh's phase o: 1,000 keys
# drained ordered beside unordered in the same run, one key, the wait for
# the key (BENCH_NO_ORDER=1 skips).
if [ -z "${BENCH_NO_ORDER:-}" ]; then
	echo "## ordered delivery: bench/deliver.sh phase o"
	BENCH_PHASES=o O=$O bench/deliver.sh | sed -n '/^## o\./,/^## summary/p; /^ordered,/p' |
	    grep -v '^## summary'
fi

# The same over TLS (SPEC 13): a second relay with a throwaway certificate,
# beside the first over plain HTTP; keep-alive, then a new connection per
# request (Connection: close), where each TLS request pays a handshake.
[ -n "${BENCH_NO_TLS:-}" ] && exit 0
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
    -subj /CN=localhost -keyout "$T/key.pem" -out "$T/cert.pem" 2>/dev/null ||
    { echo "bench: openssl could not make a certificate"; exit 1; }
TP=$(port)
NATS_URL=nats://127.0.0.1:$NP PORT=$TP TREATY_RELAY_LISTEN=127.0.0.1 \
    TREATY_RELAY_PRODUCERS='[{"name":"bench","tokenSha256":"'$SHA'","subjects":["evt.bench.>"]}]' \
    TREATY_RELAY_TLS_CERT="$T/cert.pem" TREATY_RELAY_TLS_KEY="$T/key.pem" \
    "$O/treaty-relay" > "$T/relay-tls.log" 2>&1 & TLSRELAY=$!; PIDS+=($TLSRELAY)
for _ in $(seq 100); do
	[ "$(curl -sk -o /dev/null -w '%{http_code}' https://127.0.0.1:$TP/healthz)" = 200 ] && break
	sleep 0.1
done
# run NAME PID URL [wrk args]: wrk, then requests/s, p99 and the relay's
# CPU microseconds per request.
run() {
	local name=$1 pid=$2 url=$3 c0 c1 n
	shift 3
	c0=$(cpu $pid)
	wrk -t$THREADS -c$CONNS -d$DUR --latency -s bench/ingest.lua "$@" "$url" "$name" > "$T/$name.txt"
	c1=$(cpu $pid)
	n=$(awk '/requests in/ {print $1}' "$T/$name.txt")
	awk -v name="$name" -v c=$((c1 - c0)) -v hz=$hz -v n="$n" '
	    /Requests\/sec/ { rps = $2 } / 99%/ { p99 = $2 } /Non-2xx/ { bad = $5 }
	    END { printf "%-28s %10s req/s  p99 %8s  relay CPU %6.1f us/request%s\n", name, rps, p99,
	        (n > 0 ? c / hz * 1e6 / n : 0), (bad != "" ? "  non-2xx " bad : "") }' "$T/$name.txt"
}
echo "## plain HTTP beside TLS (two relays, one nats-server)"
run plain-keepalive $RELAY http://127.0.0.1:$RP/
run tls-keepalive $TLSRELAY https://127.0.0.1:$TP/
run plain-new-connection $RELAY http://127.0.0.1:$RP/ -H 'Connection: close'
run tls-new-connection $TLSRELAY https://127.0.0.1:$TP/ -H 'Connection: close'
