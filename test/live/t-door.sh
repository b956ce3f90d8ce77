#!/usr/bin/env bash
# The front door (SPEC 13), against the relay over raw sockets: request
# smuggling refused (400, Connection: close, nothing after it read as a
# request, nothing stored), a body announced over 1 MiB answered in SPEC
# 2's order before it is read, header limits (431), the request deadline
# from the first byte (a trickling client is closed, others unaffected),
# keep-alive through the door.  The cap: t-door-cap.sh.
. "$(dirname "$0")/lib.sh"
export TREATY_RELAY_REQUEST_TIMEOUT_SECONDS=2 TREATY_RELAY_MAX_CONNECTIONS=8
CPORT=$(free_port)
start_nats && start_relay --control-listen 127.0.0.1:$CPORT ||
    { fail start "nats-server or relay did not start"; finish; }

RAW=$ROOT/test/live/rawhttp.py
# raw TEXT: send TEXT (printf escapes) on a new connection, print what
# comes back until the relay closes it or 5 s pass, then "<EOF>" if it
# closed it.
raw() { python3 "$RAW" "$RELAY_PORT" "send:$1"; }
status_line() { printf '%s\n' "$1" | head -1 | tr -d '\r'; }
# The answers in an output (a body has no line end: an answer after it
# starts mid-line).
nresp() { printf '%s\n' "$1" | grep -o 'HTTP/1\.1 [0-9][0-9][0-9] ' | wc -l; }
AUTH="Authorization: Bearer $TOKEN"
CE='ce-specversion: 1.0\r\nce-id: d-1\r\nce-source: /t\r\nce-type: dev.shop.order.created.v1\r\n'

