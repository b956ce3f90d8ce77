#!/usr/bin/env bash
# make bench-deliver: end-to-end push delivery, producer -> relay ->
# JetStream -> relay -> bench/sink, with a real nats-server (JetStream, file
# store).  bench/load publishes (each body carries its send time), bench/sink
# answers 204 and measures publish-to-receipt.  Four phases, each on a fresh
# nats-server store and relay, so that no phase sees another's events:
#
#   a  backlog drain: BENCH_EVENTS published with no subscriber configured,
#      then the relay restarted with one: deliveries/s draining the backlog
#   b  full speed: load as fast as it goes while the sink counts
#   c  fixed rate: BENCH_RATE events/s; publish-to-receipt p50/p99
#   d  memory: the sink holds every request open; the relay's VmHWM/VmRSS
#      once BENCH_HOLD deliveries are in flight
#   e  replay (SPEC 15): BENCH_EVENTS stored and delivered, then new events
#      at BENCH_REPLAY_RATE/s for BENCH_REPLAY_SECONDS, once alone and once
#      while a replay hands all BENCH_EVENTS to the same subscriber again:
#      the replay's deliveries/s, and the new events' publish-to-receipt
#      beside the same without a replay (not in the default phases)
#   o  ordered delivery (SPEC 18): BENCH_EVENTS events over BENCH_KEYS
#      partition keys drained by an unordered subscriber, then by an
#      ordered one (each its own store, the same backlog): deliveries/s of
#      both and their ratio (target >= 0.5), the ordered one's p99 wait for
#      its key (treaty_relay_ordered_wait_seconds); then BENCH_ONE_KEY
#      events of a single key, ordered: deliveries/s and ms per event
#      beside the POST's own p50, one round trip each (not in the default
#      phases)
#   i  instructions per delivery: backlogs of 1,000 and 9,000 events drained
#      by a relay under callgrind; the difference of its instruction counts
#      over 8,000 (start-up and the idle timers cancel out).  Like icount.sh
#      for ingest, a figure that does not move with the machine's load (not
#      in the default phases; needs valgrind)
#
# Environment (defaults in brackets): BENCH_EVENTS [50000], BENCH_RATE
# [2000], BENCH_MAX_IN_FLIGHT [64] (the subscriber's maxInFlight in a-c:
# the relay's default; the sink's conns= shows how many connections the
# relay opened),
# BENCH_HOLD [1000] (maxInFlight in d), BENCH_HOLD_EVENTS [1500],
# BENCH_CONNECTIONS [32] (load's connections), BENCH_PHASES ["a b c d"],
# BENCH_TIMEOUT [180] (seconds a sink may wait for its events),
# BENCH_SINK_BACKLOG [4096] (the sink's listen backlog; 128 is libevent's
# default, which the relay's new connections overflow: see sink.c),
# BENCH_PROFILE=prefix (perf profiles of the relay in a, b and c, written to
# prefix.a, prefix.b and prefix.c, if perf is installed; also each relay
# thread's CPU),
# BENCH_REPLAY_RATE [1000], BENCH_REPLAY_SECONDS [20], BENCH_KEYS [1000],
# BENCH_ONE_KEY [2000],
# BENCH_KEEP=1 (keep the temporary folder with the logs).
set -u
cd "$(dirname "$0")/.."
O=${O:-build}
EVENTS=${BENCH_EVENTS:-50000}
RATE=${BENCH_RATE:-2000}
MIF=${BENCH_MAX_IN_FLIGHT:-64}
HOLD=${BENCH_HOLD:-1000}
HOLD_EVENTS=${BENCH_HOLD_EVENTS:-1500}
CONNS=${BENCH_CONNECTIONS:-32}
PHASES=${BENCH_PHASES:-a b c d}
TIMEOUT=${BENCH_TIMEOUT:-180}
. bench/lib.sh
bench_init deliver bench/sink bench/load
# 1,000 held deliveries are 1,000 sockets in the relay and in the sink.
ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)"

