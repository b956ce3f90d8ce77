# bench/lib.sh: what the benchmark scripts share.  Sourced, from the
# project's top folder, with O set.

# bench_init NAME BINARY...: a temporary folder $T (removed at exit unless
# BENCH_KEEP is set), $PIDS killed at exit, each BINARY (under $O) checked,
# and a private copy of the relay in $T (a rebuild during the run must not
# change the binary under test).
bench_init() {
	local name=$1 b
	shift
	T=$(mktemp -d "/tmp/treaty-$name.XXXXXX")
	PIDS=()
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
	for b in treaty-relay "$@"; do
		[ -x "$O/$b" ] || { echo "bench: $O/$b is missing (make)"; exit 1; }
	done
	command -v nats-server >/dev/null || { echo "bench: nats-server is not installed"; exit 1; }
	cp "$O/treaty-relay" "$T/treaty-relay"
	[ -x "$O/treaty" ] && cp "$O/treaty" "$T/treaty"
}

# Only the processes started here, by pid; then the temporary folder.
bench_cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	if [ -n "${BENCH_KEEP:-}" ]; then echo "logs kept in $T"; else rm -rf "$T"; fi
}

# port: a loopback port below the ephemeral range that nothing listens on.
port() {
	local p
	while :; do
		p=$((10000 + RANDOM % 22000))
		(exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo $p; return; }
	done
}
# up PORT: wait (10 s at most) until something listens on PORT.
up() { for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.1; done; return 1; }
# cpu PID: its user and system time so far, in clock ticks.
cpu() { awk '{print $14 + $15}' /proc/$1/stat 2>/dev/null || echo 0; }
HZ=$(getconf CLK_TCK)

# bench_nats: a nats-server with JetStream (file store under $T) on a free
# port: sets NP (its port) and NATS (its pid); exits when it does not start.
bench_nats() {
	NP=$(port)
	cat > "$T/nats.conf" <<CONF
listen: 127.0.0.1:$NP
max_payload: 2MB
jetstream { store_dir: "$T/js" }
CONF
	nats-server -c "$T/nats.conf" > "$T/nats.log" 2>&1 & NATS=$!; PIDS+=($NATS)
	up $NP || { echo "bench: nats-server did not start"; exit 1; }
}

# healthy PORT: wait (10 s at most) until the relay on PORT answers /healthz 200.
healthy() {
	for _ in $(seq 100); do
		[ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$1/healthz)" = 200 ] && return 0
		sleep 0.1
	done
	return 1
}