BASE=$(counts)
r=$(raw "POST /v1/events/evt.acme.shop.order.created HTTP/1.1\r\nHost: x\r\n$AUTH\r\n${CE}Content-Length: 3\r\nContent-Length: 3\r\n\r\nabcGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
check "two Content-Length (equal): 400, one answer, closed, nothing stored" \
    "HTTP/1.1 400 Bad Request|1|close|EOF|$BASE" \
    "$(status_line "$r")|$(nresp "$r")|$(printf '%s' "$r" | grep -io '^connection: close' | cut -d' ' -f2)|$(printf '%s' "$r" | grep -o 'EOF')|$(counts)"
check_match "  its body is the JSON error" '\{"error":"bad_request","detail":"[^"]+"\}<EOF>$' "$r"
r=$(raw "POST /v1/events/evt.acme.shop.order.created HTTP/1.1\r\nHost: x\r\n$AUTH\r\n${CE}Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
check "Content-Length and Transfer-Encoding: 400" "HTTP/1.1 400 Bad Request|1" "$(status_line "$r")|$(nresp "$r")"
r=$(raw "POST /v1/events/evt.acme.shop.order.created HTTP/1.1\r\nHost: x\r\n$AUTH\r\n${CE}Transfer-Encoding: gzip, chunked\r\n\r\n")
check "Transfer-Encoding other than chunked: 400" "HTTP/1.1 400 Bad Request" "$(status_line "$r")"
check "  nothing stored by any of them" "$BASE" "$(counts)"

# HEAD and TRACE have no body for evhttp: one announced is refused, or its
# bytes would be the next request for evhttp and not for the door.
r=$(raw "HEAD /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 39\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
check "HEAD with a body: 400, one answer, closed" "HTTP/1.1 400 Bad Request|1|EOF" \
    "$(status_line "$r")|$(nresp "$r")|$(printf '%s' "$r" | grep -o 'EOF')"
# A head whose end is split over two reads as "\r\n\r" | "\n": found, so
# the 5 bytes after it are its body and the GET after them is checked
# (two Content-Lengths: 400).
r=$(python3 "$RAW" --out statuses "$RELAY_PORT" 'send:POST /nope HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r' \
    pause:0.3 'send:\nabcdeGET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nz')
check "a head end split as CR LF CR | LF: its body read, the next head checked" "404 400" "$r"
# After a chunk's data comes its line end and nothing else: evhttp would
# read "0" there as the last chunk and the door a chunk size.
BASE=$(counts)
r=$(raw "POST /v1/events/evt.acme.shop.order.created HTTP/1.1\r\nHost: x\r\n$AUTH\r\n${CE}Transfer-Encoding: chunked\r\n\r\n1\r\nX0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
check "a chunk not followed by its line end: closed, no answer, nothing stored" "0|EOF|$BASE" \
    "$(nresp "$r")|$(printf '%s' "$r" | grep -o 'EOF')|$(counts)"
# Chunk extensions and trailer fields are valid HTTP that libevent 2.1's
# parser refuses (with its own HTML 413): the door passes the chunk sizes
# alone and drops the trailers, which nothing here reads (and which evhttp
# would add to the headers after the body).
CEX='ce-specversion: 1.0\r\nce-id: d-ext\r\nce-source: /t\r\nce-type: dev.shop.order.created.v1\r\n'
r=$(raw "POST /v1/events/evt.acme.shop.order.created HTTP/1.1\r\nHost: x\r\n$AUTH\r\n${CEX}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n3;a=b\r\nabc\r\n2 ; q\r\nde\r\n0;last\r\nce-injected: x\r\nnot a header\r\n\r\n")
check_match "chunk extensions and trailers: 202 with the JSON body" \
    '^HTTP/1.1 202 .*"id":"d-ext"' "$(printf '%s' "$r" | tr -d '\r\n')"
last WORK evt.acme.shop.order.created
check "  stored: the chunks' data, no trailer among the headers" "abcde|" \
    "$(cat "$T/payload")|$(shdr ce-injected)"
# Expect: 100-continue has evhttp put its own callbacks back; what
# follows still passes the door.
# The body once evhttp has asked for it (its 100 Continue, the "head" step).
r=$(python3 "$RAW" --out statuses "$RELAY_PORT" \
    'send:POST /nope HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n' head \
    'send:abcdGET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nz')
check "after Expect: 100-continue the next request is still checked" "100 404 400" "$r"
# One read that ends a request and starts the next (4,096 bytes, what
# libevent reads at once): the rest is checked too, whichever callback
# runs first.
req1='GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'
pad=$(head -c $((4096 - $(printf "$req1" | wc -c) - 7)) /dev/zero | tr '\0' a)
r=$(python3 "$RAW" --out statuses --timeout 3 "$RELAY_PORT" \
    "send:${req1}X-Pad: ${pad}GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
check "a 4,096-byte pipelined read: the first answered, the malformed rest refused" "200 400" "$r"
# Clients that do not read their answers and keep sending: while an
# answer waits to be written the relay stops reading them (TCP holds the
# rest back), so each costs at most a head and an open body, never the
# 1 MiB + 64 KiB after which the door would close it (about 3 MiB of
# buffers each, before).  Six such clients (the cap here is 8), each
# sending just under that: none has it all taken, and the relay stays
# within 8 MiB of where it was (not checked under AddressSanitizer, whose
# quarantine keeps what is freed).
r=$(python3 - "$RELAY_PORT" "$RELAY_PID" "$SANITIZED" <<'PY'
import socket, sys, time
port, pid, n, junk_max = int(sys.argv[1]), sys.argv[2], 6, 1000000
san = sys.argv[3] == "1"	# AddressSanitizer's quarantine keeps freed memory
def rss():
    return int(open("/proc/%s/status" % pid).read().split("VmRSS:")[1].split()[0])
r0 = rss()
conns = []
for i in range(n):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 500)
    s.setblocking(False)
    conns.append(s)
# Until the relay is stuck writing answers to each (its side's send queue
# in /proc/net/tcp not empty and no longer moving), so that what follows
# comes while an answer waits, however fast the relay is.
mine = {"%04X" % c.getsockname()[1] for c in conns}
def txq():
    q = {}
    for line in open("/proc/net/tcp").read().splitlines()[1:]:
        f = line.split()
        if f[1].endswith(":%04X" % port) and f[2].split(":")[1] in mine:
            q[f[2]] = int(f[4].split(":")[0], 16)
    return q
prev, still, end = None, 0, time.time() + 20
while time.time() < end and still < 3:
    q = txq()
    still = still + 1 if q == prev and len(q) == n and all(q.values()) else 0
    prev = q
    time.sleep(0.1)
sent, gone = [0] * n, [False] * n
junk = b"x" * 65536
last, deadline = time.time(), time.time() + 30
# Send until every client is done or held back: no byte taken for 1 s.
while time.time() - last < 1.0 and time.time() < deadline:
    moved = False
    for i, s in enumerate(conns):
        if gone[i] or sent[i] >= junk_max:
            continue
        try:
            k = s.send(junk[:junk_max - sent[i]])
            sent[i] += k
            moved = moved or k > 0
        except BlockingIOError:
            pass
        except OSError:
            gone[i] = True
    if moved:
        last = time.time()
    if all(g or k >= junk_max for g, k in zip(gone, sent)):
        break
    time.sleep(0.01)
# Held back by TCP, or closed (a head that never ends is 431): either
# way, no client had all it sent taken while the relay answered.
taken = sum(1 for g, k in zip(gone, sent) if not g and k >= junk_max)
grew = (rss() - r0) // 1024
print("taken=%d" % taken, "small" if grew < 8 or san else "grew %d MiB" % grew)
PY
)
check "clients that send and never read: held back, the relay stays small" "taken=0 small" "$r"
# HEAD gets the GET's headers and no body.
r=$(raw "HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
check_match "HEAD /healthz: a Content-Length, no body (the next answer follows the head at once)" \
    '^HTTP/1.1 200 OK[^{]*Content-Length: [1-9][0-9]*[^{]*HTTP/1.1 200 OK' "$(printf '%s' "$r" | tr -d '\r\n')"

# A body announced over 1 MiB: SPEC 2's order, answered before it is read.
BIG="Content-Length: 2000000\r\n"
r=$(raw "POST /v1/events/evt.acme.shop.order.created HTTP/1.1\r\nHost: x\r\n${CE}$BIG\r\n")
check "over 1 MiB without a token: 401 first" "HTTP/1.1 401 Unauthorized" "$(status_line "$r")"
r=$(raw "POST /v1/events/evt.acme.shop.order.created HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer nobody-0123456789\r\n${CE}$BIG\r\n")
check "  with a token no producer has: 401, the detail says so (the door's answer)" \
    "HTTP/1.1 401 Unauthorized \"detail\":\"unknown token: its SHA-256 is no producer's tokenSha256\"" \
    "$(status_line "$r") $(printf '%s' "$r" | grep -o '"detail":"[^"]*"')"
r=$(raw "POST /v1/events/nope HTTP/1.1\r\nHost: x\r\n$AUTH\r\n$BIG\r\n")
check "  with a token, a bad subject: 400 bad_subject" "HTTP/1.1 400 Bad Request bad_subject" \
    "$(status_line "$r") $(printf '%s' "$r" | grep -o 'bad_subject' | head -1)"
r=$(raw "POST /v1/events/evt.acme.nothere.order.created HTTP/1.1\r\nHost: x\r\n$AUTH\r\n$BIG\r\n")
check "  a subject it may not publish to: 403" "HTTP/1.1 403 Forbidden" "$(status_line "$r")"
r=$(raw "POST /v1/events/evt.acme.shop.order.created HTTP/1.1\r\nHost: x\r\n$AUTH\r\n${CE}$BIG\r\n")
check "  all else right: 413 too_large as JSON, before the body" "HTTP/1.1 413 Request Entity Too Large too_large" \
    "$(status_line "$r") $(printf '%s' "$r" | grep -o '"too_large"' | tr -d '"')"

# A body over 64 KiB (or chunked) is let through only to a producer that
# passes the checks on its head: without a token, 401 before the body.
r=$(raw "POST /v1/events/evt.acme.shop.order.created HTTP/1.1\r\nHost: x\r\n${CE}Content-Length: 100000\r\n\r\n")
check "a 100 KB body without a token: 401 from the head, closed" "HTTP/1.1 401 Unauthorized|EOF" \
    "$(status_line "$r")|$(printf '%s' "$r" | grep -o 'EOF')"
r=$(raw "POST /v1/events/evt.acme.shop.order.created HTTP/1.1\r\nHost: x\r\n${CE}Transfer-Encoding: chunked\r\n\r\n")
check "  a chunked body without a token: 401" "HTTP/1.1 401 Unauthorized" "$(status_line "$r")"
r=$(raw "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
check "  a 100 KB body to another route: 413 too_large" "HTTP/1.1 413 Request Entity Too Large" "$(status_line "$r")"
head -c 100000 /dev/zero | tr '\0' a > "$T/big"
post evt.acme.shop.order.created door-big "@$T/big"
check "  with a token, a 100 KB event is stored" 202 "$STATUS"

# What evhttp would answer with an HTML page is the JSON error too.
r=$(raw "FOO /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
check_match "an unknown method: 501 not_implemented as JSON" \
    '^HTTP/1.1 501 .*"error":"not_implemented"' "$(printf '%s' "$r" | tr -d '\r\n')"
r=$(raw "GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n")
check_match "a request line that is not HTTP/1.x: 400 bad_request as JSON" \
    '^HTTP/1.1 400 .*"error":"bad_request"' "$(printf '%s' "$r" | tr -d '\r\n')"
# door_json STATUS CODE NAME: $r is one JSON error answer STATUS with CODE,
# Connection: close, and the connection closed after it.
door_json() {
	check "$3: $1 $2 as JSON, Connection: close, closed" \
	    "$1|1|close|{\"error\":\"$2\"|EOF" \
	    "$(status_line "$r" | cut -d' ' -f2)|$(nresp "$r")|$(printf '%s' "$r" | grep -io '^connection: close' | cut -d' ' -f2)|$(printf '%s' "$r" | grep -o '{"error":"[a-z_]*"')|$(printf '%s' "$r" | grep -o 'EOF')"
}
# libevent 2.1 answers these with its own HTML 400 (a CR inside a header
# value; a NUL, which ends its C string, in the target; a target its URI
# parser refuses); the door answers first.
r=$(raw "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n")
door_json 400 bad_request "a bare CR in a header value"
r=$(raw "GET /healthz\000x HTTP/1.1\r\nHost: x\r\n\r\n")
door_json 400 bad_request "a NUL in the request target"
r=$(raw "GET //h^st/healthz HTTP/1.1\r\nHost: x\r\n\r\n")
door_json 400 bad_request "a target libevent's URI parser refuses"
# ... and 417 to an Expect other than 100-continue on a request with a body.
r=$(raw "POST /healthz HTTP/1.1\r\nHost: x\r\nExpect: nope\r\nContent-Length: 3\r\n\r\nabc")
door_json 417 expectation_failed "an Expect other than 100-continue"
# A tab before "chunked": evhttp keeps it (it skips only spaces) and reads
# no body, the door would have read a chunked one; refused, nothing stored.
BASE=$(counts)
r=$(raw "POST /v1/events/evt.acme.shop.order.created HTTP/1.1\r\nHost: x\r\n$AUTH\r\n${CE}Transfer-Encoding:\tchunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
door_json 400 bad_request "Transfer-Encoding: TAB chunked"
check "  nothing stored" "$BASE" "$(counts)"

# Header limits.
many=$(for i in $(seq 1 101); do printf 'X-%d: y\\r\\n' "$i"; done)
r=$(raw "GET /healthz HTTP/1.1\r\nHost: x\r\n$many\r\n")
check "101 header lines: 431 headers_too_large" "HTTP/1.1 431 Request Header Fields Too Large" "$(status_line "$r")"
long=$(head -c 17000 /dev/zero | tr '\0' a)
r=$(raw "GET /healthz HTTP/1.1\r\nX: $long")
check "a head over 16 KiB, unfinished: 431 at once" "HTTP/1.1 431 Request Header Fields Too Large" "$(status_line "$r")"

# Keep-alive: three requests on one connection, each through the door.
r=$(raw "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
check "three requests on one keep-alive connection: three answers" 3 "$(nresp "$r")"

# The deadline: a client trickling one byte every 0.4 s is closed about 2 s
# after its first byte; a normal client meanwhile is served.  Timed by the
# relay's own stamps alone (deadline_ms): from its line where the deadline
# started (the first byte read) to its close line for the same client
# port, so that neither the client's clock, nor its noticing the close,
# nor this script counts (the client's first byte only picks the close
# line).  Without the deadline it would trickle its 63 bytes for about
# 25 s (or be closed at the 30 s idle timeout): below 10 s is room for a
# sanitizer build on a loaded machine.  The lower bound is the deadline
# itself, exactly: door.c stamps the start line before it reads the clock
# the deadline is kept on (to the nanosecond), and closes only after a
# reading at or past it, so the two stamps, from one clock (the log's, which
# moves with the deadline's) and cut alike to the millisecond, cannot be
# less than 2,000 ms apart.
TO0=$(metric treaty_relay_requests_timed_out_total)
python3 "$RAW" --t0 "$T/slow.t0" --timeout 10 "$RELAY_PORT" \
    'drip:0.4:POST /v1/events/evt.acme.shop.order.created HTTP/1.1\r\nHost: x\r\n' > "$T/slow" &
slow=$!
post evt.acme.shop.order.created during-slow x
check "a normal client meanwhile: 202" 202 "$STATUS"
wait $slow
t0=$(cat "$T/slow.t0")
if [[ $(cat "$T/slow") == *"<EOF>" ]]; then
	ms=$(deadline_ms "$t0")
else
	ms="ERROR: not closed by the relay"
fi
check_ms "the trickling client is closed at the deadline (2 s), by the relay's stamps" "$ms" 2000 10000
check "  counted" 1 $(($(metric treaty_relay_requests_timed_out_total) - TO0))

# A request pipelined behind an event that waits for JetStream longer
# than the deadline: evhttp reads nothing meanwhile, so the deadline does
# not close the connection and the event's answer arrives.
kill -STOP "$NATS_PID"
python3 "$RAW" --out first --answers 1 --timeout 15 "$RELAY_PORT" \
    "send:POST /v1/events/evt.acme.shop.order.created HTTP/1.1\r\nHost: x\r\n$AUTH\r\nce-specversion: 1.0\r\nce-id: held-1\r\nce-source: /t\r\nce-type: dev.shop.order.created.v1\r\nContent-Length: 1\r\n\r\nxGET /healthz HT" > "$T/held" &
held=$!
sleep 3		# longer than the 2 s deadline: the point of the check
kill -CONT "$NATS_PID"
wait $held
check "an event held by JetStream past the deadline, a request pipelined behind it: the event's answer arrives" \
    202 "$(cat "$T/held")"

wait_until 5 '[ "$(metric treaty_relay_connections)" -le 1 ]'
m=$(metric treaty_relay_connections) && m=$((m > 1 ? m : 0))
check "the gauge goes back down" 0 "$m"
check_no_sanitizer_report "no sanitizer report" "$RELAY_LOG"
finish
