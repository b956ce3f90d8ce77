#!/usr/bin/env bash
# tls:// NATS URLs: the relay speaks TLS to NATS, verifies the server's
# chain and name, and never falls back to plaintext.  A throwaway CA and
# server certificate are made here with the openssl command line.
. "$(dirname "$0")/lib.sh"

pki=$T/pki
make_pki "$pki" || { fail pki "could not make test certificates"; finish; }

start_nats || { fail start "nats-server did not start"; finish; }
plain_url=tls://localhost:$NATS_PORT

# A plain server and a tls:// URL: no connection, never plaintext.
NATS_URL_RELAY=$plain_url NO_WAIT=1 start_relay
# nats.c gives up for good on a server that fails the first handshake
# (a plaintext fallback would have been that handshake): the relay says
# so, once, and exits 1 for a restart.
wait_until 20 '! relay_alive'
wait $RELAY_PID; rc=$?
check "tls:// to a plain server: closed for good, exit 1" "logged 1" "$(in_log 'msg="nats connection closed for good') $rc"
check "and says the connection is closed for good, once" 1 "$(grep -c 'msg="nats connection closed for good' "$RELAY_LOG")"
if grep -q 'msg="nats connected"' "$RELAY_LOG"; then fail "never connects in plaintext" "$(grep connected "$RELAY_LOG")"
else ok "never connects in plaintext"; fi

# The same server with TLS.
stop_nats
cat >> "$T/$NATS_NAME/nats.conf" <<CONF
tls { cert_file: "$pki/server.pem", key_file: "$pki/server.key" }
CONF
restart_nats || { fail restart "nats-server with TLS did not start"; finish; }

# Untrusted CA: the chain check fails, no connection.
NATS_URL_RELAY=$plain_url NO_WAIT=1 start_relay
# nats-server saw the handshake fail and the relay says the connection is
# closed for good, and exits 1.
wait_until 20 '! relay_alive'
wait $RELAY_PID; rc=$?
check "untrusted server certificate: no connection, exit 1" "logged logged 1" \
    "$(in_log 'TLS handshake error' "$T/$NATS_NAME/nats.log") $(in_log 'msg="nats connection closed for good') $rc"

# Trusted through SSL_CERT_FILE (OpenSSL's default verify paths).
export SSL_CERT_FILE=$pki/ca.pem
NATS_URL_RELAY=$plain_url start_relay || { fail tls "relay did not become healthy over TLS"; finish; }
check "trusted CA: healthz 200" 200 "$(healthz_status)"
post evt.acme.shop.order.created tls-1 over-tls
check "POST 202 over a TLS connection to NATS" 202 "$STATUS"
check "JetStream acknowledged it into WORK" 1 "$(metric 'treaty_relay_events_stored_total{stream="WORK"}')"
finish
