#!/usr/bin/env bash
# make test: unit tests, then live tests; ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
log=$(mktemp)
test/run-unit.sh | tee "$log"
test/live/run.sh | tee -a "$log"
pass=$(grep -c '^ok - ' "$log")
failn=$(grep -c '^FAIL - ' "$log")
rm -f "$log"
echo "$pass passed, $failn failed"
[ "$failn" -eq 0 ]
