#!/usr/bin/env bash
# Availability across a change of stream leader (issue 11): three
# nats-servers with JetStream, WORK and AUDIT with three replicas, a steady
# publisher (4 keep-alive clients, a few hundred events/s).  The server
# leading WORK, made the one the relay is connected to, is killed
# (SIGKILL): the relay reconnects while the servers elect.  Measured: the server's own election
# (from the kill until a surviving server names a new WORK leader), and the
# relay's gap (the longest time without a 202 around the kill).  The
# relay must answer 202 again soon after JetStream stores again: it does
# not wait for its own stream and consumer checks, and a check without an
# answer does not hold ingest.  Both figures are printed; docs/BENCHMARKS.md
# records them.
. "$(dirname "$0")/lib.sh"
start_cluster || { fail cluster "a nats-server did not start"; finish; }

RPORT=$(free_port)
start_receiver $RPORT "$T/deliveries" || { fail receiver "did not start"; finish; }
export TREATY_RELAY_SUBSCRIBERS='[{"name":"hook","url":"http://127.0.0.1:'$RPORT'/in","secret":"test-secret-0123456789","filter":"evt.>","maxInFlight":256}]'
export TREATY_RELAY_REPLICAS=3 TREATY_RELAY_PUBLISH_TIMEOUT_MS=2000
NATS_URL_RELAY="nats://127.0.0.1:${ports[0]},nats://127.0.0.1:${ports[1]},nats://127.0.0.1:${ports[2]}"
NATS_URL_RELAY=$NATS_URL_RELAY start_relay || { fail start "relay not healthy on the cluster"; finish; }

# leader PORT: the server name leading WORK, as the server at PORT says.
leader() {
	python3 "$ROOT/test/live/jsapi.py" "$1" raw '$JS.API.STREAM.INFO.WORK' |
	    python3 -c 'import sys, json; print(json.loads(sys.stdin.read()).get("cluster", {}).get("leader", ""))' 2>/dev/null
}
wait_until 20 'test -n "$(leader ${ports[1]})"'
# The worst case: the leader is also the server the relay is connected
# to, so the relay reconnects while the servers elect.  Ask the leader to
# step down until the relay's server leads (each election is random).
relay_server() {
	local i
	for i in 0 1 2; do
		ss -tnpH state established "( dport = :${ports[$i]} )" 2>/dev/null |
		    grep -q "pid=$RELAY_PID," && { echo n$i; return; }
	done
}
RS=$(relay_server)
for try in $(seq 1 12); do
	L=$(leader ${ports[1]})
	[ -z "$RS" ] || [ "$L" = "$RS" ] && break
	python3 "$ROOT/test/live/jsapi.py" "${ports[1]}" raw '$JS.API.STREAM.LEADER.STEPDOWN.WORK' > /dev/null
	wait_until 15 'l=$(leader ${ports[1]}); test -n "$l" && test "$l" != "$L"'
done
L=$(leader ${ports[1]})
echo "# $SUITE: the relay is connected to ${RS:-?}, WORK's leader is $L"
case $L in n0|n1|n2) ;; *) fail leader "no WORK leader: [$L]"; finish ;; esac
li=${L#n}
survivor=$(( (li + 1) % 3 ))
check "WORK has three replicas and a leader" "3 ok" \
    "$("$JSGET" "nats://127.0.0.1:${ports[$survivor]}" info WORK | sed -n 's/^replicas=//p') ok"

echo "$TOKEN" > "$T/tok"
python3 "$(dirname "$0")/steady.py" "$RELAY_URL" "$T/tok" evt.acme.shop.order.created \
    lead- "$T/stop" "$T/steady.out" keep 5 4 "$T/answers" &
STEADY=$!
PIDS+=($STEADY)
wait_until 30 'test "$(grep -c " 202$" "$T/answers" 2>/dev/null)" -ge 400'

# The kill, and the election as a surviving server sees it: its STREAM.INFO
# polled every 50 ms until it names a leader other than the dead one.
# Then JetStream storing again, as the relay must see it: a publish to
# WORK through that server every 50 ms until one is acknowledged (with the
# CloudEvents headers of a stored event: the relay delivers it to hook).
kill_ms=$(($(date +%s%N) / 1000000))
kill -KILL ${cpids[$li]}
times=$(python3 - "${ports[$survivor]}" "$L" "$kill_ms" <<'PY'
import json, socket, sys, time
port, old, t0 = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])


