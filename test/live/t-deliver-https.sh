#!/usr/bin/env bash
# https delivery: chain and host name verified, SNI sent, a private CA
# through TREATY_RELAY_CA_FILE; a wrong name is a failed delivery (dropped
# after maxDeliver), not a crash.  Certificates made here with openssl.
. "$(dirname "$0")/lib.sh"
pki=$T/pki
make_pki "$pki" || { fail pki "could not make test certificates"; finish; }

RPORT=$(free_port)
start_receiver $RPORT "$T/deliveries" "$pki/server.pem" "$pki/server.key" || { fail receiver "did not start"; finish; }
received() { grep -F "\"ce-id\": \"$1\"" "$T/deliveries" 2>/dev/null; }

S=test-secret-0123456789
export TREATY_RELAY_SUBSCRIBERS='[
 {"name":"tls","url":"https://localhost:'$RPORT'/in","secret":"'$S'","filter":"evt.*.shop.order.created"},
 {"name":"wrongname","url":"https://127.0.0.1:'$RPORT'/in","secret":"'$S'","filter":"evt.*.shop.order.wrong","maxDeliver":2}]'
export TREATY_RELAY_CA_FILE=$pki/ca.pem TREATY_RELAY_RETRY_BASE_MS=100
start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }

post evt.acme.shop.order.created tls-1 'over tls'
wait_until 10 'test -n "$(received tls-1)"'
check "delivered over https with the private CA" 1 "$(received tls-1 | wc -l)"
check_match "with its signature" '"x-treaty-signature": "t=[0-9]+,v1=[0-9a-f]{64}"' "$(received tls-1)"
# SPEC 10: the address is pinned, and the name still sent (SNI) and checked.
check "the handshake sent the URL's host name as SNI" localhost "$(sort -u "$T/deliveries.sni" 2>&1)"

post evt.acme.shop.order.wrong wrong-1 x
log_wait 10 'msg="delivery dropped" sub=wrongname'
# The drop (after maxDeliver) is the witness that no attempt is left.
check "a certificate for another name: never delivered" "logged []" \
    "$(in_log 'msg="delivery dropped" sub=wrongname id=wrong-1 ') [$(received wrong-1)]"
check_match "it counts as failed attempts, then a drop" 'msg="delivery dropped" sub=wrongname id=wrong-1 subject=evt.acme.shop.order.wrong attempt=2 status=0' "$(cat "$RELAY_LOG")"
check "the relay is still healthy" 200 "$(healthz_status)"
check "and an address in the URL: no SNI (RFC 6066 has none for addresses)" "- localhost" \
    "$(sort -u "$T/deliveries.sni" | tr '\n' ' ' | sed 's/ $//')"
finish
