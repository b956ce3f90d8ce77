#!/usr/bin/env bash
# The relay reads the server's max_payload when it connects and answers 413
# too_large (never 503) for an event that could not be stored (SPEC 2).
. "$(dirname "$0")/lib.sh"
start_nats || { fail start "nats-server did not start"; finish; }
# Restart the server with a 64 KiB max_payload, far below the 1 MiB limit.
stop_nats
sed -i 's/max_payload: 2MB/max_payload: 64KB/' "$T/$NATS_NAME/nats.conf"
restart_nats
start_relay || { fail start "relay did not start"; finish; }

head -c 100000 /dev/zero | tr '\0' 'a' > "$T/big"
post evt.acme.shop.order.created mp-1 "@$T/big"
check "100 kB body over a 64 KiB max_payload is 413" 413 "$STATUS"
check "error code too_large" too_large "$(json_get error)"
check "nothing stored" "" "$("$JSGET" "$NATS_URL_T" last WORK evt.acme.shop.order.created 2>/dev/null)"
post evt.acme.shop.order.created mp-2 small
check "a small event is still 202" 202 "$STATUS"
finish
