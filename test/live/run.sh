#!/usr/bin/env bash
# Run every live test (test/live/t-*.sh) and count their ok/FAIL lines.
set -u
cd "$(dirname "$0")/../.."
pass=0 failn=0
for t in test/live/t-*.sh; do
	[ -e "$t" ] || continue
	out=$(timeout 600 bash "$t" 2>"/tmp/treaty-live-stderr.$$")
	rc=$?
	printf '%s\n' "$out"
	p=$(printf '%s\n' "$out" | grep -c '^ok - ')
	f=$(printf '%s\n' "$out" | grep -c '^FAIL - ')
	if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL - $(basename "$t" .sh): exited $rc without a failed check"
		f=1
	fi
	if [ "$f" -gt 0 ]; then
		sed 's/^/# /' "/tmp/treaty-live-stderr.$$" | tail -30
	fi
	pass=$((pass + p)) failn=$((failn + f))
done
rm -f "/tmp/treaty-live-stderr.$$"
echo "live: $pass passed, $failn failed"
[ $failn -eq 0 ]
