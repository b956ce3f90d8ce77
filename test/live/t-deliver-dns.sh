#!/usr/bin/env bash
# Delivery by host name through the relay's own resolver (SPEC 3): every
# resolved address is validated and pinned; a name that resolves to a
# private or metadata address is refused unless private networks are
# allowed; when one address refuses the connection the next is tried in the
# same attempt; plain http with private networks allowed goes to private
# addresses only.  Names come from test/live/dns.py, a DNS server on loopback
# that the relay uses through TREATY_RELAY_DNS_SERVER (no /etc/hosts).
. "$(dirname "$0")/lib.sh"
pki=$T/pki
make_pki "$pki" inside.example || { fail pki "could not make test certificates"; finish; }

DPORT=$(free_port)
python3 "$(dirname "$0")/dns.py" $DPORT hooks=127.0.0.2,127.0.0.1 \
    holes=127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5 \
    inside.example=127.0.0.1 meta.example=169.254.169.254 \
    intra.corp=127.0.0.1 public.example=127.0.0.1,93.184.216.34 &
PIDS+=($!)
RPORT=$(free_port)
TPORT=$(free_port)
start_receiver $RPORT "$T/plain" &&
    start_receiver $TPORT "$T/tls" "$pki/server.pem" "$pki/server.key" ||
    { fail receivers "did not start"; finish; }
got() { cat "$T/$1" 2>/dev/null | grep -cF "\"ce-id\": \"$2\""; }

S=test-secret-0123456789
export TREATY_RELAY_SUBSCRIBERS='[
 {"name":"multi","url":"http://hooks:'$RPORT'/in","secret":"'$S'","filter":"evt.*.multi.>"},
 {"name":"inside","url":"https://inside.example:'$TPORT'/in","secret":"'$S'","filter":"evt.*.inside.>","maxDeliver":2},
 {"name":"meta","url":"https://meta.example/x","secret":"'$S'","filter":"evt.*.meta.>","maxDeliver":2}]'
export TREATY_RELAY_DNS_SERVER=127.0.0.1:$DPORT TREATY_RELAY_CA_FILE=$pki/ca.pem
export TREATY_RELAY_RETRY_BASE_MS=100
PRODUCERS='[{"name":"alpha","tokenSha256":"'$TOKEN_SHA'","subjects":["evt.>"]}]'
start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }

# hooks resolves to 127.0.0.2 (nothing listens there) and 127.0.0.1.
post evt.acme.multi.thing.done ok-multi-1 x
wait_until 10 'test "$(got plain ok-multi-1)" -ge 1'
check "two addresses, the first refusing: delivered" 1 "$(got plain ok-multi-1)"
check "in the first attempt (no failed attempt logged)" "logged []" \
    "$(in_log 'msg=delivered sub=multi id=ok-multi-1') [$(grep 'msg="delivery failed" sub=multi' "$RELAY_LOG")]"
check "one attempt, delivered" 1 "$(metric 'treaty_relay_deliveries_total{subscriber="multi",outcome="delivered"}')"

# A public-looking name that resolves to loopback, and one to the metadata
# address: refused, dropped after maxDeliver, never contacted.
post evt.acme.inside.thing.done ok-in-1 x
post evt.acme.meta.thing.done ok-meta-1 x
log_wait 10 'msg="delivery dropped" sub=inside id=ok-in-1'
log_wait 10 'msg="delivery dropped" sub=meta id=ok-meta-1'
check_match "a name resolving to 127.0.0.1 is refused" 'msg="delivery dropped" sub=inside id=ok-in-1 subject=evt.acme.inside.thing.done attempt=2 status=0 error="inside.example has a [a-z ]*address' "$(cat "$RELAY_LOG")"
check_match "a name resolving to 169.254.169.254 is refused" 'msg="delivery dropped" sub=meta id=ok-meta-1 .*error="meta.example has a [a-z -]*address' "$(cat "$RELAY_LOG")"
check "the refused address was never contacted" "logged 0" \
    "$(in_log 'msg="delivery dropped" sub=inside id=ok-in-1 ') $(got tls ok-in-1)"

# holes resolves to four addresses whose listen queues are full, so that
# connecting to any of them gets no answer: each connect gives up at the
# idle timeout (1 s), and the next address is tried, but the attempt as a
# whole ends at its deadline (1.5 s), not after a deadline per address (a
# duration is the behaviour under test: 4 s and more before).
HPORT=$(free_port)
python3 - $HPORT 127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5 > "$T/holes.out" 2>&1 <<'PY' &
import signal, socket, sys
port, held = int(sys.argv[1]), []
for a in sys.argv[2:]:
    l = socket.socket()
    l.bind((a, port))
    l.listen(0)
    held.append(l)
    for _ in range(3):		# fill the queue; never accepted
        c = socket.socket()
        c.setblocking(False)
        c.connect_ex((a, port))
        held.append(c)
