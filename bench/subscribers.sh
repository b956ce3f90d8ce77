#!/usr/bin/env bash
# make bench-subscribers: 1,000 subscribers made through the API (SPEC 16,
# issue 31), on loopback against a real nats-server:
#   create   1,000 PUTs, one at a time on one connection: how long, and
#            the slowest answer;
#   converge a second relay, up before the PUTs: from A's "subscriber
#            created" of the last one to B's "subscriber added" of it (both
#            relays' own log stamps);
#   memory   A's RSS before and after (bound: 10 MiB + 20 KiB a subscriber);
#   restart  A stopped and started again: from its first line to "ready";
#   ingest   wrk POSTs (64 connections, 10 s) with one subscriber, then with
#            the 1,000 (one matching): requests a second, and the ratio;
#   storm    10,000 PUTs to 100 names from 16 connections: how long, the
#            relay's RSS, and what the bucket keeps (history 5 a key).
# Figures: docs/BENCHMARKS.md.
set -u
cd "$(dirname "$0")/.."
O=${O:-build}
. bench/lib.sh
bench_init subscribers bench/sink
command -v wrk >/dev/null || { echo "bench: wrk is not installed (apt-get install wrk)"; exit 1; }
N=${BENCH_SUBSCRIBERS:-1000}
DUR=${BENCH_DURATION:-10s}
bench_nats
SP=$(port)
"$O/bench/sink" $SP 200 & PIDS+=($!)
up $SP || { echo "bench: the sink did not start"; exit 1; }
export BENCH_TOKEN=bench-token-0123456789
AT=bench-admin-0123456789
openssl rand -hex 32 > "$T/keys"
chmod 600 "$T/keys"
export NATS_URL=nats://127.0.0.1:$NP TREATY_RELAY_LISTEN=127.0.0.1 \
    TREATY_RELAY_SECRET_KEY_FILE=$T/keys \
    TREATY_RELAY_ADMIN_TOKEN_SHA256=$(printf '%s' "$AT" | sha256sum | cut -c1-64) \
    TREATY_RELAY_PRODUCERS='[{"name":"bench","tokenSha256":"'$(printf '%s' "$BENCH_TOKEN" | sha256sum | cut -c1-64)'","subjects":["evt.bench.>"]}]'

# relay NAME PORT: a relay logging to $T/NAME.log; its pid in $!.
relay() {
	PORT=$2 "$T/treaty-relay" > "$T/$1.log" 2>&1 &
	PIDS+=($!)
}
AP=$(port); BP=$(port)
relay a $AP; A=$!
relay b $BP; B=$!
healthy $AP && healthy $BP || { echo "bench: the relays did not start"; tail "$T/a.log"; exit 1; }
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
# stamp ERE FILE: the time (ms) of the first line of FILE matching ERE.
stamp() {
	grep -m1 -E -- "$1" "$2" | sed -n 's/^time=\([^ ]*\).*/\1/p' |
	    { read -r t && date -d "$t" +%s%3N; }
}
# puts FIRST LAST: PUT subscribers s<FIRST>..s<LAST> on A over one
# connection; s1 matches the benchmark's events, the others not; prints
# "seconds slowest_ms".
puts() {
	python3 - "$AP" "$AT" "$SP" "$1" "$2" <<'PY'
import http.client, json, sys, time
port, at, sink, first, last = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
c = http.client.HTTPConnection("127.0.0.1", int(port), timeout=30)
t0 = time.monotonic(); worst = 0
for i in range(first, last + 1):
    f = "evt.bench.>" if i == 1 else "evt.other%d.>" % i
    body = json.dumps({"url": "http://127.0.0.1:%s/s%d" % (sink, i), "filter": f})
    t = time.monotonic()
    c.request("PUT", "/v1/admin/subscribers/s%d" % i, body,
              {"Authorization": "Bearer " + at, "Content-Type": "application/json"})
    r = c.getresponse(); r.read()
    if r.status != 201:
        sys.exit("PUT s%d: %d" % (i, r.status))
    worst = max(worst, time.monotonic() - t)
print("%.1f %.0f" % (time.monotonic() - t0, worst * 1000))
PY
}
# ingest LABEL: wrk against A; prints "requests/s relay_cpu_s nats_cpu_s".
# With BENCH_PROFILE=FILE, perf's profile of the relay during the second
# run goes to FILE.
ingest() {
	local r0 n0 perf=
	r0=$(cpu $A); n0=$(cpu $NATS)
	if [ -n "${BENCH_PROFILE:-}" ] && [ "$1" = many ]; then
		perf record -e cpu-clock -g -o "$T/perf.data" -p $A -- sleep 8 >/dev/null 2>&1 &
		perf=$!
	fi
	wrk -t2 -c64 -d$DUR -s bench/ingest.lua http://127.0.0.1:$AP/ "$1" > "$T/wrk-$1.txt"
	awk -v r=$(( $(cpu $A) - r0 )) -v n=$(( $(cpu $NATS) - n0 )) -v hz=$HZ \
	    '/Requests\/sec/ { printf "%s %.1f %.1f\n", $2, r / hz, n / hz }' "$T/wrk-$1.txt"
	if [ -n "$perf" ]; then
		wait $perf
		perf report -i "$T/perf.data" --no-children --sort symbol --stdio 2>/dev/null |
		    grep -v '^#' | grep -v '^$' | grep '%' | head -40 > "$BENCH_PROFILE"
	fi
}

