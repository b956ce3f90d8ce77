#!/usr/bin/env bash
# Pipelining through the front door (SPEC 13, issue 28): requests on one
# connection answered in order, one at a time, whatever their routes
# (asynchronous ones included: a POST waits for JetStream, an inbox GET
# and an admin GET for the worker) and however their bytes are split
# across reads; on the main and control listeners, plain and TLS.  No
# input ends the process (libevent 2.1 exits from its read callback when a
# request comes while it holds one).  Output is bounded: 100 connections
# sending 2 MB of pipelined /metrics each and reading nothing keep the
# relay within 10 MiB + 128 KiB a connection, and /healthz on a fresh
# connection answers meanwhile.
. "$(dirname "$0")/lib.sh"
S=test-secret-0123456789
PULL_TOKEN=pull-token-0123456789
ADMIN_TOKEN=admin-token-0123456789
export TOKEN PULL_TOKEN ADMIN_TOKEN
export TREATY_RELAY_SUBSCRIBERS='[{"name":"pulled","tokenSha256":"'$(sha256hex "$PULL_TOKEN")'","secret":"'$S'","filter":"evt.*.shop.>"}]'
export TREATY_RELAY_ADMIN_TOKEN_SHA256=$(sha256hex "$ADMIN_TOKEN")
PL=$ROOT/test/live/pipeline.py
# libevent's fatal path, reached on purpose by a tool with the relay's
# fatal callback: one line with libevent's reason, then an abort.
# (Run by a shell of its own, whose "Aborted" notice is not the test's.)
rc=$(bash -c '"$1" > "$2" 2>&1; echo $?' - "$ROOT/$O/test/fatal-check" "$T/fatal.out" 2>/dev/null)
check "libevent's fatal path: the reason logged, then an abort" \
    "134 1" "$rc $(grep -c 'level=error msg="libevent ended the process" err=[-0-9]* detail="event_debug_assert_is_setup_' "$T/fatal.out")"
make_pki "$T/pki" localhost || { fail pki "openssl could not make the test certificates"; finish; }
CPORT=$(free_port)
start_nats && start_relay --control-listen 127.0.0.1:$CPORT ||
    { fail start "nats-server or relay did not start"; finish; }
PLAIN_PID=$RELAY_PID PLAIN_PORT=$RELAY_PORT PLAIN_LOG=$RELAY_LOG

# The burst that ended the relay: fourteen POSTs, over 4 KiB, so that
# it spans two of the relay's reads.
check "14 pipelined POSTs over two reads: 14 answers in order" "ok 14" \
    "$(python3 "$PL" "$RELAY_PORT" post:14 --tag burst)"
check "  the relay is alive" yes "$(relay_alive && echo yes)"
BASE=$(count WORK)
check "100 POSTs, 100 inbox GETs, 100 admin GETs pipelined on the main listener: in order" \
    "ok 300" "$(python3 "$PL" "$RELAY_PORT" post:100,inbox:100,admin:100 --tag main)"
check "  every POST stored once" 100 "$(($(count WORK) - BASE))"
check "a POST, an inbox GET, an admin GET and /healthz split at every byte offset: in order" \
    ok "$(python3 "$PL" "$RELAY_PORT" post:1,inbox:1,admin:1,health:1 --split --tag split | cut -d' ' -f1)"
check "100 admin GETs and 100 /healthz pipelined on the control listener: in order" \
    "ok 200" "$(python3 "$PL" "$CPORT" admin:100,health:100)"
check "  split at every byte offset there too" \
    ok "$(python3 "$PL" "$CPORT" admin:1,health:1 --split | cut -d' ' -f1)"

# HTTPS: a second relay on the same NATS, its main listener TLS.
NO_WAIT=1 start_relay --tls-cert "$T/pki/server.pem" --tls-key "$T/pki/server.key"
wait_until 15 '[ "$(curl -s -m 5 -o /dev/null -w "%{http_code}" --cacert "$T/pki/ca.pem" --resolve "localhost:$RELAY_PORT:127.0.0.1" https://localhost:$RELAY_PORT/healthz)" = 200 ]' ||
    { fail start "the TLS relay did not become healthy"; finish; }