cpu_report() {	# $1: what, $2 $3: relay ticks before and after, $4 $5: nats-server's
	awk -v w="$1" -v r=$(($3 - $2)) -v n=$(($5 - $4)) -v hz=$HZ -v e=$EVENTS 'BEGIN {
	    printf "CPU seconds, %s: relay %.2f, nats-server %.2f (relay %.0f us per event)\n",
	    w, r / hz, n / hz, r / hz / e * 1e6 }'
}
kv() { sed -n "s/.*[ :]$1=\([^ ]*\).*/\1/p" "$2" | tail -1; }		# key=value from a stats line
# SYNs dropped on full listen queues, machine-wide: each costs a 1 s retransmit.
overflows() { awk '/^TcpExt:/ { if (!h) { for (i = 1; i <= NF; i++) n[$i] = i; h = 1 } else print $n["ListenOverflows"] }' /proc/net/netstat; }

# Stop one process we started: TERM, then KILL if it will not go.
stop() {
	local p=$1
	kill "$p" 2>/dev/null || return 0
	for _ in $(seq 150); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	return 0
}

export BENCH_TOKEN=bench-token-0123456789
SHA=$(printf '%s' "$BENCH_TOKEN" | sha256sum | cut -c1-64)
ADMIN=bench-admin-0123456789
ADMIN_SHA=$(printf '%s' "$ADMIN" | sha256sum | cut -c1-64)
PRODUCERS='[{"name":"bench","tokenSha256":"'$SHA'","subjects":["evt.bench.>"]}]'
SUBJECT=evt.bench.shop.order.created

NATS=; RELAY=; SINK=
NP=$(port); RP=$(port); SP=
while [ $RP = $NP ]; do RP=$(port); done

start_nats() {	# $1: phase, for a store and log of its own
	cat > "$T/nats-$1.conf" <<CONF
listen: 127.0.0.1:$NP
max_payload: 2MB
jetstream { store_dir: "$T/js-$1" }
CONF
	nats-server -c "$T/nats-$1.conf" > "$T/nats-$1.log" 2>&1 & NATS=$!; PIDS+=($NATS)
	up $NP || { echo "bench: nats-server did not start"; cat "$T/nats-$1.log"; exit 1; }
}

WRAP=		# a command the relay runs under (phase i: valgrind)
start_relay() {	# $1: log name, $2: subscribers JSON
	NATS_URL=nats://127.0.0.1:$NP PORT=$RP TREATY_RELAY_LISTEN=127.0.0.1 \
	    TREATY_RELAY_PRODUCERS="$PRODUCERS" TREATY_RELAY_SUBSCRIBERS="$2" \
	    TREATY_RELAY_GRACE_SECONDS=1 \
	    TREATY_RELAY_ADMIN_TOKEN_SHA256=$ADMIN_SHA \
	    $WRAP "$T/treaty-relay" > "$T/relay-$1.log" 2>&1 & RELAY=$!; PIDS+=($RELAY)
	for _ in $(seq 600); do
		[ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$RP/healthz)" = 200 ] && return 0
		kill -0 $RELAY 2>/dev/null || break
		sleep 0.1
	done
	echo "bench: the relay did not become healthy"; cat "$T/relay-$1.log"; exit 1
}

subscriber() {	# $1: maxInFlight, $2: ordered (true or false, default false)
	echo '[{"name":"sink","url":"http://127.0.0.1:'$SP'/","secret":"bench-secret-0123456789abcdef","filter":"evt.bench.>","maxDeliver":10,"maxInFlight":'$1',"ordered":'${2:-false}'}]'
}

# A sink counting $1 distinct events (or holding, with -H), bounded by TIMEOUT.
start_sink() {	# $1: phase, then sink's options
	local ph=$1; shift
	timeout -s TERM "$TIMEOUT" "$O/bench/sink" -b "${BENCH_SINK_BACKLOG:-4096}" "$@" $SP 204 > "$T/sink-$ph.txt" 2>&1 & SINK=$!; PIDS+=($SINK)
	up $SP || { echo "bench: the sink did not start"; exit 1; }
}

metric() {	# the value of one /metrics line, by its name and labels
	curl -s http://127.0.0.1:$RP/metrics | awk -v m="$1" '$1 == m { print $2 }'
}

