#!/usr/bin/env bash
# make bench-pull: inbox throughput (issue 4).  A real nats-server
# (JetStream, file store) and the relay with one pull subscriber; bench/load
# stores BENCH_PULL_EVENTS events, then bench/pull fetches them with
# lease=true&max=BENCH_PULL_MAX and acknowledges each with DELETE (over
# BENCH_PULL_ACKCONNS connections per worker), by one worker, then (after
# storing as many again) by four at once.  Prints events/s fetched and
# acknowledged, and the CPU the relay and nats-server used.
#
# With BENCH_PULL_REPLAY=1, a last run: a replay (SPEC 15) of every event
# stored above, fetched and acknowledged again by four workers.
#
# Environment: BENCH_PULL_EVENTS [20000], BENCH_PULL_MAX [100],
# BENCH_PULL_ACKCONNS [8], BENCH_PULL_WORKERS ["1 4"], BENCH_PULL_REPLAY,
# BENCH_KEEP=1.
set -u
cd "$(dirname "$0")/.."
O=${O:-build}
EVENTS=${BENCH_PULL_EVENTS:-20000}
MAXN=${BENCH_PULL_MAX:-100}
ACKC=${BENCH_PULL_ACKCONNS:-8}
WORKERS=${BENCH_PULL_WORKERS:-1 4}
. bench/lib.sh
bench_init pull bench/load bench/pull

bench_nats
RP=$(port)
while [ $RP = $NP ]; do RP=$(port); done
export BENCH_TOKEN=bench-token-0123456789
export BENCH_INBOX_TOKEN=bench-inbox-token-0123456789
SHA=$(printf '%s' "$BENCH_TOKEN" | sha256sum | cut -c1-64)
ISHA=$(printf '%s' "$BENCH_INBOX_TOKEN" | sha256sum | cut -c1-64)
ADMIN=bench-admin-0123456789
NATS_URL=nats://127.0.0.1:$NP PORT=$RP TREATY_RELAY_LISTEN=127.0.0.1 \
    TREATY_RELAY_ADMIN_TOKEN_SHA256=$(printf '%s' "$ADMIN" | sha256sum | cut -c1-64) \
    TREATY_RELAY_PRODUCERS='[{"name":"bench","tokenSha256":"'$SHA'","subjects":["evt.bench.>"]}]' \
    TREATY_RELAY_SUBSCRIBERS='[{"name":"work","tokenSha256":"'$ISHA'","secret":"bench-secret-0123456789abcdef","filter":"evt.bench.>"}]' \
    "$T/treaty-relay" > "$T/relay.log" 2>&1 & RELAY=$!; PIDS+=($RELAY)
healthy $RP || { echo "bench: the relay did not become healthy"; exit 1; }

echo "# $(nproc) cores, $(uname -r), $(nats-server --version), $EVENTS events of 256 bytes per run, lease=true&max=$MAXN, $ACKC ack connections per worker"
T0=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
for w in $WORKERS; do
	"$O/bench/load" -p $RP -n $EVENTS -c 32 -s evt.bench.shop.order.created -i "w$w-" > "$T/load-$w.txt"
	echo "stored: $(grep -o 'accepted=[0-9]*' "$T/load-$w.txt")"
	r0=$(cpu $RELAY); n0=$(cpu $NATS)
	"$O/bench/pull" -p $RP -i work -n $EVENTS -w $w -m $MAXN -a $ACKC
	r1=$(cpu $RELAY); n1=$(cpu $NATS)
	awk -v r=$((r1 - r0)) -v n=$((n1 - n0)) -v hz=$HZ -v e=$EVENTS 'BEGIN {
	    printf "CPU seconds: relay %.2f, nats-server %.2f (relay %.0f us per event)\n",
	    r / hz, n / hz, r / hz / e * 1e6 }'
done
if [ -n "${BENCH_PULL_REPLAY:-}" ]; then
	curl -s -o "$T/replay.json" -X POST -H "Authorization: Bearer $ADMIN" \
	    "http://127.0.0.1:$RP/v1/admin/subscribers/work/replay?since=$T0"
	m=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["matched"])' "$T/replay.json")
	echo "replay: $(cat "$T/replay.json")"
	r0=$(cpu $RELAY); n0=$(cpu $NATS)
	"$O/bench/pull" -p $RP -i work -n $m -w 4 -m $MAXN -a $ACKC
	r1=$(cpu $RELAY); n1=$(cpu $NATS)
	awk -v r=$((r1 - r0)) -v n=$((n1 - n0)) -v hz=$HZ -v e=$m 'BEGIN {
	    printf "CPU seconds: relay %.2f, nats-server %.2f (relay %.0f us per event)\n",
	    r / hz, n / hz, r / hz / e * 1e6 }'
fi
echo "relay peak RSS (VmHWM): $(awk '/VmHWM/ {print $2, $3}' /proc/$RELAY/status)"
echo "relay log warnings: $(grep -c 'level=warn' "$T/relay.log")"
