#!/usr/bin/env bash
# A relay for the shared benchmarks that also says what it cost: passed to
# them as the relay binary, it runs RELAY_BIN (default build/treaty-relay)
# and, when stopped with SIGTERM, writes its CPU (user + system, in clock
# ticks) to OUT.ticks and its /metrics to OUT.metrics before passing the
# signal on.  For example:
#
#   RELAY_BIN=build/treaty-relay OUT=/tmp/b ../shared/bench/batch.sh \
#       bench/cpu-relay.sh 100
#   awk '/^treaty_relay_events_stored_total/ {s += $2} END {print s}' \
#       /tmp/b.metrics
"${RELAY_BIN:-build/treaty-relay}" "$@" &
child=$!
out=${OUT:?OUT names the files to write}
stop() {
	awk '{ print $14 + $15 }' "/proc/$child/stat" > "$out.ticks"
	curl -s -m 0.3 "http://127.0.0.1:$PORT/metrics" > "$out.metrics"
	kill -TERM "$child"
}
trap stop TERM
wait "$child"
wait "$child"