def ask():
    """One STREAM.INFO on a new connection: WORK's leader, or ""."""
    s = socket.create_connection(("127.0.0.1", port), timeout=0.25)
    try:
        f = s.makefile("rb")
        f.readline()
        s.sendall(b'CONNECT {"verbose":false}\r\nSUB _INBOX.elect 1\r\n'
                  b"PUB $JS.API.STREAM.INFO.WORK _INBOX.elect 0\r\n\r\n")
        while True:
            line = f.readline()
            if not line:
                return ""
            if line.startswith(b"PING"):
                s.sendall(b"PONG\r\n")
            elif line.startswith(b"MSG "):
                r = json.loads(f.read(int(line.split()[-1]) + 2)[:-2])
                return r.get("cluster", {}).get("leader", "")
    except OSError:
        return ""
    finally:
        s.close()


def stored(n):
    """One publish to WORK on a new connection: True when acknowledged."""
    s = socket.create_connection(("127.0.0.1", port), timeout=0.25)
    h = ("NATS/1.0\r\nce-specversion: 1.0\r\nce-id: probe-%d\r\nce-source: /test\r\n"
         "ce-type: dev.cluster.leader.stored.v1\r\n\r\n" % n).encode()
    try:
        f = s.makefile("rb")
        f.readline()
        s.sendall(b'CONNECT {"verbose":false,"headers":true}\r\nSUB _INBOX.store 1\r\n'
                  b"HPUB evt.probe.cluster.leader.stored _INBOX.store %d %d\r\n%sprobe\r\n"
                  % (len(h), len(h) + 5, h))
        while True:
            line = f.readline()
            if not line:
                return False
            if line.startswith(b"PING"):
                s.sendall(b"PONG\r\n")
            elif line.startswith(b"MSG "):
                r = json.loads(f.read(int(line.split()[-1]) + 2)[:-2])
                return "seq" in r and "error" not in r
    except (OSError, ValueError):
        return False
    finally:
        s.close()


end, elect, n = time.time() + 60, None, 0
while time.time() < end:
    n += 1
    if elect is None:
        lead = ask()
        if lead and lead != old:
            elect = int(time.time() * 1000) - t0
            continue
    elif stored(n):
        print(elect, int(time.time() * 1000) - t0)
        sys.exit(0)
    time.sleep(0.05)
print("ERROR: no new leader within 60 s" if elect is None else
      "ERROR: WORK stored nothing within 60 s")
PY
)
elect=${times% *} stored=${times#* }
check_match "the servers elect a new WORK leader, and WORK stores again" '^[0-9]+ [0-9]+$' "$times"
# Publishing goes on for a while after the first 202 that follows the kill.
wait_until 60 "awk -v k=$kill_ms '\$1 > k && \$2 == 202 { n++ } END { exit !(n >= 400) }' '$T/answers'"
touch "$T/stop"
wait $STEADY
# The gap: the longest time without an event stored from just before the
# kill on (answers already on their way when it died still arrive after
# it), by the relay's own stamps: the clients' turns on a loaded machine
# are not in it.
gap=$(log_stamps 'msg="event stored" .* id=lead-' |
    awk -v k=$kill_ms '$1 > k - 1000 { if (p && $1 - p > g) g = $1 - p; p = $1 } END { printf "%.0f\n", g }')
first=$(awk -v k=$kill_ms '$1 > k && $2 == 202 { n++ } END { print n + 0 }' "$T/answers")
others=$(awk -v k=$kill_ms '$1 > k && $2 != 202 { n[$2]++ } END { for (s in n) printf "%s:%d ", s, n[s] }' "$T/answers")
echo "# $SUITE: election ${elect} ms after the kill, WORK stores again at ${stored} ms; relay gap ${gap} ms (its longest time without an event stored); answers after the kill: 202:$first ${others:-}"
# Anchored on JetStream storing again, what the relay waits for (a few ms
# after the election here; later if a loaded machine delays the new leader;
# a probe's acknowledgement, polled every 50 ms: a late poll only widens
# the bound):
# the relay must also reconnect (it was on the dead server) and its
# publishes in flight time out (2 s), so a margin of 2 s and 1.5 s, not
# the 4-12 s the whole stream-and-consumer check used to cost.
check_match "ingest answers 202 again within 3.5 s of JetStream storing again (gap ${gap} ms, stored ${stored} ms)" '^ok' \
    "$([[ $times =~ ^[0-9]+\ [0-9]+$ ]] && [ "$gap" -le $((stored + 3500)) ] && echo ok || echo "gap=$gap election=$elect stored=$stored")"
check "every request was answered (202 or 503, never dropped)" "" \
    "$(awk '$2 != 202 && $2 != 503 { print $2 }' "$T/answers" | sort -u)"
check "the relay is still running" yes "$(relay_alive && echo yes)"
finish
