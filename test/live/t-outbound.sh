#!/usr/bin/env bash
# Outbound HTTP(S) for push delivery: pinned address, Host/SNI/name check,
# keep-alive, deadlines, refused connections, untrusted certificates.  The
# certificates are made here with the openssl command line; the servers run
# inside build/test/outbound-check on 127.0.0.1.
. "$(dirname "$0")/lib.sh"
pki=$T/pki
mkdir -p "$pki"
mkca() {
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$1" \
	    -keyout "$pki/$1.key" -out "$pki/$1.pem" 2>/dev/null
}
mkca test-ca
mkca other-ca
openssl req -newkey rsa:2048 -nodes -subj /CN=localhost \
    -keyout "$pki/server.key" -out "$pki/server.csr" 2>/dev/null
printf 'subjectAltName=DNS:localhost\n' > "$pki/ext"
openssl x509 -req -in "$pki/server.csr" -CA "$pki/test-ca.pem" \
    -CAkey "$pki/test-ca.key" -CAcreateserial -days 2 -extfile "$pki/ext" \
    -out "$pki/server.pem" 2>/dev/null
[ -s "$pki/server.pem" ] || { fail pki "could not make test certificates"; finish; }
timeout 60 "$ROOT/$O/test/outbound-check" "$pki/server.pem" "$pki/server.key" \
    "$pki/test-ca.pem" "$pki/other-ca.pem" 2>"$T/stderr"
rc=$?
# A crash or sanitizer report prints no FAIL line of its own.
[ $rc -eq 0 ] || { fail "outbound-check exit status" "$rc"; tail -20 "$T/stderr" >&2; }
finish