print("ready", flush=True)
signal.pause()			# until the test ends and kills it
PY
PIDS+=($!)
wait_until 10 'grep -q ready "$T/holes.out"' || fail holes "the full listeners did not start"
kill $RELAY_PID; wait $RELAY_PID 2>/dev/null
TREATY_RELAY_SUBSCRIBERS='[{"name":"holes","url":"http://holes:'$HPORT'/in","secret":"'$S'","filter":"evt.*.holes.>","maxDeliver":1}]' \
    TREATY_RELAY_DELIVERY_IDLE_TIMEOUT_MS=1000 TREATY_RELAY_DELIVERY_TIMEOUT_MS=1500 \
    start_relay || { fail restart "relay did not start"; finish; }
post evt.acme.holes.thing.done hole-1 x
log_wait 20 'msg="delivery dropped" sub=holes id=hole-1'
check_match "four silent addresses: the attempt ends at its deadline" 'msg="delivery dropped" sub=holes id=hole-1 .*error=timeout' "$(cat "$RELAY_LOG")"
# Timed by the relay's own log stamps, from the delivery's first state
# change to its drop: curl, JetStream and this script's polling are not
# in it.
check_ms "  within 3 s of its start (1.5 s deadline; 1 s idle timeout per address)" \
    "$(log_gap_ms 'msg="delivery state" sub=holes id=hole-1 ' 'msg="delivery dropped" sub=holes id=hole-1 ')" 0 3000

# The same name with TREATY_RELAY_ALLOW_PRIVATE_NETWORKS=1: delivered over
# https to the pinned address, certificate checked against the name.
kill $RELAY_PID; wait $RELAY_PID 2>/dev/null
TREATY_RELAY_ALLOW_PRIVATE_NETWORKS=1 start_relay || { fail restart "relay did not start"; finish; }
post evt.acme.inside.thing.done ok-in-2 x
wait_until 10 'test "$(got tls ok-in-2)" -ge 1'
check "allowed private networks: delivered by name over https" 1 "$(got tls ok-in-2)"
# JetStream holds nothing more for the subscriber: ok-in-1 cannot come back.
check "the earlier drop stays dropped" "0 settled" "$(got tls ok-in-1) $(quiet relay-inside)"

# Plain http beyond the local hosts: a configuration error that names both
# ways out without TREATY_RELAY_ALLOW_PRIVATE_NETWORKS; with it, accepted
# for a name or a private address, and delivered only when the name
# resolves to private addresses only (never in clear to a public one).
# public.example has a public address after 127.0.0.1, where the receiver
# listens: refused as a whole, nothing is sent; were it not refused, the
# first address would take the event (and the test stays on loopback).
PRIV='[{"name":"intra","url":"http://intra.corp:'$RPORT'/in","secret":"'$S'","filter":"evt.*.intra.>"},
 {"name":"pub","url":"http://public.example:'$RPORT'/in","secret":"'$S'","filter":"evt.*.pub.>","maxDeliver":1}]'
out=$(TREATY_RELAY_SUBSCRIBERS=$PRIV NATS_URL=$NATS_URL_T "$RELAY_BIN" --check-config 2>&1)
check_match "plain http to a name, not allowed: exit 78 saying https or the setting" \
    '^78 .*field=\[0\]\.url detail=".*use https, or set TREATY_RELAY_ALLOW_PRIVATE_NETWORKS=1' "$? $out"
out=$(TREATY_RELAY_SUBSCRIBERS='[{"name":"p","url":"http://8.8.8.8/in","secret":"'$S'","filter":"evt.>"}]' \
    TREATY_RELAY_ALLOW_PRIVATE_NETWORKS=1 NATS_URL=$NATS_URL_T "$RELAY_BIN" --check-config 2>&1)
check_match "plain http to a public address, allowed networks: still exit 78" \
    '^78 .*field=\[0\]\.url detail="plain http goes to a private address or a name' "$? $out"
kill $RELAY_PID; wait $RELAY_PID 2>/dev/null
TREATY_RELAY_SUBSCRIBERS=$PRIV TREATY_RELAY_ALLOW_PRIVATE_NETWORKS=1 start_relay ||
    { fail restart "relay did not start with plain http to a name"; finish; }
post evt.acme.intra.thing.done ok-intra-1 x
post evt.acme.pub.thing.done ok-pub-1 x
wait_until 10 'test "$(got plain ok-intra-1)" -ge 1'
check "allowed private networks: plain http to a private name delivered" 1 "$(got plain ok-intra-1)"
check_match "plain http to a name resolving to a public address: refused" \
    'msg="delivery dropped" sub=pub id=ok-pub-1 .*error="public.example has a public address \(plain http: private only\)"' \
    "$(log_wait 10 'delivery dropped" sub=pub' && cat "$RELAY_LOG")"
check "  and not sent to its private address either" 0 "$(got plain ok-pub-1)"
finish
