#!/usr/bin/env bash
# make bench-work: treaty work --inbox end to end (issue 5).  A real
# nats-server (file store) and the relay with one pull subscriber;
# bench/load stores BENCH_WORK_EVENTS events of 256 bytes, then
# `treaty work --inbox FILE` takes, verifies, records (fsync) and
# acknowledges them all: once with one fsync per record, once with
# --batch-fsync (one per poll's answer).  The inbox file is on the disk
# under $O (not a tmpfs), so fsync is real.  Prints records/s, the
# worker's CPU per record and peak RSS, then bench/verify's cost of one
# signature check.
#
# Environment: BENCH_WORK_EVENTS [10000], BENCH_WORK_MAX [100], BENCH_KEEP=1,
# BENCH_WORK_WRAP (a command put before the worker, e.g. "perf record -g
# -o FILE --"; its CPU figures are then the wrapper's).
set -u
cd "$(dirname "$0")/.."
O=${O:-build}
EVENTS=${BENCH_WORK_EVENTS:-10000}
MAXN=${BENCH_WORK_MAX:-100}
. bench/lib.sh
bench_init work bench/load bench/verify treaty
D=$(mktemp -d "$PWD/$O/bench-work.XXXXXX")
trap 'bench_cleanup; rm -rf "$D"' EXIT

bench_nats
RP=$(port)
while [ $RP = $NP ]; do RP=$(port); done
export BENCH_TOKEN=bench-token-0123456789
IT=bench-inbox-token-0123456789
SECRET=bench-secret-0123456789abcdef
SHA=$(printf '%s' "$BENCH_TOKEN" | sha256sum | cut -c1-64)
ISHA=$(printf '%s' "$IT" | sha256sum | cut -c1-64)
NATS_URL=nats://127.0.0.1:$NP PORT=$RP TREATY_RELAY_LISTEN=127.0.0.1 \
    TREATY_RELAY_PRODUCERS='[{"name":"bench","tokenSha256":"'$SHA'","subjects":["evt.bench.>"]}]' \
    TREATY_RELAY_SUBSCRIBERS='[{"name":"work","tokenSha256":"'$ISHA'","secret":"'$SECRET'","filter":"evt.bench.>"}]' \
    "$T/treaty-relay" > "$T/relay.log" 2>&1 & RELAY=$!; PIDS+=($RELAY)
healthy $RP || { echo "bench: the relay did not become healthy"; exit 1; }
printf '%s\n' "$IT" > "$T/token"
printf '%s\n' "$SECRET" > "$T/secret"

echo "# $(nproc) cores, $(uname -r), $(nats-server --version), $EVENTS events of 256 bytes per run, max=$MAXN per poll, inbox file on $(df -T "$D" | awk 'NR==2 {print $2}')"
for mode in record batch; do
	"$O/bench/load" -p $RP -n $EVENTS -c 32 -s evt.bench.shop.order.created -i "$mode-" > "$T/load-$mode.txt"
	echo "stored: $(grep -o 'accepted=[0-9]*' "$T/load-$mode.txt")"
	F=$D/inbox-$mode.jsonl
	args=()
	[ $mode = batch ] && args=(--batch-fsync)
	r0=$(cpu $RELAY)
	t0=$(date +%s%N)
	${BENCH_WORK_WRAP:-} "$T/treaty" work --url http://127.0.0.1:$RP --token-file "$T/token" --secret-file "$T/secret" \
	    --inbox "$F" --max $MAXN --wait 1000 "${args[@]}" work 2> "$T/work-$mode.log" &
	W=$!
	while [ "$( { wc -l < "$F"; } 2>/dev/null || echo 0)" -lt $EVENTS ]; do
		kill -0 $W 2>/dev/null || { echo "bench: the worker died"; tail "$T/work-$mode.log"; exit 1; }
		sleep 0.05
	done
	t1=$(date +%s%N)
	w1=$(cpu $W); r1=$(cpu $RELAY)
	rss=$(awk '/VmHWM/ {print $2, $3}' /proc/$W/status)
	kill -TERM $W; wait $W
	acked=$(grep -o 'acknowledged=[0-9]*' "$T/work-$mode.log" | cut -d= -f2)
	awk -v ns=$((t1 - t0)) -v e=$EVENTS -v w=$w1 -v r=$((r1 - r0)) -v hz=$HZ -v m=$mode -v a="$acked" -v rss="$rss" 'BEGIN {
	    printf "%s: %d records in %.2f s = %.0f records/s (fsync per %s); worker CPU %.0f us per record, relay %.0f us; worker peak RSS %s; acknowledged %s\n",
	    m, e, ns / 1e9, e / (ns / 1e9), m == "batch" ? "answer" : "record", w / hz / e * 1e6, r / hz / e * 1e6, rss, a }'
done
"$O/bench/verify" -n 100000
echo "worker log warnings: $(cat "$T"/work-*.log | grep -c 'level=warn')"
