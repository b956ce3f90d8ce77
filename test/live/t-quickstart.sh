#!/usr/bin/env bash
# treaty-relay-quickstart(7), run as its reader runs it: every command of
# its displays marked "qs:", in order, in this one shell (the page's
# variables, its background receiver and its umask carry from step to
# step), in the source tree or in a folder of its own as the mark says.
# Each command exits 0, and what it prints is what the page shows under
# it (a subsequence of the lines, the first and last alike, after
# normalize: times, replay ids, rates and runs of blanks vary from run to
# run).  A command that only looks (cat, grep, treaty admin status and
# drops) is asked again, 30 s at most, until it prints what is shown: what
# it shows happens in the background.
#
# What the page does as root to the machine is done here to a staging root
# ($R), without root, by these stand-ins and no other change to a command:
#   make        make -C <tree> DESTDIR=$R (and SANITIZE=1 under a
#               sanitizer build);
#   sudo        runs the command as the caller (-u USER dropped);
#   systemctl   enable --now, reload and disable --now treaty-relay run the
#               installed unit's ExecStart= and ExecReload= (their paths
#               under $R) and wait as systemd does: for the relay to be
#               ready, for the reload to be applied, for the exit;
#   nats-server the real one, on a free port (-p), its store (-sd) in $T;
# and /etc/treaty-relay/ reads $R/etc/treaty-relay/, 9000 a free port, the
# relay's port 8080 a free one (its PORT, and TREATY_URL for treaty).
# Then what the page says happened is checked where it happened: the
# relay that ran was the installed program, JetStream holds the one drop
# record, the configuration file stayed mode 640; the relay's exit status
# is the status of the page's last command (0).
. "$(dirname "$0")/lib.sh"
SAN=
[ "$O" = build/san ] && SAN=SANITIZE=1
PAGE=$ROOT/man/treaty-relay-quickstart.7
R=$T/root
QS=$T/qs
WORK=$T/work
mkdir -p "$QS" "$WORK"

# The page's displays: for each command, $QS/cmd.N (as a shell reads it),
# $QS/where.N (source or work) and $QS/shown.N (the output under it, a
# line the page continues with a final \ joined to the next).
python3 - "$PAGE" "$QS" <<'PY'
import re, sys
page, out = sys.argv[1], sys.argv[2]
def unroff(l):
    return l.replace('\\-', '-').replace('\\e', '\\').replace('\\&', '')
n, where, disp, lines = 0, None, None, open(page).read().split('\n')
i = 0
cmds = []
while i < len(lines):
    l = lines[i]
    m = re.match(r'^\.\\" qs: (source|work)$', l)
    if m:
        where = m.group(1)
    elif l.startswith('.Bd -literal') and where:
        block = []
        i += 1
        while not lines[i].startswith('.Ed'):
            block.append(unroff(lines[i]))
            i += 1
        j = 0
        while j < len(block):
            assert block[j].startswith('$ '), block[j]
            cmd = [block[j][2:]]
            heredoc = re.search(r"<<'?(\w+)'?", cmd[0])
            while cmd[-1].endswith('\\'):
                j += 1
                cmd.append(block[j].lstrip() if not heredoc else block[j])
            if heredoc:
                while block[j] != heredoc.group(1):
                    j += 1
                    cmd.append(block[j])
            j += 1
            shown = []
            while j < len(block) and not block[j].startswith('$ '):
                if shown and shown[-1].endswith('\\'):
                    shown[-1] = shown[-1][:-1] + block[j]
                else:
                    shown.append(block[j])
                j += 1
            cmds.append((where, '\n'.join(cmd), shown))
        where = None
    i += 1
for k, (w, c, s) in enumerate(cmds, 1):
    open(f'{out}/where.{k}', 'w').write(w)
    open(f'{out}/cmd.{k}', 'w').write(c + '\n')
    if s:
        open(f'{out}/shown.{k}', 'w').write('\n'.join(s) + '\n')
PY
N=$(ls "$QS"/cmd.* 2>/dev/null | wc -l)
check_match "the page has its commands (at least ten)" '^([1-9][0-9])$' "$N"

# normalize: what varies from one run to another in what a command prints.
normalize() {
	sed -E -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z/<time>/g' \
	    -e 's/\b[0-9a-f]{24}\b/<id>/g' -e 's/\b[0-9]+(\.[0-9]+)?\/s\b/<n>\/s/g' \
	    -e 's/[[:space:]]+/ /g' -e 's/ $//' "$1"
}
# same N: command N printed what the page shows (its shown lines in order
# among the printed ones, the first and the last alike).
same() {
	python3 - <(normalize "$QS/shown.$1") <(normalize "$QS/out.$1") <<'PY'
import sys
want = open(sys.argv[1]).read().splitlines()
got = open(sys.argv[2]).read().splitlines()
it = iter(got)
ok = bool(got) and want[0] == got[0] and want[-1] == got[-1] and all(w in it for w in want)
sys.exit(0 if ok else 1)
PY
}

