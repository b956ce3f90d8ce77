#!/usr/bin/env bash
# The connection cap (SPEC 13, issue 28): at the cap, the connection idle
# longest (no request begun, none held by the relay) is closed to admit the
# new one, so idle connections never starve working clients; a connection
# with a request in progress is never closed for this, and with none idle
# the new one is closed at once.  The control listener the same.  A
# descriptor limit below the cap plus the relay's own needs lowers the
# cap, with a warning naming both numbers.
. "$(dirname "$0")/lib.sh"
S=test-secret-0123456789
PULL_TOKEN=pull-token-0123456789
export TREATY_RELAY_SUBSCRIBERS='[{"name":"pulled","tokenSha256":"'$(sha256hex "$PULL_TOKEN")'","secret":"'$S'","filter":"evt.*.shop.>"}]'
export TREATY_RELAY_MAX_CONNECTIONS=8
CPORT=$(free_port)
start_nats && start_relay --control-listen 127.0.0.1:$CPORT ||
    { fail start "nats-server or relay did not start"; finish; }
ctl_metric() { local RELAY_URL=http://127.0.0.1:$CPORT; metric "$1"; }

# capcase NAME: a scenario against a cap of 8 (python below), printing one
# line of results.  The relay's own counters tell what it did.
capcase() {
	python3 - "$RELAY_PORT" "$1" "$PULL_TOKEN" <<'PY'
import socket, sys, time
port, case, pull = int(sys.argv[1]), sys.argv[2], sys.argv[3]
HEALTH = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
def conn():
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(10)
    return s
def closed(s, wait=5):
    """'closed' when the relay closed s within wait seconds, else 'open'."""
    s.settimeout(wait)
    try:
        return "closed" if s.recv(1) == b"" else "data"
    except socket.timeout:
        return "open"
    except OSError:
        return "closed"
def answer(s):
    try:
        s.sendall(HEALTH)
        return s.recv(4096).split(b" ")[1].decode()
    except (OSError, IndexError):
        return "none"
def settle():
    time.sleep(0.3)   # the relay counts what was just opened
if case == "idle":
    # 8 idle, then a 9th: admitted and served; the oldest idle closed.
    held = []
    for _ in range(8):
        held.append(conn())
        time.sleep(0.05)
    settle()
    new = conn()
    print(answer(new), closed(held[0]), " ".join(answer(h) for h in held[1:]))
elif case == "busy":
    # 8 with a request begun, then a 9th: closed at once; the 8 finish
    # their requests and are answered.  "At once" is the wall clock here
    # (the relay logs no accept): held open, the 9th would stay so until
    # one of the 8 finished (never, in this case: "open" after 8 s); 5 s
    # is room for a sanitizer build on a loaded machine.
    held = [conn() for _ in range(8)]
    for h in held:
        h.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
    settle()
    new = conn()
    t0 = time.time()
    st = closed(new, 8)
    took = time.time() - t0
    for h in held:
        h.sendall(b"\r\n")
    got = [h.recv(4096).split(b" ")[1].decode() for h in held]
    print(st, "at-once" if took < 5 else "late", " ".join(got))
elif case == "held":
    # 8 long-polls the relay holds (answers still to come), then a 9th:
    # closed at once; the long-polls are answered when their wait ends.
    held = [conn() for _ in range(8)]
    for h in held:
        h.sendall(("GET /v1/inbox/pulled?lease=true&wait=3000 HTTP/1.1\r\n"
                   "Host: x\r\nAuthorization: Bearer %s\r\n\r\n" % pull).encode())
    settle()
    new = conn()
    st = closed(new, 2.5)
    got = [h.recv(4096).split(b" ")[1].decode() for h in held]
    print(st, " ".join(got))
elif case == "mixed":
    # 4 idle, then 4 busy, then 3 new: the 3 idle longest are closed, in
    # that order; the busy ones and the newest idle one are untouched.
    idle = []
    for _ in range(4):
        idle.append(conn())
        time.sleep(0.05)
    busy = [conn() for _ in range(4)]
    for b in busy:
        b.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
    settle()
    new = []
    for _ in range(3):
        new.append(conn())
        time.sleep(0.1)
    states = [closed(i, 2) for i in idle]
    for b in busy:
        b.sendall(b"\r\n")
    got = [b.recv(4096).split(b" ")[1].decode() for b in busy]
    print(" ".join(states), "|", " ".join(got), "|",
          " ".join(answer(n) for n in new))
PY
}
E0=$(metric treaty_relay_connections_evicted_total)
check "cap 8, 8 idle, a 9th: served; the idle longest closed, the other 7 served" \
    "200 closed 200 200 200 200 200 200 200" "$(capcase idle)"
check "  one eviction counted" 1 $(($(metric treaty_relay_connections_evicted_total) - E0))
wait_until 10 '[ "$(ctl_metric treaty_relay_connections)" -le 1 ]'
R0=$(metric treaty_relay_connections_refused_total)
check "cap 8, 8 with a request begun, a 9th: closed at once; the 8 answered" \
    "closed at-once 200 200 200 200 200 200 200 200" "$(capcase busy)"
check "  refused counted" 1 $(($(metric treaty_relay_connections_refused_total) - R0))
wait_until 10 '[ "$(ctl_metric treaty_relay_connections)" -le 1 ]'
check "cap 8, 8 long-polls held by the relay, a 9th: closed; the long-polls answered" \
    "closed 200 200 200 200 200 200 200 200" "$(capcase held)"
wait_until 10 '[ "$(ctl_metric treaty_relay_connections)" -le 1 ]'
check "cap 8, 4 idle and 4 busy, 3 new: the 3 idle longest closed, busy ones answered, new ones served" \
    "closed closed closed open | 200 200 200 200 | 200 200 200" "$(capcase mixed)"

# The control listener (a reserve of 64): 100 idle connections do not keep
# a health check out; each past the reserve closes an idle one, even
# within one burst of accepts.  Kept out, the check would be refused (no
# answer) or wait for an idle one's 30 s timeout; the relay logs no
# accept, so this is the wall clock from the check's connect to its
# answer: within 1 s (issue 28's bound; measured under 1 ms, and a few ms
# in a sanitizer build).
E0=$(metric treaty_relay_connections_evicted_total)
R0=$(metric treaty_relay_connections_refused_total)
r=$(python3 - "$CPORT" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
held = [socket.create_connection(("127.0.0.1", port)) for _ in range(100)]
time.sleep(0.3)
t0 = time.time()
c = socket.create_connection(("127.0.0.1", port))
c.settimeout(10)
c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
try:
    st = c.recv(4096).split(b" ")[1].decode()
except (OSError, IndexError):
    st = "none"
print(st, "%.0f" % ((time.time() - t0) * 1000))
PY
)
check "control listener: 100 idle connections, then /healthz: 200 within 1 s" \
    yes "$(set -- $r; [ "$1" = 200 ] && [ "$2" -lt 1000 ] && echo yes || echo "no: $r")"
check "  each past the reserve closed an idle one (37 evictions), none refused" "37 0" \
    "$(($(metric treaty_relay_connections_evicted_total) - E0)) $(($(metric treaty_relay_connections_refused_total) - R0))"

# A cap of 1,000 and 1,500 idle connections (each one past the cap closes
# the idle longest), then 100 fresh requests, GETs and POSTs, each on its
# own connection: every one answered within 1 s of its connect (before,
# each waited for the 30 s idle timeout of an idle one).  The wall clock
# from connect to answer in one process (the relay logs no accept): 1 s is
# issue 28's bound, against 0.7 ms measured at most (bench/door.sh).
kill "$RELAY_PID"; wait "$RELAY_PID" 2>/dev/null
export TREATY_RELAY_MAX_CONNECTIONS=1000
start_relay --control-listen 127.0.0.1:$CPORT || { fail start "relay did not start again"; finish; }
fresh() {
	python3 - "$RELAY_PORT" "$TOKEN" "$1" <<'PY'
import resource, socket, sys, time
port, token, nidle = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
held = []
for _ in range(nidle):
    held.append(socket.create_connection(("127.0.0.1", port)))
time.sleep(0.5)
worst, bad = 0.0, []
for i in range(100):
    t0 = time.time()
    c = socket.create_connection(("127.0.0.1", port))
    c.settimeout(10)
    if i % 2:
        body = b"x"
        c.sendall(("POST /v1/events/evt.acme.shop.order.created HTTP/1.1\r\n"
                   "Host: x\r\nAuthorization: Bearer %s\r\nce-specversion: 1.0\r\n"
                   "ce-id: fresh-%d\r\nce-source: /t\r\nce-type: dev.shop.order.created.v1\r\n"
                   "Content-Length: 1\r\nConnection: close\r\n\r\nx" % (token, i)).encode())
        want = b"202"
    else:
        c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        want = b"200"
    try:
        st = c.recv(4096).split(b" ")[1]
    except (OSError, IndexError):
        st = b"none"
    worst = max(worst, time.time() - t0)
    if st != want:
        bad.append("%d:%s" % (i, st.decode()))
    c.close()
print("answered" if not bad else "not: " + ",".join(bad[:5]),
      "%.0f" % (worst * 1000))
PY
}
r=$(fresh 1500)
check "cap 1,000, 1,500 idle, 100 fresh GETs and POSTs: every one answered" answered "${r% *}"
check "  each within 1 s of its connect" yes "$([ "${r##* }" -lt 1000 ] && echo yes || echo "no: ${r##* } ms")"
check "  the cap held" yes "$([ "$(metric treaty_relay_connections)" -le 1000 ] && echo yes)"

# A descriptor limit of 1,024 with the default cap of 10,000: the cap is
# lowered to what the limit holds, with a warning naming both numbers, and
# idle connections past it are closed for new ones as at any cap.
kill "$RELAY_PID"; wait "$RELAY_PID" 2>/dev/null
unset TREATY_RELAY_MAX_CONNECTIONS
printf '#!/bin/sh\nulimit -n 1024 || exit 1\nexec %s "$@"\n' "$ROOT/$O/treaty-relay" > "$T/lowfd"
chmod +x "$T/lowfd"
RELAY_BIN=$T/lowfd start_relay --control-listen 127.0.0.1:$CPORT || { fail start "relay did not start under ulimit -n 1024"; finish; }
check_match "ulimit -n 1024: a warning names the limit and the cap" \
    'level=warn msg="the descriptor limit is below the connection cap[^"]*" nofile=1024 max_connections=10000 needs=[0-9]+ effective=[0-9]+' \
    "$(grep 'descriptor limit is below' "$RELAY_LOG")"
eff=$(metric treaty_relay_connections_max)
check "  the cap in /metrics is the lowered one, below 1,024" yes \
    "$([ "$eff" -gt 0 ] 2>/dev/null && [ "$eff" -lt 1024 ] && echo yes || echo "no: $eff")"
r=$(fresh 1100)
check "  1,100 idle, then 100 fresh requests: every one answered within 1 s" "answered yes" \
    "${r% *} $([ "${r##* }" -lt 1000 ] && echo yes || echo "no: ${r##* } ms")"
check "  the control listener answers" 200 "$(curl_status -m 5 http://127.0.0.1:$CPORT/healthz)"
check "the relay is alive" yes "$(relay_alive && echo yes)"
check_no_sanitizer_report "no sanitizer report" "$T"/relay.*.log
finish
