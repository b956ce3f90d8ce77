#!/usr/bin/env bash
# A NATS cluster (three nats-servers on loopback with routes, JetStream on
# each), WORK and AUDIT with three replicas, the relay given all three
# URLs.  One server is stopped while 2,000 events are published and
# delivered: every event answered 202 is delivered at least once, and
# ingestion goes on within seconds.
. "$(dirname "$0")/lib.sh"
N=${CLUSTER_EVENTS:-2000}
CLUSTER_CONF="max_payload: 2MB" start_cluster || { fail cluster "a nats-server did not start"; finish; }

RPORT=$(free_port)
start_receiver $RPORT "$T/deliveries" || { fail receiver "did not start"; finish; }

export TREATY_RELAY_SUBSCRIBERS='[{"name":"hook","url":"http://127.0.0.1:'$RPORT'/in","secret":"test-secret-0123456789","filter":"evt.>","maxInFlight":256}]'
export TREATY_RELAY_REPLICAS=3 TREATY_RELAY_PUBLISH_TIMEOUT_MS=2000
NATS_URL_RELAY="nats://127.0.0.1:${ports[0]},nats://127.0.0.1:${ports[1]},nats://127.0.0.1:${ports[2]}"
NATS_URL_T=nats://127.0.0.1:${ports[1]}
NATS_URL_RELAY=$NATS_URL_RELAY start_relay || { fail start "relay not healthy on the cluster"; finish; }
check "WORK has three replicas" 3 "$("$JSGET" "$NATS_URL_T" info WORK | sed -n 's/^replicas=//p')"

# A producer that retries 503 with the same id, as SPEC 2 asks.
cat > "$T/produce" <<SH
#!/usr/bin/env bash
for try in \$(seq 1 60); do
	code=\$(curl -s -m 10 -o /dev/null -w '%{http_code}' -X POST "$RELAY_URL/v1/events/evt.acme.shop.order.created" \\
	    -H "Authorization: Bearer $TOKEN" -H 'ce-specversion: 1.0' -H "ce-id: c-\$1" \\
	    -H 'ce-source: /test' -H 'ce-type: dev.shop.order.created.v1' --data-binary x)
	if [ "\$code" = 202 ]; then echo "\$1" >> "$T/accepted"; exit 0; fi
	sleep 0.25
done
echo "\$1" >> "$T/gave-up"
SH
chmod +x "$T/produce"
seq 1 $N | xargs -P 8 -n 1 "$T/produce" &
prod=$!
# Stop one server (the one the relay is probably on first) part-way.
wait_until 60 'test "$(cat "$T/accepted" 2>/dev/null | wc -l)" -ge $((N / 3))'
kill -TERM ${cpids[0]}
wait $prod
check "every event accepted in the end (producer retries)" $N "$(wc -l < "$T/accepted")"
# From the stopped server's own stamp of its shutdown to the relay's of
# the first event it stored after it (the producers' curls and their
# clocks are not in it); a relay that does not recover stores nothing
# more (the producers give up after 60 tries).
check_ms "ingestion resumed within seconds of the server's shutdown, by the two logs' stamps" \
    "$(nats_gap_ms 'Initiating Shutdown' 'msg="event stored"' "$T/c0/nats.log")" 0 10000
wait_until 60 'test "$(grep -o "\"ce-id\": \"c-[0-9]*\"" "$T/deliveries" | sort -u | wc -l)" -ge $N'
check "every accepted event delivered at least once" $N "$(grep -o '"ce-id": "c-[0-9]*"' "$T/deliveries" | sort -u | wc -l)"
finish
