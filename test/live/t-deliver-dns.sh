#!/usr/bin/env bash
# Delivery by host name through the relay's own resolver (SPEC 3): every
# resolved address is validated and pinned; a name that resolves to a
# private or metadata address is refused unless private networks are
# allowed; when one address refuses the connection the next is tried in the
# same attempt.  Names come from test/live/dns.py, a DNS server on loopback
# that the relay uses through TREATY_RELAY_DNS_SERVER (no /etc/hosts).
. "$(dirname "$0")/lib.sh"
pki=$T/pki
make_pki "$pki" inside.example || { fail pki "could not make test certificates"; finish; }

DPORT=$(free_port)
python3 "$(dirname "$0")/dns.py" $DPORT hooks=127.0.0.2,127.0.0.1 \
    inside.example=127.0.0.1 meta.example=169.254.169.254 &
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
wait_for 10 grep -q 'msg="delivery dropped" sub=inside id=ok-in-1' "$RELAY_LOG"
wait_for 10 grep -q 'msg="delivery dropped" sub=meta id=ok-meta-1' "$RELAY_LOG"
check_match "a name resolving to 127.0.0.1 is refused" 'msg="delivery dropped" sub=inside id=ok-in-1 subject=evt.acme.inside.thing.done attempt=2 status=0 error="inside.example has a [a-z ]*address' "$(cat "$RELAY_LOG")"
check_match "a name resolving to 169.254.169.254 is refused" 'msg="delivery dropped" sub=meta id=ok-meta-1 .*error="meta.example has a [a-z -]*address' "$(cat "$RELAY_LOG")"
check "the refused address was never contacted" "logged 0" \
    "$(in_log 'msg="delivery dropped" sub=inside id=ok-in-1 ') $(got tls ok-in-1)"

# The same name with TREATY_RELAY_ALLOW_PRIVATE_NETWORKS=1: delivered over
# https to the pinned address, certificate checked against the name.
kill $RELAY_PID; wait $RELAY_PID 2>/dev/null
TREATY_RELAY_ALLOW_PRIVATE_NETWORKS=1 start_relay || { fail restart "relay did not start"; finish; }
post evt.acme.inside.thing.done ok-in-2 x
wait_until 10 'test "$(got tls ok-in-2)" -ge 1'
check "allowed private networks: delivered by name over https" 1 "$(got tls ok-in-2)"
# JetStream holds nothing more for the subscriber: ok-in-1 cannot come back.
check "the earlier drop stays dropped" "0 settled" "$(got tls ok-in-1) $(quiet relay-inside)"
finish
