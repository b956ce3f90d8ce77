#!/usr/bin/env bash
# SPEC 17: a breaker's probe that cannot be sent (its address refused
# before connecting, as a name that stops resolving would be) is a failed
# probe: the next one follows after its delay, and the subscriber does not
# stay tripped with nobody probing.  One relay: no other instance's lease
# lapse to rescue it.  The address is a numeric private one the relay
# refuses before connecting; nothing leaves the machine.
. "$(dirname "$0")/lib.sh"
start_nats || { fail start "nats-server did not start"; finish; }
export TREATY_RELAY_SUBSCRIBERS='[{"name":"far","url":"https://10.1.2.3/hook","secret":"0123456789abcdef0123","filter":"evt.*.shop.>","maxDeliver":100,"breaker":{"failures":2}}]'
export TREATY_RELAY_RETRY_BASE_MS=200 TREATY_RELAY_RETRY_MAX_MS=400
start_relay || { fail relay "did not start"; finish; }

post evt.local.shop.order.created unsent-1 x
check "stored" 202 "$STATUS"
check "tripped after 2 refused attempts" 0 \
    "$(log_wait 30 'msg="subscriber state" sub=far state=tripped'; echo $?)"
check "the first probe, not sent, counted failed" 0 \
    "$(log_wait 30 'msg="breaker probe" sub=far n=1 status=0'; echo $?)"
# Its next delay is drawn in [5, 10] s; 40 s is room on a loaded machine.
check "a second probe follows it" 0 \
    "$(log_wait 40 'msg="breaker probe" sub=far n=2 sending=1'; echo $?)"
check "the relay refused the address, never connected" logged \
    "$(in_log 'msg="delivery failed" sub=far .*error=')"
check_no_sanitizer_report "no sanitizer report" "$RELAY_LOG"
finish