check "TLS: 100 POSTs, 100 inbox GETs, 100 admin GETs pipelined: in order" \
    "ok 300" "$(python3 "$PL" "$RELAY_PORT" post:100,inbox:100,admin:100 --tls "$T/pki/ca.pem" --tag tls)"
check "TLS: a POST, an inbox GET, an admin GET and /healthz split at every 5th byte offset: in order" \
    ok "$(python3 "$PL" "$RELAY_PORT" post:1,inbox:1,admin:1,health:1 --split --every 5 --tls "$T/pki/ca.pem" --tag tsplit | cut -d' ' -f1)"
check "  the TLS relay is alive" yes "$(relay_alive && echo yes)"
RELAY_PID=$PLAIN_PID RELAY_PORT=$PLAIN_PORT RELAY_LOG=$PLAIN_LOG RELAY_URL=http://127.0.0.1:$PLAIN_PORT

# Unread answers: 100 connections each send 2 MB of pipelined GET /metrics
# and read nothing.  One answer at a time is held for each (the next is
# not read until it is written), so the relay's memory stays bounded;
# /healthz on fresh connections is answered throughout.
before=$(awk '/^VmRSS/ { print $2 }' "/proc/$RELAY_PID/status")
python3 "$ROOT/test/live/flood.py" "$RELAY_PORT" "$RELAY_PID" 100 2000000 0 8 > "$T/unread"
read -r peak end p50 p99 pmax nprobes < "$T/unread"
# No figures (the relay gone, the tool failed) fail every check below.
# The probes are the wall clock (a /healthz is not logged), each from its
# connect to its answer in a process of its own.  Before issue 28 they
# took 467 ms at the median (the loop writing the flood's answers); a
# probe not answered within 5 s counts as 1e9 ms.  Now 0.5 ms at the
# median (0.55 ms in a sanitizer build), 11 ms at most: issue 28's 10 ms
# is held at the median, and every probe within 1 s.
peak=${peak:-999999999} p50=${p50:-1e9} pmax=${pmax:-1e9}
echo "# t-door-pipeline: unread flood: RSS $before KiB before, peak $peak KiB; /healthz p50 $p50 ms, max $pmax ms over $nprobes probes"
check "100 connections pipelining 2 MB of /metrics, reading nothing: /healthz answered every time, within 1 s" \
    yes "$(python3 -c "print('yes' if $pmax < 1000 else 'no: $pmax ms')")"
check "  half of the probes within 10 ms" \
    yes "$(python3 -c "print('yes' if $p50 < 10 else 'no: $p50 ms')")"
if [ -n "$SANITIZED" ]; then
	echo "# skip - $SUITE: RSS bound: the sanitizer's allocator keeps freed memory in quarantine"
else
	check "  RSS within 10 MiB + 128 KiB a connection (22.5 MiB)" \
	    yes "$([ "$peak" -le $((10240 + 128 * 100)) ] && echo yes || echo "no: $peak KiB")"
fi
check "the relay is alive" yes "$(relay_alive && echo yes)"

# A client that pipelines and never reads is closed once an answer cannot
# be written for TREATY_RELAY_HTTP_TIMEOUT_SECONDS (2 here): a relay of
# its own.  Without the bound it would be held for ever; 20 s is room for
# a loaded machine.
TREATY_RELAY_HTTP_TIMEOUT_SECONDS=2 start_relay
r=$(python3 - "$RELAY_PORT" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.setblocking(False)
req = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 100
t0, closed = time.time(), None
while time.time() - t0 < 20:
    try:
        s.send(req)
    except BlockingIOError:
        time.sleep(0.05)
    except OSError:
        closed = time.time() - t0
        break
print("closed" if closed is not None else "open after 20 s")
PY
)
check "a client that pipelines and never reads: closed at the idle timeout" closed "$r"
check "  by a relay still running" yes "$(relay_alive && echo yes)"
check "no libevent fatal error in any log" 0 \
    "$(cat "$T"/relay.*.log | grep -cE 'illegal connection state|libevent ended the process')"
check_no_sanitizer_report "no sanitizer report" "$T"/relay.*.log
finish
