#!/usr/bin/env bash
# run-local.sh: what `make run` runs after building.  Starts a local
# nats-server (etc/nats-server.conf, JetStream store in run/nats) unless one
# already listens on 127.0.0.1:4222, then the relay ($O/treaty-relay) with
# etc/demo.env, waits until /healthz answers 200, prints a curl command that
# publishes an event, and stays in the foreground until Ctrl-C.  On the way
# out it stops the relay and the nats-server it started (never one it
# found running).
#
#   O=build scripts/run-local.sh     (O: the build folder, default build)
# cleanup and stop run from traps, which shellcheck cannot follow.
# shellcheck disable=SC2317
set -u

cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
O=${O:-build}
RELAY=$ROOT/$O/treaty-relay
RUN=$ROOT/run
NATS_PORT=4222
NATS_WAIT=10		# seconds for nats-server to listen
READY_WAIT=30		# seconds for /healthz to answer 200

RELAY_PID="" NATS_PID=""

say() { printf 'run-local: %s\n' "$*" >&2; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# stop PID SECONDS: SIGTERM, then SIGKILL after SECONDS.
stop() {
	local pid=$1 n=$(($2 * 10))
	kill -TERM "$pid" 2>/dev/null || return 0
	while [ "$n" -gt 0 ] && kill -0 "$pid" 2>/dev/null; do
		sleep 0.1
		n=$((n - 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		say "process $pid did not stop, killing it"
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
}

cleanup() {
	trap - INT TERM EXIT
	# The relay first: it finishes its publishes and drains NATS (grace
	# period 10 s plus the drain) before its server goes away.
	if [ -n "$RELAY_PID" ]; then
		say "stopping the relay"
		stop "$RELAY_PID" 20
	fi
	if [ -n "$NATS_PID" ]; then
		say "stopping nats-server"
		stop "$NATS_PID" 10
	fi
}
trap cleanup EXIT
trap 'exit 0' INT TERM

# Children run in their own session (setsid) so that Ctrl-C reaches only
# this script, which then stops them in order.
detach=""
command -v setsid >/dev/null 2>&1 && detach=setsid

if [ ! -x "$RELAY" ]; then
	say "$RELAY not found: run make first (or make run)"
	exit 1
fi
command -v nats-server >/dev/null 2>&1 || {
	say "nats-server not found: scripts/install-deps.sh installs it"
	exit 1
}
mkdir -p "$RUN/nats"

if port_open $NATS_PORT; then
	say "something already listens on 127.0.0.1:$NATS_PORT: using it" \
	    "(it needs JetStream enabled)"
else
	say "starting nats-server on 127.0.0.1:$NATS_PORT" \
	    "(store run/nats, log run/nats-server.log)"
	$detach nats-server -c "$ROOT/etc/nats-server.conf" -sd "$RUN/nats" \
	    >>"$RUN/nats-server.log" 2>&1 &
	NATS_PID=$!
	n=$((NATS_WAIT * 10))
	until port_open $NATS_PORT; do
		if ! kill -0 "$NATS_PID" 2>/dev/null || [ $n -le 0 ]; then
			say "nats-server did not start; the end of run/nats-server.log:"
			tail -n 15 "$RUN/nats-server.log" >&2
			NATS_PID=""
			exit 1
		fi
		sleep 0.1
		n=$((n - 1))
	done
fi

set -a
# shellcheck source=etc/demo.env
. "$ROOT/etc/demo.env"
set +a

if port_open "$PORT"; then
	say "something already listens on port $PORT: stop it, or change PORT" \
	    "in etc/demo.env"
	exit 1
fi

say "starting $O/treaty-relay on http://$TREATY_RELAY_LISTEN:$PORT (its log follows)"
$detach "$RELAY" &
RELAY_PID=$!
URL=http://$TREATY_RELAY_LISTEN:$PORT

n=$((READY_WAIT * 10))
until [ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' "$URL/healthz")" = 200 ]; do
	if ! kill -0 "$RELAY_PID" 2>/dev/null; then
		wait "$RELAY_PID"
		say "the relay exited with status $? before it was ready"
		RELAY_PID=""
		exit 1
	fi
	if [ $n -le 0 ]; then
		say "the relay was not healthy after ${READY_WAIT}s:" \
		    "$(curl -s -m 2 "$URL/healthz")"
		exit 1
	fi
	sleep 0.1
	n=$((n - 1))
done

cat >&2 <<EOF

treaty-relay is ready at $URL (producer "demo", token demo-token-change-me).
Publish an event (paste this into another terminal; expect HTTP 202):

curl -sS -i -X POST $URL/v1/events/evt.local.demo.order.created \\
  -H 'Authorization: Bearer demo-token-change-me' \\
  -H 'ce-specversion: 1.0' \\
  -H "ce-id: \$(date +%s%N)" \\
  -H 'ce-source: /local/demo' \\
  -H 'ce-type: dev.demo.order.created.v1' \\
  -H 'Content-Type: application/json' \\
  -d '{"order":1}'; echo

Then take it from the demo inbox under a 30 s lease (and DELETE it with
the receipt to acknowledge it, see treaty-relay(8), PULL INBOXES):

curl -s -H 'Authorization: Bearer demo-inbox-token-change-me' \\
  '$URL/v1/inbox/demo?lease=true&wait=5000'; echo

Or the same with the treaty client (man/treaty.1): publish, then work
through the inbox into a local file (verified, fsynced, acknowledged):

TREATY_URL=$URL TREATY_TOKEN=demo-token-change-me $PWD/$O/treaty publish \\
  --subject evt.local.demo.order.created --type dev.demo.order.created.v1 \\
  --source /local/demo --content-type application/json --data '{"order":2}'
printf 'demo-secret-change-me-0123\\n' > /tmp/demo.secret
TREATY_URL=$URL TREATY_TOKEN=demo-inbox-token-change-me $PWD/$O/treaty work \\
  --secret-file /tmp/demo.secret --inbox /tmp/demo.jsonl --once --wait 5000 demo

What each subscriber is owed (the operations API, treaty-relay(8)):

TREATY_URL=$URL TREATY_TOKEN=demo-admin-token-change-me $PWD/$O/treaty admin status

Health: curl -s $URL/healthz    Metrics: curl -s $URL/metrics
Press Ctrl-C to stop the relay${NATS_PID:+ and nats-server}.

EOF

# In the foreground until Ctrl-C (the trap) or until the relay exits.
wait "$RELAY_PID"
rc=$?
RELAY_PID=""
say "the relay exited with status $rc"
exit "$rc"
