#!/usr/bin/env bash
# bench/jslat.sh [RATE] [SECONDS] [ROUNDS]: publish-to-receipt through
# nats-server alone (bench/jslat: no relay, no HTTP), push then pull,
# ROUNDS times, each on a fresh nats-server (file store); the floor under
# the relay's publish-to-receipt in docs/BENCHMARKS.md.
cd "$(dirname "$0")/.."
O=${O:-build}
RATE=${1:-2000} SECS=${2:-15} ROUNDS=${3:-2}
T=$(mktemp -d /tmp/jslat.XXXXXX)
N=
trap '[ -n "$N" ] && kill $N 2>/dev/null; wait 2>/dev/null; rm -rf $T' EXIT
for r in $(seq "$ROUNDS"); do
	for mode in push pull; do
		rm -rf "$T/js"
		NP=$((20000 + RANDOM % 10000))
		nats-server -js -sd "$T/js" -a 127.0.0.1 -p $NP > "$T/nats.log" 2>&1 & N=$!
		for _ in $(seq 100); do grep -q "Server is ready" "$T/nats.log" && break; sleep 0.1; done
		"$O/bench/jslat" nats://127.0.0.1:$NP $mode "$RATE" "$SECS"
		kill $N; wait $N 2>/dev/null; N=
	done
done
