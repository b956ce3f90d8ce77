#!/usr/bin/env bash
# What treaty says when it cannot get an answer, or gets a failure (issue
# 30): the URL it looked at and where that came from (the default when
# neither --url nor TREATY_URL is given), the errno text (connection
# refused) or the name that does not exist, in each retry notice and in
# the last message; a certificate it does not trust is no transient
# failure (OpenSSL's reason, exit 1, one attempt); after its retries, the
# relay's detail beside the status; a consumer's deletion retried.  Against a real relay and nats-server,
# the relay serving HTTPS with a self-signed certificate made here, and
# test/live/dns.py for the names (TREATY_DNS_SERVER).
. "$(dirname "$0")/lib.sh"
TR=$ROOT/$O/treaty
S=evt.acme.shop.order.created
TY=dev.shop.order.created.v1
unset TREATY_URL TREATY_CA_FILE TREATY_DNS_SERVER
export TREATY_TOKEN=$TOKEN
NOTICE='msg="attempt failed; retrying"'
FAST=(--retry-base 1 --retry-cap 2)

# pub NAME ARGS...: run NAME publish of one event (ARGS add --url, ...).
pub() {
	local name=$1
	shift
	run "$name" publish --subject $S --type $TY --source /cli --data x "$@"
}
# notices FILE: the retry notices in FILE.
notices() { grep -c "$NOTICE" "$1"; }

DPORT=$(free_port)
python3 "$ROOT/test/live/dns.py" $DPORT relay.example=127.0.0.1 &
PIDS+=($!)
# The relay's HTTPS: a self-signed certificate for 127.0.0.1 (no CA).
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$T/key.pem" -out "$T/cert.pem" 2>/dev/null ||
    { fail pki "openssl could not make the certificate"; finish; }
start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }
PLAIN_URL=$RELAY_URL PLAIN_PID=$RELAY_PID PLAIN_LOG=$RELAY_LOG

# --- connection refused: the URL, where it came from, the errno ---------
NOBODY=http://127.0.0.1:$(free_port)
TREATY_URL=$NOBODY pub ref-env --attempts 3 "${FAST[@]}"
check "connection refused: exit 75 after --attempts 3, 2 notices" "rc=75 notices=2" \
    "rc=$RC notices=$(notices "$T/ref-env.err")"
check "  each notice: the errno's text, the URL, TREATY_URL as its source" 2 \
    "$(grep -c "$NOTICE request=publish attempt=[12] result=\"connection refused\" url=$NOBODY url_from=TREATY_URL delay_ms=" "$T/ref-env.err")"
check "  the last message: the errno's text at the URL, from TREATY_URL" \
    "treaty: publish $S: still failing after 3 attempts: connection refused at $NOBODY (TREATY_URL)" \
    "$(grep '^treaty: ' "$T/ref-env.err")"
pub ref-flag --url "$NOBODY/prefix" --attempts 2 "${FAST[@]}"
check "--url: the URL as given, its source --url" \
    "rc=75 1 treaty: publish $S: still failing after 2 attempts: connection refused at $NOBODY/prefix" \
    "rc=$RC $(grep -c "result=\"connection refused\" url=$NOBODY/prefix url_from=--url " "$T/ref-flag.err") $(grep '^treaty: ' "$T/ref-flag.err")"
# A URL's userinfo may hold a password: never shown.
pub ref-user --url "http://someone:pass-word-1@${NOBODY#http://}" --attempts 2 "${FAST[@]}"
check "a URL's user:password@ is left out of the notice and the message" "rc=75 0 2" \
    "rc=$RC $(grep -c 'pass-word-1' "$T/ref-user.err") $(grep -c "at $NOBODY\$\|url=$NOBODY " "$T/ref-user.err")"
# Neither --url nor TREATY_URL: the default, said to be one.  Only when
# nothing listens on the default port of this machine.
if port_open 8080; then
	echo "# skip - $SUITE: the default URL: something listens on 127.0.0.1:8080"
else
	pub ref-default --attempts 2 "${FAST[@]}"
	check "no --url, no TREATY_URL: the default URL, said to be the default" \
	    "rc=75 1 treaty: publish $S: still failing after 2 attempts: connection refused at http://127.0.0.1:8080 (the default: no --url, and TREATY_URL is not set)" \
	    "rc=$RC $(grep -c 'result="connection refused" url=http://127.0.0.1:8080 url_from=default ' "$T/ref-default.err") $(grep '^treaty: ' "$T/ref-default.err")"
fi
# The other commands end the same way.
TREATY_URL=$NOBODY run adm-ref admin status --attempts 2 "${FAST[@]}"
check "admin status: the same last message" \
    "rc=75 treaty: admin: still failing after 2 attempts: connection refused at $NOBODY (TREATY_URL)" \
    "rc=$RC $(grep '^treaty: ' "$T/adm-ref.err")"
printf 'secret-0123456789abcdef\n' > "$T/secret"
TREATY_URL=$NOBODY run work-ref work --once --exec true --secret-file "$T/secret" "${FAST[@]}" box
check_match "work --once: its giving up says why and where" \
    "^rc=75 .*msg=\"poll failed; giving up \(--once\)\" attempts=8 result=\"connection refused at $NOBODY \(TREATY_URL\)\"" \
    "rc=$RC $(grep 'giving up' "$T/work-ref.err")"