# The stand-ins.  sudo: as the caller.
sudo() {
	[ "$1" = -u ] && shift 2
	"$@"
}
make() { command make -s -C "$ROOT" DESTDIR="$R" $SAN "$@"; }
# nats-server, started in the background by the page: the job is the
# server itself (exec), on the test's port, its store in $T.
NATS_PORT=$(free_port)
NATS_URL_T=nats://127.0.0.1:$NATS_PORT
nats-server() {
	local a=()
	[ "$BASHPID" != $$ ] || { echo "the page runs nats-server in the background" >&2; return 1; }
	while [ $# -gt 0 ]; do
		case $1 in
		-sd) a+=(-sd "$T/nats"); shift 2 ;;
		*) a+=("$1"); shift ;;
		esac
	done
	exec nats-server "${a[@]}" -p "$NATS_PORT" > "$T/nats.log" 2>&1
}
# unit_line KEY: KEY= of the installed treaty-relay.service, continuation
# lines joined, its paths under $R.
unit_line() {
	sed -e ':a' -e '/\\$/{N;s/\\\n//;ba' -e '}' "$R/etc/systemd/system/treaty-relay.service" |
	    sed -n "s/^$1=//p" |
	    sed -e "s|/usr/local/|$R/usr/local/|g" -e "s|/etc/treaty-relay/|$R/etc/treaty-relay/|g"
}
RELAY_PORT=$(free_port)
RELAY_URL=http://127.0.0.1:$RELAY_PORT
RELAY_LOG=$T/relay.$RELAY_PORT.log
export TREATY_URL=$RELAY_URL
reloads() { metric 'treaty_relay_config_reloads_total{result="ok"}'; }
systemctl() {
	local start before
	case "$*" in
	"enable --now treaty-relay")
		start=$(unit_line ExecStart)
		# shellcheck disable=SC2086
		NATS_URL=$NATS_URL_T PORT=$RELAY_PORT TREATY_RELAY_LISTEN=127.0.0.1 \
		    $start > "$RELAY_LOG" 2>&1 &
		RELAY_PID=$!
		PIDS+=("$RELAY_PID")
		# Type=notify: systemctl returns once the relay said READY=1,
		# which is when /healthz answers 200.
		wait_until 30 healthz_ok
		;;
	"reload treaty-relay")
		before=$(reloads) || return 1
		MAINPID=$RELAY_PID eval "$(unit_line ExecReload)" || return 1
		# systemctl reload returns once the relay said READY=1 again.
		wait_until 15 '[ "$(reloads)" -gt "$before" ]'
		;;
	"disable --now treaty-relay")
		kill -TERM "$RELAY_PID"
		wait "$RELAY_PID"
		;;
	*)
		echo "t-quickstart's systemctl: $*: not a command of the page" >&2
		return 1
		;;
	esac
}
export PATH=$R/usr/local/bin:$PATH
HOOK_PORT=$(free_port)

# attempt N: command N, in its folder, as the page has it but for the
# paths and ports above; its output in $QS/out.N, its status in $QS/rc.N.
attempt() {
	local cmd
	cmd=$(sed -e "s|/etc/treaty-relay/|$R/etc/treaty-relay/|g" \
	    -e "s/\b9000\b/$HOOK_PORT/g" "$QS/cmd.$1")
	case $(cat "$QS/where.$1") in
	source) cd "$ROOT" || return 1 ;;
	work) cd "$WORK" || return 1 ;;
	esac
	set +u
	eval "$cmd" > "$QS/out.$1" 2> "$T/cmd$1.err" < /dev/null
	echo $? > "$QS/rc.$1"
	set -u
	PIDS+=($(jobs -p))
	[ "$(cat "$QS/rc.$1")" = 0 ]
}
looks() { grep -qE '^(cat|grep|treaty admin (status|drops)) ' "$QS/cmd.$1"; }

for n in $(seq 1 "$N"); do
	name="command $n ($(head -1 "$QS/cmd.$n" | cut -c1-60))"
	if [ -f "$QS/shown.$n" ] && looks "$n"; then
		wait_until 30 "attempt $n && same $n"
	else
		attempt "$n"
	fi
	if [ "$(cat "$QS/rc.$n")" = 0 ]; then ok "$name: exit 0"
	else fail "$name: exit 0" "exit $(cat "$QS/rc.$n"): $(head -3 "$T/cmd$n.err")"; fi
	if [ -f "$QS/shown.$n" ]; then
		if same "$n"; then ok "$name: prints what the page shows"
		else fail "$name: prints what the page shows" "[$(cat "$QS/out.$n")] not [$(cat "$QS/shown.$n")]"; fi
	fi
	# The relay the unit started is the installed one, while it runs.
	if grep -q '^sudo systemctl enable' "$QS/cmd.$n"; then
		check "  the unit ran the installed treaty-relay" "$R/usr/local/bin/treaty-relay" \
		    "$(readlink "/proc/${RELAY_PID:-0}/exe" 2>&1 || echo 'ERROR: no relay')"
	fi
	# One drop recorded by the relay, in AUDIT, when the page shows it.
	if grep -q '^treaty admin drops' "$QS/cmd.$n"; then
		check "  AUDIT holds the one drop record" 1 "$(count AUDIT)"
	fi
done
cd "$ROOT" || exit 1
check "the configuration file the page wrote to is still mode 640" 640 \
    "$(stat -c %a "$R/etc/treaty-relay/env")"
finish