# What the relay says about the phase: outcomes, redeliveries, log lines.
relay_report() {	# $1: log name
	local d r x w e
	d=$(metric 'treaty_relay_deliveries_total{subscriber="sink",outcome="delivered"}')
	r=$(metric 'treaty_relay_deliveries_total{subscriber="sink",outcome="retry"}')
	x=$(metric 'treaty_relay_redeliveries_total{subscriber="sink"}')
	w=$(grep -c 'level=warn' "$T/relay-$1.log")
	e=$(grep -c 'level=error' "$T/relay-$1.log")
	echo "relay: delivered=${d:-?} retry=${r:-?} redeliveries=${x:-?} log_warn=$w log_error=$e" \
	    "listen_overflows=$(($(overflows) - OV0))" \
	    "time_wait_to_sink=$(ss -Htan state time-wait "( dport = :$SP )" 2>/dev/null | wc -l)"
	# The relay's own view of the POSTs: how many answered within 5/10/25 ms.
	curl -s http://127.0.0.1:$RP/metrics | awk '
	    /^treaty_relay_delivery_duration_seconds_bucket\{subscriber="sink"/ {
		split($1, a, "le=\""); le = a[2]; sub(/".*/, "", le); n[le] = $2 }
	    END { if (n["+Inf"] > 0) printf "relay POST to answer: %.2f%% <= 5 ms, %.2f%% <= 10 ms, %.2f%% <= 25 ms\n",
		100 * n["0.005"] / n["+Inf"], 100 * n["0.01"] / n["+Inf"], 100 * n["0.025"] / n["+Inf"] }'
	[ "$w$e" != 00 ] && grep -E 'level=(warn|error)' "$T/relay-$1.log" |
	    sed 's/ id=[^ ]*//' | sort | uniq -c | sort -rn | head -5 | sed 's/^/  /'
	return 0
}

# perf on the relay, when BENCH_PROFILE asks for it and perf is there.
PERF=
perf_start() {
	[ -n "${BENCH_PROFILE:-}" ] && command -v perf >/dev/null || return 0
	perf record -e cpu-clock -g -o "$T/perf-$1.data" -p $RELAY > /dev/null 2>&1 & PERF=$!; PIDS+=($PERF)
}
perf_stop() {	# $1: phase
	[ -n "$PERF" ] || return 0
	for t in /proc/$RELAY/task/*; do
		echo "relay thread $(cat $t/comm): $(awk '{print $14 + $15}' $t/stat) ticks," \
		    "$(awk '/ctxt/ {printf "%s %s ", $1, $2}' $t/status)"
	done
	kill -INT $PERF; wait $PERF; PERF=
	perf report -i "$T/perf-$1.data" --no-children --sort dso,symbol --stdio -g none 2>/dev/null |
	    grep -v '^#' | grep -v '^$' | head -60 > "$BENCH_PROFILE.$1"
	echo "profile of the relay written to $BENCH_PROFILE.$1"
}

# Each phase: its own nats-server store, and its own sink port, so that
# TIME_WAIT counts and stray connections are the phase's own.
begin_phase() {
	OV0=$(overflows)
	SP=$(port)
	start_nats $1
}

end_phase() {
	stop $RELAY; stop $SINK; stop $NATS
}

echo "# $(nproc) cores, $(uname -r), $(nats-server --version), $EVENTS events, maxInFlight $MIF," \
    "load -c$CONNS, 256-byte body, sink answers 204 (listen backlog ${BENCH_SINK_BACKLOG:-4096})"

phase_a() {
	local r0 n0 r1 n1
	echo "## a. backlog drain: $EVENTS events stored first, then delivered"
	begin_phase a
	start_relay a0 '[]'
	"$O/bench/load" -p $RP -n $EVENTS -c $CONNS -s $SUBJECT -i a | tee "$T/load-a.txt"
	stop $RELAY
	start_sink a -n $EVENTS
	# From the relay's start: deliveries may begin before it reports healthy.
	r0=0; n0=$(cpu $NATS)
	start_relay a "$(subscriber $MIF)"
	perf_start a
	wait $SINK
	r1=$(cpu $RELAY); n1=$(cpu $NATS)
	perf_stop a
	cat "$T/sink-a.txt"
	cpu_report "relay start to last receipt" $r0 $r1 $n0 $n1
	A_RATE=$(kv deliveries_per_s "$T/sink-a.txt")
	relay_report a
	end_phase
}

phase_b() {
	local r0 n0 r1 n1 l1
	echo "## b. full speed: $EVENTS events, load -c$CONNS as fast as it goes"
	begin_phase b
	start_sink b -n $EVENTS
	start_relay b "$(subscriber $MIF)"
	r0=$(cpu $RELAY); n0=$(cpu $NATS)
	perf_start b
	"$O/bench/load" -p $RP -n $EVENTS -c $CONNS -s $SUBJECT -i b > "$T/load-b.txt" & l1=$!
	wait $SINK
	r1=$(cpu $RELAY); n1=$(cpu $NATS)
	wait $l1
	cat "$T/load-b.txt" "$T/sink-b.txt"
	cpu_report "load start to last receipt" $r0 $r1 $n0 $n1
	B_RATE=$(kv deliveries_per_s "$T/sink-b.txt")
	B_P50=$(kv p50_ms "$T/sink-b.txt"); B_P99=$(kv p99_ms "$T/sink-b.txt")
	relay_report b
	perf_stop b
	end_phase
}

phase_c() {
	local r0 n0 r1 n1
	echo "## c. fixed rate: $EVENTS events at $RATE/s"
	begin_phase c
	start_sink c -n $EVENTS
	start_relay c "$(subscriber $MIF)"
	r0=$(cpu $RELAY); n0=$(cpu $NATS)
	perf_start c
	"$O/bench/load" -p $RP -n $EVENTS -r $RATE -c $CONNS -s $SUBJECT -i c | tee "$T/load-c.txt"
	wait $SINK
	r1=$(cpu $RELAY); n1=$(cpu $NATS)
	perf_stop c
	cat "$T/sink-c.txt"
	cpu_report "load start to last receipt" $r0 $r1 $n0 $n1
	C_P50=$(kv p50_ms "$T/sink-c.txt"); C_P99=$(kv p99_ms "$T/sink-c.txt")
	relay_report c
	end_phase
}

phase_d() {
	local f last=-1 same=0 rss0
	echo "## d. memory: sink holds every request, maxInFlight $HOLD, $HOLD_EVENTS events"
	begin_phase d
	start_sink d -H
	start_relay d "$(subscriber $HOLD)"
	rss0=$(awk '/VmRSS/ {print $2}' /proc/$RELAY/status)
	"$O/bench/load" -p $RP -n $HOLD_EVENTS -c $CONNS -s $SUBJECT -i d | tee "$T/load-d.txt"
	# Until HOLD are in flight, or the figure stops growing for 3 s (30 s
	# at most: the relay's own delivery deadline is 45 s).
	for _ in $(seq 300); do
		f=$(metric 'treaty_relay_deliveries_in_flight{subscriber="sink"}')
		f=${f:-0}
		[ "$f" -ge "$HOLD" ] && break
		if [ "$f" = "$last" ]; then same=$((same + 1)); [ $same -ge 30 ] && break; else same=0; fi
		last=$f
		sleep 0.1
	done
	D_INFLIGHT=$f
	D_HWM=$(awk '/VmHWM/ {print $2}' /proc/$RELAY/status)
	D_RSS=$(awk '/VmRSS/ {print $2}' /proc/$RELAY/status)
	echo "relay: in_flight=$f VmRSS_before_kB=$rss0 VmHWM_kB=$D_HWM VmRSS_kB=$D_RSS" \
	    "fds=$(ls /proc/$RELAY/fd | wc -l) threads=$(ls /proc/$RELAY/task | wc -l)"
	relay_report d
	kill $SINK; wait $SINK
	cat "$T/sink-d.txt"
	end_phase
}

phase_e() {
	local rate=${BENCH_REPLAY_RATE:-1000} secs=${BENCH_REPLAY_SECONDS:-20}
	local n t0 id st r0 r1 n0 n1
	n=$((rate * secs))
	echo "## e. replay: $EVENTS events stored and delivered; then $n new events at $rate/s," \
	    "alone, and during a replay of the $EVENTS to the same subscriber"
	begin_phase e
	start_sink e1 -n $n -p new1
	start_relay e "$(subscriber $MIF)"
	# The new events alone.
	"$O/bench/load" -p $RP -n $n -r $rate -c 4 -s $SUBJECT -i new1 > "$T/load-e1.txt"
	wait $SINK
	echo "without a replay: $(sed 's/.*\(p50_ms=[^ ]*\).*\(p99_ms=[^ ]*\).*\(max_ms=[^ ]*\).*/\1 \2 \3/' "$T/sink-e1.txt")"
	E_P99_0=$(kv p99_ms "$T/sink-e1.txt")
	# The events to replay, delivered once (the sink reuses the port).
	t0=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
	start_sink e0 -n $EVENTS
	"$O/bench/load" -p $RP -n $EVENTS -c $CONNS -s $SUBJECT -i old > "$T/load-e0.txt"
	wait $SINK
	echo "stored and delivered: $(kv distinct "$T/sink-e0.txt") events"
	# The same during a replay of everything since t0.
	start_sink e2 -n $n -p new2
	r0=$(cpu $RELAY); n0=$(cpu $NATS)
	st=$(curl -s -o "$T/replay.json" -w '%{http_code}' -X POST -H "Authorization: Bearer $ADMIN" \
	    "http://127.0.0.1:$RP/v1/admin/subscribers/sink/replay?since=$t0")
	id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["replay"])' "$T/replay.json" 2>/dev/null)
	echo "replay started: $st $(cat "$T/replay.json")"
	"$O/bench/load" -p $RP -n $n -r $rate -c 4 -s $SUBJECT -i new2 > "$T/load-e2.txt"
	wait $SINK
	r1=$(cpu $RELAY); n1=$(cpu $NATS)
	echo "during the replay: $(sed 's/.*\(p50_ms=[^ ]*\).*\(p99_ms=[^ ]*\).*\(max_ms=[^ ]*\).*\(other=.*\)/\1 \2 \3 \4/' "$T/sink-e2.txt")"
	E_P99_1=$(kv p99_ms "$T/sink-e2.txt")
	E_RATE=$(kv other_per_s "$T/sink-e2.txt"); E_N=$(kv other "$T/sink-e2.txt")
	awk -v r=$((r1 - r0)) -v nn=$((n1 - n0)) -v hz=$HZ 'BEGIN {
	    printf "CPU seconds during the replay phase: relay %.2f, nats-server %.2f\n", r / hz, nn / hz }'
	for _ in $(seq 100); do
		curl -s -o "$T/report.json" -H "Authorization: Bearer $ADMIN" "http://127.0.0.1:$RP/v1/admin/replays/$id"
		grep -q '"state":"done"' "$T/report.json" && break
		sleep 0.2
	done
	echo "replay report: $(cat "$T/report.json")"
	relay_report e
	end_phase
}

# One drain of $1 events under callgrind: the relay's instruction count.
drain_count() {
	local n=$1
	begin_phase i$n
	start_relay i$n-0 '[]'
	"$O/bench/load" -p $RP -n $n -c $CONNS -s $SUBJECT -i i$n > /dev/null
	stop $RELAY
	start_sink i$n -n $n
	WRAP="valgrind --tool=callgrind --callgrind-out-file=$T/cg-$n.out"
	start_relay i$n "$(subscriber $MIF)"
	WRAP=
	wait $SINK
	stop $RELAY
	end_phase
	awk '/^summary:/ { s += $2 } END { print s }' "$T"/cg-$n.out*
}

phase_i() {
	local a b
	echo "## i. instructions per delivery (callgrind, drains of 1,000 and 9,000)"
	command -v valgrind > /dev/null || { echo "bench: phase i needs valgrind"; return 0; }
	a=$(drain_count 1000); b=$(drain_count 9000)
	I_COUNT=$(( (b - a) / 8000 ))
	echo "relay instructions: $a for 1,000, $b for 9,000: $I_COUNT per delivery"
}

A_RATE=-; B_RATE=-; B_P50=-; B_P99=-; C_P50=-; C_P99=-; D_INFLIGHT=-; D_HWM=
E_RATE=; E_N=; E_P99_0=; E_P99_1=; I_COUNT=
# A histogram's quantile q from /metrics: the upper bound (s) of the first
# bucket holding it.
quantile() {	# $1: histogram name, $2: q
	curl -s http://127.0.0.1:$RP/metrics | awk -v h="$1" -v q="$2" '
	    index($1, h "_bucket{subscriber=\"sink\"") == 1 {
		split($1, a, "le=\""); le = a[2]; sub(/".*/, "", le); n++; l[n] = le; c[n] = $2 }
	    END { for (i = 1; i <= n; i++) if (c[i] >= q * c[n]) { print l[i]; exit } }'
}

O_KEYS=${BENCH_KEYS:-1000}
O_ONE=${BENCH_ONE_KEY:-2000}
O_RATIO=
phase_o() {
	local mode rate
	echo "## o. ordered: $EVENTS events over $O_KEYS keys drained unordered, then ordered; $O_ONE events of one key"
	for mode in false true; do
		begin_phase o-$mode
		start_relay o0-$mode '[]'
		"$O/bench/load" -p $RP -n $EVENTS -c $CONNS -s $SUBJECT -i o -k $O_KEYS | tee "$T/load-o-$mode.txt"
		stop $RELAY
		start_sink o-$mode -n $EVENTS
		start_relay o-$mode "$(subscriber $MIF $mode)"
		wait $SINK
		echo "ordered=$mode: $(cat "$T/sink-o-$mode.txt")"
		rate=$(kv deliveries_per_s "$T/sink-o-$mode.txt")
		if [ $mode = false ]; then
			O_UN=$rate
		else
			O_OR=$rate
			O_P99=$(quantile treaty_relay_ordered_wait_seconds 0.99)
			O_P50=$(quantile treaty_relay_ordered_wait_seconds 0.5)
		fi
		relay_report o-$mode
		end_phase
	done
	O_RATIO=$(awk -v o="$O_OR" -v u="$O_UN" 'BEGIN { if (u > 0) printf "%.2f", o / u }')
	begin_phase o-one
	start_relay o0-one '[]'
	"$O/bench/load" -p $RP -n $O_ONE -c $CONNS -s $SUBJECT -i one -k 1 > /dev/null
	stop $RELAY
	start_sink o-one -n $O_ONE
	start_relay o-one "$(subscriber $MIF true)"
	wait $SINK
	echo "one key: $(cat "$T/sink-o-one.txt")"
	O_ONE_RATE=$(kv deliveries_per_s "$T/sink-o-one.txt")
	O_ONE_POST=$(quantile treaty_relay_delivery_duration_seconds 0.5)
	end_phase
}

for ph in $PHASES; do
	case $ph in
	a|b|c|d|e|i|o) phase_$ph ;;
	*) echo "bench: unknown phase $ph"; exit 2 ;;
	esac
done

echo "## summary (targets for a 2-core machine)"
printf '%-32s %s\n' "deliveries/s, backlog drain:" "$A_RATE (target >= 10000)" \
    "deliveries/s, full speed:" "$B_RATE (target >= 10000), p50 $B_P50 ms, p99 $B_P99 ms" \
    "latency at $RATE/s:" "p50 $C_P50 ms, p99 $C_P99 ms (target p99 < 20 ms)"
[ -n "$E_RATE" ] && printf '%-32s %s\n' "replay of $EVENTS:" \
    "$E_RATE deliveries/s ($E_N received before the new events ended); new events' p99 $E_P99_1 ms during it, $E_P99_0 ms without"
[ -n "$O_RATIO" ] && printf '%-32s %s\n' "ordered, $O_KEYS keys:" \
    "$O_OR deliveries/s vs $O_UN unordered: $O_RATIO (target >= 0.5); wait for the key p50 <= ${O_P50}s, p99 <= ${O_P99}s" \
    "ordered, one key:" "$O_ONE_RATE deliveries/s, $(awk -v r="$O_ONE_RATE" 'BEGIN { if (r > 0) printf "%.2f", 1000 / r }') ms each; a POST's p50 <= ${O_ONE_POST}s"
[ -n "$I_COUNT" ] && printf '%-32s %s\n' "instructions per delivery:" "$I_COUNT"
[ -n "$D_HWM" ] && awk -v h="$D_HWM" -v f="$D_INFLIGHT" 'BEGIN {
    printf "%-32s %.1f MiB (target < 64 MiB)\n", "peak RSS, " f " held:", h / 1024 }'
exit 0
