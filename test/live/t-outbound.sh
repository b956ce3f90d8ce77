#!/usr/bin/env bash
# Outbound HTTP(S) for push delivery: pinned address, Host/SNI/name check,
# keep-alive, deadlines, refused connections, untrusted certificates.  The
# certificates are made here with the openssl command line; the servers run
# inside build/test/outbound-check on 127.0.0.1.
. "$(dirname "$0")/lib.sh"
pki=$T/pki
make_pki "$pki" || { fail pki "could not make test certificates"; finish; }
timeout 60 "$ROOT/$O/test/outbound-check" "$pki/server.pem" "$pki/server.key" \
    "$pki/ca.pem" "$pki/other-ca.pem" 2>"$T/stderr"
rc=$?
# A crash or sanitizer report prints no FAIL line of its own.
[ $rc -eq 0 ] || { fail "outbound-check exit status" "$rc"; tail -20 "$T/stderr" >&2; }
finish
