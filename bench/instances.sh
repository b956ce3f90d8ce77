#!/usr/bin/env bash
# bench/instances.sh: one relay against two with --reuseport on one port
# (SPEC 12), wrk -t2 -c64 -d10s, one nats-server; the figures of
# docs/BENCHMARKS.md, "Several instances per host".
cd "$(dirname "$0")/.."
O=${O:-build}
T=$(mktemp -d /tmp/inst.XXXXXX)
NP=$((20000 + RANDOM % 5000)); RP=$((25000 + RANDOM % 5000)); C1=$((30000 + RANDOM % 1000)); C2=$((31000 + RANDOM % 1000))
printf 'listen: 127.0.0.1:%s\nmax_payload: 2MB\njetstream { store_dir: "%s/js" }\n' $NP $T > $T/nats.conf
nats-server -c $T/nats.conf > $T/nats.log 2>&1 & N=$!
for i in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$NP) 2>/dev/null && break; sleep 0.1; done
export BENCH_TOKEN=bench-token-0123456789
SHA=$(printf '%s' "$BENCH_TOKEN" | sha256sum | cut -c1-64)
start() { NATS_URL=nats://127.0.0.1:$NP PORT=$RP TREATY_RELAY_LISTEN=127.0.0.1 \
 TREATY_RELAY_PRODUCERS='[{"name":"bench","tokenSha256":"'$SHA'","subjects":["evt.bench.>"]}]' \
 "$O/treaty-relay" --reuseport --control-listen 127.0.0.1:$1 > $T/relay.$1.log 2>&1 & echo $!; }
ready() { for i in $(seq 100); do curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$1/healthz | grep -q 200 && return 0; sleep 0.1; done; return 1; }
A=$(start $C1); ready $C1
echo "one: $(wrk -t2 -c64 -d10s --latency -s bench/ingest.lua http://127.0.0.1:$RP/ one | grep -E 'Requests/sec|99%' | tr -s ' ' | tr '\n' ' ')"
B=$(start $C2); ready $C2
echo "two: $(wrk -t2 -c64 -d10s --latency -s bench/ingest.lua http://127.0.0.1:$RP/ two | grep -E 'Requests/sec|99%' | tr -s ' ' | tr '\n' ' ')"
kill $B; wait $B 2>/dev/null
echo "one again: $(wrk -t2 -c64 -d10s --latency -s bench/ingest.lua http://127.0.0.1:$RP/ one2 | grep -E 'Requests/sec|99%' | tr -s ' ' | tr '\n' ' ')"
kill $A $N; wait 2>/dev/null; rm -rf $T
