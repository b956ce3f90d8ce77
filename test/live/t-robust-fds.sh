#!/usr/bin/env bash
# Out of file descriptors: the relay pauses accepting instead of spinning on
# accept() and flooding its log, keeps serving, and recovers by itself when
# clients leave.
. "$(dirname "$0")/lib.sh"
start_nats || { fail start "nats-server did not start"; finish; }

# The relay under a hard limit of 24 descriptors: it uses about 13 itself,
# and its connection cap is lowered to 16 (the least it lowers it to), so
# the descriptors run out before the cap is reached.
real=$RELAY_BIN
cat > "$T/relay-lowfd" <<WRAP
#!/usr/bin/env bash
ulimit -n 24
exec "$real" "\$@"
WRAP
chmod +x "$T/relay-lowfd"
RELAY_BIN=$T/relay-lowfd
start_relay || { fail start "relay did not start"; finish; }
check_match "the descriptor limit is logged" 'msg="descriptor limit" nofile=24' "$(cat "$RELAY_LOG")"

# cpu: the relay's user + system CPU ticks; "ERROR: ..." when it is gone
# (an empty reading made the difference 0 ticks: "no spin").
cpu() { awk '{print $14 + $15}' /proc/$RELAY_PID/stat 2>/dev/null || echo "ERROR: relay gone"; }
fds=()
for _ in $(seq 1 90); do
	exec {fd}<>/dev/tcp/127.0.0.1/$RELAY_PORT 2>/dev/null && fds+=($fd)
done
# Out of descriptors once it says so (instead of 0.5 s).
log_wait 10 'accept failed'
c0=$(cpu)
# CPU used over a window is what is measured: a fixed 3 s is right here.
# An accept loop spinning on EMFILE takes a whole core (3 s of CPU); a
# sanitizer build's ticks on a loaded machine stay far below 0.5 s.
sleep 3
c1=$(cpu)
hz=$(getconf CLK_TCK)
if [[ $c0 =~ ^[0-9]+$ && $c1 =~ ^[0-9]+$ ]] && relay_alive; then
	ticks=$((c1 - c0))
	if [ $ticks -lt $((hz / 2)) ]; then ok "no accept spin while out of descriptors ($ticks ticks in 3 s)"; else fail "no accept spin while out of descriptors" "$ticks ticks in 3 s"; fi
else
	fail "no accept spin while out of descriptors" "no CPU reading: [$c0] [$c1]"
fi
lines=$(grep -c 'accept failed' "$RELAY_LOG")
if [ "$lines" -ge 1 ] && [ "$lines" -le 10 ]; then ok "the pause is logged a few times ($lines)"; else fail "the pause is logged a few times" "$lines lines"; fi
check "no raw libevent lines" 0 "$(grep -Evc '^time=[^ ]+ level=' "$RELAY_LOG")"

for fd in "${fds[@]}"; do exec {fd}>&-; done
wait_until 10 healthz_ok
check "healthz 200 again once clients left" 200 "$(healthz_status)"
post evt.acme.shop.order.created fd-1 x
check "POST 202 again" 202 "$STATUS"
finish