echo "# $(nproc) cores, $(uname -r), nats-server $(nats-server --version | awk '{print $2}'), $N subscribers"
puts 1 1 > /dev/null || exit 1
rss0=$(rss $A)
r0=$(cpu $A); n0=$(cpu $NATS)
sleep 10
awk -v r=$(( $(cpu $A) - r0 )) -v n=$(( $(cpu $NATS) - n0 )) -v hz=$HZ \
    'BEGIN { printf "idle, 10 s with 1 subscriber: CPU s relay %.2f, nats-server %.2f\n", r / hz, n / hz }'
read -r r1 rc1 nc1 < <(ingest one)
echo "ingest, 1 subscriber: $r1 requests/s (CPU s: relay $rc1, nats-server $nc1)"
read -r secs worst < <(puts 2 "$N") || exit 1
echo "create: $((N - 1)) PUTs in $secs s (slowest $worst ms)"
for _ in $(seq 300); do grep -q "subscriber added\" sub=s$N\( \|$\)" "$T/b.log" && break; sleep 0.1; done
a=$(stamp "subscriber created\" subscriber=s$N " "$T/a.log")
b=$(stamp "subscriber added\" sub=s$N( |\$)" "$T/b.log")
echo "converge: B had s$N $((b - a)) ms after A stored it"
r0=$(cpu $A); n0=$(cpu $NATS)
sleep 10
awk -v r=$(( $(cpu $A) - r0 )) -v n=$(( $(cpu $NATS) - n0 )) -v hz=$HZ \
    'BEGIN { printf "idle, 10 s with %s subscribers: CPU s relay %.2f, nats-server %.2f\n", '"$N"', r / hz, n / hz }'
rss1=$(rss $A)
echo "memory: A's RSS $rss0 KiB with 1 subscriber, $rss1 KiB with $N: $(( (rss1 - rss0) / (N - 1) )) KiB a subscriber (bound: 10240 + 20 x $N = $((10240 + 20 * N)) KiB)"
read -r rN rcN ncN < <(ingest many)
echo "ingest, $N subscribers (one matching): $rN requests/s (CPU s: relay $rcN, nats-server $ncN)"
awk -v a="$r1" -v b="$rN" 'BEGIN { printf "ingest ratio: %.2f (bound: 0.90)\n", b / a }'
kill -TERM $A; wait $A 2>/dev/null
relay a2 $AP; A=$!
healthy $AP || { echo "bench: A did not start again"; exit 1; }
s=$(stamp 'msg="descriptor limit"' "$T/a2.log"); r=$(stamp 'msg=ready' "$T/a2.log")
echo "restart: ready $((r - s)) ms after its first line ($(grep -o 'entries=[0-9]*' "$T/a2.log" | head -1))"
echo "restarted RSS: $(rss $A) KiB"

rs0=$(rss $A)
python3 - "$AP" "$AT" "$SP" <<'PY'
import http.client, json, sys, threading, time
port, at, sink = sys.argv[1], sys.argv[2], sys.argv[3]
bad = []
def worker(k):
    c = http.client.HTTPConnection("127.0.0.1", int(port), timeout=60)
    for i in range(625):
        name = "storm%d" % ((k * 625 + i) % 100)
        body = json.dumps({"url": "http://127.0.0.1:%s/storm" % sink,
                           "filter": "evt.storm.>", "maxDeliver": 1 + i % 50,
                           "secret": "storm-secret-0123456789"})
        c.request("PUT", "/v1/admin/subscribers/" + name, body,
                  {"Authorization": "Bearer " + at})
        r = c.getresponse(); r.read()
        if r.status not in (200, 201):
            bad.append(r.status)
t0 = time.monotonic()
ts = [threading.Thread(target=worker, args=(k,)) for k in range(16)]
for t in ts: t.start()
for t in ts: t.join()
print("storm: 10000 PUTs to 100 names from 16 connections in %.1f s (%d refused: %s)"
      % (time.monotonic() - t0, len(bad), sorted(set(bad))))
PY
echo "storm: A's RSS $rs0 KiB before, $(rss $A) KiB after"
python3 test/live/jsapi.py $NP raw '$JS.API.STREAM.INFO.KV_TREATY_SUBSCRIBERS' '{"subjects_filter":"$KV.TREATY_SUBSCRIBERS.>"}' |
    python3 -c 'import json,sys; d=json.load(sys.stdin)["state"]; s={k: v for k, v in (d.get("subjects") or {}).items() if ".storm" in k}; print("storm: the bucket keeps %d messages in all, at most %d of a storm name (%d names)" % (d["messages"], max(s.values() or [0]), len(s)))'