# --- a name that does not exist: at once, exit 1, the name's URL ---------
export TREATY_DNS_SERVER=127.0.0.1:$DPORT
pub nx --url http://no-such-relay.example:$RELAY_PORT --attempts 3 "${FAST[@]}"
check "name not found: exit 1 at once (no retry), the URL named" \
    "rc=1 notices=0 treaty: publish $S: name not found at http://no-such-relay.example:$RELAY_PORT" \
    "rc=$RC notices=$(notices "$T/nx.err") $ERR"
# The control: a name dns.py knows reaches the relay the same way.
pub named --url http://relay.example:$RELAY_PORT --id named-1
check "a name the DNS server knows: stored (202)" 'rc=0 {"id":"named-1","duplicate":false}' "rc=$RC $OUT"
TREATY_DNS_SERVER=not-an-address pub dnsbad --url http://relay.example:$RELAY_PORT
check "TREATY_DNS_SERVER not ip[:port]: exit 1, the variable named" \
    "rc=1 treaty: TREATY_DNS_SERVER: must be ip[:port]" "rc=$RC $ERR"
unset TREATY_DNS_SERVER

# --- after the retries: the relay's detail, not only its status ---------
stop_nats
wait_until 15 healthz_503 || fail "NATS stopped" "the relay's /healthz did not turn 503"
pub det --url "$RELAY_URL" --attempts 2 "${FAST[@]}"
check "NATS down: exit 75, the relay's 503 with its detail" \
    "rc=75 treaty: publish $S: still failing after 2 attempts: 503: JetStream is not available; send it again with the same id" \
    "rc=$RC $(grep '^treaty: ' "$T/det.err")"
restart_nats || fail "nats-server" "did not restart"

# --- a deletion retried (test/live/status.py answers by a script) -------
: > "$T/st.log"
python3 "$ROOT/test/live/status.py" "$T/st.port" "$T/st.log" 2> "$T/st.stderr" &
PIDS+=($!)
wait_until 10 '[ -s "$T/st.port" ]' || { fail start "status.py did not start"; finish; }
SURL=http://127.0.0.1:$(cat "$T/st.port")
# dels KEY: the DELETEs status.py got for KEY.
dels() { awk -F'\t' -v k="$1" '$1 == k && $4 == "DELETE"' "$T/st.log" | wc -l; }
run del1 admin consumers --delete relay-old --url "$SURL/del1/503.404" "${FAST[@]}"
check "consumers --delete: 503, then 404: gone (the first may have deleted it), exit 0" \
    "rc=0 2 consumer relay-old is gone (perhaps deleted by an earlier attempt)" "rc=$RC $(dels del1) $OUT"
run del2 admin consumers --delete relay-old --url "$SURL/del2/404" "${FAST[@]}"
check "consumers --delete: 404 at the first attempt: exit 1, the relay's reason" \
    "rc=1 1 treaty: admin: 404: scripted 404" "rc=$RC $(dels del2) $ERR"
run del3 admin consumers --delete relay-old --url "$SURL/del3/503" --attempts 2 "${FAST[@]}"
check "consumers --delete: 503 every time: exit 75, the detail after the attempts" \
    "rc=75 2 treaty: admin: still failing after 2 attempts: 503: scripted 503" "rc=$RC $(dels del3) $(grep '^treaty: ' "$T/del3.err")"

# --- HTTPS with a certificate the client does not trust -----------------
kill -TERM "$PLAIN_PID"; wait "$PLAIN_PID" 2>/dev/null
TREATY_RELAY_TLS_CERT=$T/cert.pem TREATY_RELAY_TLS_KEY=$T/key.pem NO_WAIT=1 start_relay
wait_until 15 'curl -s -m 2 --cacert "$T/cert.pem" -o /dev/null "https://127.0.0.1:$RELAY_PORT/healthz"' ||
    { fail start "the TLS relay did not answer"; finish; }
TLS_URL=https://127.0.0.1:$RELAY_PORT
W=$(count WORK)
pub tls --url "$TLS_URL" --id tls-1 --attempts 3 "${FAST[@]}"
check "self-signed certificate: exit 1 after one attempt (no notice), OpenSSL's reason" \
    "rc=1 notices=0 treaty: publish $S: certificate verify failed: self-signed certificate at $TLS_URL" \
    "rc=$RC notices=$(notices "$T/tls.err") $ERR"
run tls-adm admin status --url "$TLS_URL" --attempts 3 "${FAST[@]}"
check "admin status: the same, exit 1" \
    "rc=1 notices=0 treaty: admin: certificate verify failed: self-signed certificate at $TLS_URL" \
    "rc=$RC notices=$(notices "$T/tls-adm.err") $ERR"
check "  nothing stored" "$W" "$(count WORK)"
# The control: the same certificate trusted with --ca-file, the event stored.
pub tls-ca --url "$TLS_URL" --id tls-2 --ca-file "$T/cert.pem"
check "the same relay with --ca-file of its certificate: 202" 'rc=0 {"id":"tls-2","duplicate":false}' "rc=$RC $OUT"
check_no_sanitizer_report "no sanitizer report" "$T"/*.err
finish
