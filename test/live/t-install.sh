#!/usr/bin/env bash
# make install and uninstall into a staging root (DESTDIR), and the units
# they ship (SPEC 11, 12): both run the relay with --config and reload with
# SIGHUP, the template shares the port and conflicts with the single unit;
# systemd-analyze verify is clean with the installed paths, and
# systemd-analyze security rates both at most 1.8.  Where things go:
# LIBDIR (a multiarch one here), UNITDIR and the other systemd folders
# (/etc for PREFIX=/opt/treaty, /usr/lib for PREFIX=/usr, or as given);
# install lists every path it installed, DESTDIR included.  The user: the
# units' User= and Group= are the sysusers.d file's, which systemd-sysusers
# makes in the staging root, and then systemd-tmpfiles gives the
# configuration file that group, mode 640.
. "$(dirname "$0")/lib.sh"
SAN=
[ "$O" = build/san ] && SAN=SANITIZE=1
R=$T/root
MA=$(cc -print-multiarch 2>/dev/null)
MA=${MA:-multiarch}
LIB=/opt/treaty/lib/$MA

# files ROOT: every file and link under ROOT, relative, sorted.
files() { (cd "$1" && find . \( -type f -o -type l \) | sed 's|^\./||' | LC_ALL=C sort); }
# listed OUT: the paths an install's output lists, sorted.
listed() { sed -n 's|^  /|/|p' "$1" | LC_ALL=C sort; }

# Under a strict umask: what install makes must still be readable by all.
(umask 077; make -s -C "$ROOT" install DESTDIR="$R" PREFIX=/opt/treaty LIBDIR=$LIB $SAN) > "$T/install.out" 2>&1
check "make install DESTDIR=.. PREFIX=/opt/treaty LIBDIR=../$MA (umask 077): exit 0" 0 "$?"
want="etc/sysctl.d/60-treaty-relay.conf
etc/systemd/system/treaty-relay.service
etc/systemd/system/treaty-relay@.service
etc/sysusers.d/treaty-relay.conf
etc/tmpfiles.d/treaty-relay.conf
etc/treaty-relay/env
etc/treaty-relay/env.example
opt/treaty/bin/treaty
opt/treaty/bin/treaty-relay
opt/treaty/include/treaty.h
${LIB#/}/libtreaty.a
${LIB#/}/libtreaty.so
${LIB#/}/libtreaty.so.0
${LIB#/}/pkgconfig/libtreaty.pc
opt/treaty/share/man/man1/treaty.1
opt/treaty/share/man/man3/libtreaty.3
opt/treaty/share/man/man7/treaty-relay-quickstart.7
opt/treaty/share/man/man8/treaty-relay.8"
check "every file in its place: the library in LIBDIR, systemd's files in /etc" "$want" "$(files "$R")"
check "install lists every path it installed, under DESTDIR" "$(files "$R" | sed "s|^|$R/|")" "$(listed "$T/install.out")"
check "  and says where it wrote the configuration file" \
    "make install: wrote $R/etc/treaty-relay/env (everything commented out)" \
    "$(grep '^make install: wrote' "$T/install.out")"
check "the configuration file: mode 640 (not world-readable)" 640 "$(stat -c %a "$R/etc/treaty-relay/env")"
check "the files install writes itself (.pc, units, man page) are 644 whatever the umask" \
    "644 644 644 644" "$(stat -c %a "$R$LIB/pkgconfig/libtreaty.pc" \
    "$R"/etc/systemd/system/treaty-relay*.service "$R/opt/treaty/share/man/man8/treaty-relay.8" | paste -sd' ')"
check "treaty-relay(8) FILES names PREFIX's program" ".It Pa /opt/treaty/bin/treaty-relay" \
    "$(grep -F '.It Pa /opt/treaty/bin/treaty-relay' "$R/opt/treaty/share/man/man8/treaty-relay.8")"
check "  and the relay reads it as it is (all commented out)" \
    "configuration ok: 0 producers, 0 subscribers" \
    "$(env -u TREATY_RELAY_PRODUCERS "$RELAY_BIN" --config "$R/etc/treaty-relay/env" --check-config 2>&1)"
for u in treaty-relay.service treaty-relay@.service; do
	f=$R/etc/systemd/system/$u
	check "$u: ExecStart runs PREFIX's relay with --config" \
	    "ExecStart=/opt/treaty/bin/treaty-relay --config /etc/treaty-relay/env" \
	    "$(grep '^ExecStart=' "$f" | sed 's/ \\$//')"
	check "$u: no restart on bad configuration (78) or a bad command line (2)" \
	    "RestartPreventExitStatus=78 2" "$(grep '^RestartPreventExitStatus=' "$f")"
	check "$u: ExecReload sends SIGHUP (SPEC 11); no EnvironmentFile=" \
	    'ExecReload=/bin/kill -HUP $MAINPID|0' \
	    "$(grep '^ExecReload=' "$f" | paste -sd'|')|$(grep -c '^EnvironmentFile=' "$f")"
done
check "the template shares the port, its control port is the instance name" \
    "--reuseport --control-listen 127.0.0.1:%i" \
    "$(grep -A1 '^ExecStart=' "$R/etc/systemd/system/treaty-relay@.service" | tail -1 | sed 's/^ *//')"
# One user for both units and the configuration file: sysusers.d's.
sysuser=$(sed -n 's/^u \([^ ]*\) .*/\1/p' "$R/etc/sysusers.d/treaty-relay.conf")
check "sysusers.d makes the user treaty-relay, no home, no login" \
    'u treaty-relay - "treaty-relay" /nonexistent /usr/sbin/nologin' \
    "$(grep '^u ' "$R/etc/sysusers.d/treaty-relay.conf")"
for u in treaty-relay.service treaty-relay@.service; do
	f=$R/etc/systemd/system/$u
	check "$u: runs as sysusers.d's user and group, not a DynamicUser=" \
	    "User=$sysuser|Group=$sysuser|0" \
	    "$(grep -E '^(User|Group)=' "$f" | paste -sd'|')|$(grep -c '^DynamicUser=' "$f")"
done
check "tmpfiles.d gives the configuration file that group, mode 640" \
    "z /etc/treaty-relay/env 0640 root $sysuser -" "$(grep '^z ' "$R/etc/tmpfiles.d/treaty-relay.conf")"
check "the template conflicts with the single unit (one port, two ways)" \
    "Conflicts=treaty-relay.service" "$(grep '^Conflicts=' "$R/etc/systemd/system/treaty-relay@.service")"
check "libtreaty.pc names PREFIX and LIBDIR" "prefix=/opt/treaty|libdir=\${prefix}/lib/$MA" \
    "$(head -2 "$R$LIB/pkgconfig/libtreaty.pc" | paste -sd'|')"
check "pkg-config reads it" "-I/opt/treaty/include -L$LIB -ltreaty" \
    "$(PKG_CONFIG_PATH=$R$LIB/pkgconfig pkg-config --cflags --libs libtreaty | sed 's/ *$//')"

# libtreaty(3)'s example, built as its page says, with pkg-config (the
# staging root standing in for /), and run against the installed .so.
sed -n '/^\/\* example: verify.c \*\/$/,/^\/\* end of example \*\/$/p' "$ROOT/man/libtreaty.3" |
    sed 's/\\e/\\/g' > "$T/verify.c"
case $O in *san*) SANCC="-fsanitize=address,undefined" ;; *) SANCC= ;; esac
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror $SANCC -o "$T/verify" "$T/verify.c" \
    $(PKG_CONFIG_PATH=$R$LIB/pkgconfig PKG_CONFIG_SYSROOT_DIR=$R pkg-config --cflags --libs libtreaty) \
    2> "$T/cc.err"
check "libtreaty(3)'s example builds with pkg-config --cflags --libs libtreaty" "0 []" "$? [$(head -3 "$T/cc.err")]"
secret=example-secret-0123456789 body='{"n":1}' now=$(date +%s)
sig="t=$now,v1=$(printf '%s' "$now.ex-1.$body" | openssl dgst -sha256 -hmac "$secret" -r | cut -d' ' -f1)"
check "and runs against the installed libtreaty.so" "genuine libtreaty.so.0" \
    "$(printf '%s' "$body" | LD_LIBRARY_PATH=$R$LIB TREATY_SECRET=$secret "$T/verify" "$sig" ex-1 2>&1) $(LD_LIBRARY_PATH=$R$LIB ldd "$T/verify" | grep -o 'libtreaty.so.0 => [^ ]*'"$R"'[^ ]*' | cut -d' ' -f1)"

# systemd-analyze, on the units as installed, with the paths they name
# (the staging root's, for the check).
if command -v systemd-analyze >/dev/null; then
	mkdir -p "$T/units"
	for u in treaty-relay.service treaty-relay@.service; do
		sed "s|/opt/treaty/|$R/opt/treaty/|g" "$R/etc/systemd/system/$u" > "$T/units/$u"
		out=$(cd "$T/units" && MANPATH=$R/opt/treaty/share/man systemd-analyze verify "./$u" 2>&1)
		check "$u: systemd-analyze verify is clean" "0 []" "$? [$out]"
		sec=$(systemd-analyze security --offline=yes "$T/units/$u" 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
		check_match "$u: systemd-analyze security at most 1.8 (got $sec)" '^(0\.[0-9]|1\.[0-8])$' "$sec"
	done
	# systemd applies an instance's Conflicts= both ways: loaded with an
	# instance, the single unit is ConflictedBy= it, so starting it stops
	# the instance as starting the instance stops it.  (A Conflicts= in the
	# single unit naming the template would mean treaty-relay@treaty-relay.)
	deps=$(cd "$T/units" && MANPATH=$R/opt/treaty/share/man SYSTEMD_LOG_LEVEL=debug \
	    systemd-analyze verify ./treaty-relay.service ./treaty-relay@9101.service 2>&1 |
	    grep -oE 'Conflict(s|edBy): treaty-relay[^ ]*' | LC_ALL=C sort -u | paste -sd'|')
	check "systemd: the instance Conflicts= the single unit, which is ConflictedBy= it" \
	    "ConflictedBy: treaty-relay@9101.service|Conflicts: treaty-relay.service" "$deps"
else
	echo "# skip - $SUITE: systemd-analyze is not installed"
fi

# A second install keeps the operator's configuration file.
echo "# mine" >> "$R/etc/treaty-relay/env"
make -s -C "$ROOT" install DESTDIR="$R" PREFIX=/opt/treaty LIBDIR=$LIB $SAN > /dev/null 2>&1
check "a second install keeps /etc/treaty-relay/env" "# mine" "$(tail -1 "$R/etc/treaty-relay/env")"
make -s -C "$ROOT" uninstall DESTDIR="$R" PREFIX=/opt/treaty LIBDIR=$LIB $SAN > "$T/uninstall.out" 2>&1
check "make uninstall: exit 0" 0 "$?"
check "  leaves only the operator's configuration file" "etc/treaty-relay/env" "$(files "$R")"

# A package's install (PREFIX=/usr): systemd's files under /usr/lib, the
# units' ExecStart= and the manual's FILES with /usr's paths, an admin's
# drop-in still under /etc.
R2=$T/root2
make -s -C "$ROOT" install DESTDIR="$R2" PREFIX=/usr $SAN > "$T/install2.out" 2>&1
check "make install DESTDIR=.. PREFIX=/usr: exit 0" 0 "$?"
want="etc/treaty-relay/env
etc/treaty-relay/env.example
usr/bin/treaty
usr/bin/treaty-relay
usr/include/treaty.h
usr/lib/libtreaty.a
usr/lib/libtreaty.so
usr/lib/libtreaty.so.0
usr/lib/pkgconfig/libtreaty.pc
usr/lib/sysctl.d/60-treaty-relay.conf
usr/lib/systemd/system/treaty-relay.service
usr/lib/systemd/system/treaty-relay@.service
usr/lib/sysusers.d/treaty-relay.conf
usr/lib/tmpfiles.d/treaty-relay.conf
usr/share/man/man1/treaty.1
usr/share/man/man3/libtreaty.3
usr/share/man/man7/treaty-relay-quickstart.7
usr/share/man/man8/treaty-relay.8"
check "  every file in its place: units, sysusers.d, tmpfiles.d, sysctl.d under /usr/lib" "$want" "$(files "$R2")"
check "  and listed, under DESTDIR" "$(files "$R2" | sed "s|^|$R2/|")" "$(listed "$T/install2.out")"
check "  ExecStart= runs /usr/bin/treaty-relay" "ExecStart=/usr/bin/treaty-relay --config /etc/treaty-relay/env" \
    "$(grep '^ExecStart=' "$R2/usr/lib/systemd/system/treaty-relay.service")"
m8=$R2/usr/share/man/man8/treaty-relay.8
check "  treaty-relay(8) FILES names the units, sysusers.d and tmpfiles.d where they are" \
    "4 0" "$(grep -cE '^\.It Pa /usr/lib/(systemd/system/treaty-relay(@)?\.service|sysusers\.d/treaty-relay\.conf|tmpfiles\.d/treaty-relay\.conf)$' "$m8") \
$(grep -cE '^\.It Pa /etc/(systemd/system|sysusers\.d|tmpfiles\.d)/' "$m8")"
check "  and an example's drop-in stays in /etc/systemd/system" 1 \
    "$(grep -c '^# /etc/systemd/system/treaty\\-relay.service.d/override.conf$' "$m8")"

# What a package's scripts run after unpacking, in the staging root:
# systemd-sysusers makes the user from the file, then systemd-tmpfiles
# gives the configuration file its group.  Both change only files under
# --root, but they lock and chown there: root only.
if [ "$(id -u)" = 0 ] && command -v systemd-sysusers >/dev/null &&
    command -v systemd-tmpfiles >/dev/null; then
	systemd-sysusers --root="$R2" > "$T/sysusers.out" 2>&1
	check "systemd-sysusers --root: the user treaty-relay, no home, no login" \
	    "0 treaty-relay:/nonexistent:/usr/sbin/nologin" \
	    "$? $(awk -F: '$1 == "treaty-relay" { print $1 ":" $6 ":" $7 }' "$R2/etc/passwd" 2>&1)"
	gid=$(awk -F: '$1 == "treaty-relay" { print $3 }' "$R2/etc/group")
	systemd-tmpfiles --root="$R2" --create > "$T/tmpfiles.out" 2>&1
	check "systemd-tmpfiles --root --create: the configuration file is root:treaty-relay, mode 640" \
	    "0 640 0:${gid:-ERROR: no group treaty-relay}" \
	    "$? $(stat -c '%a %u:%g' "$R2/etc/treaty-relay/env")"
else
	echo "# skip - $SUITE: systemd-sysusers and systemd-tmpfiles --root (root, both installed)"
fi
make -s -C "$ROOT" uninstall DESTDIR="$R2" PREFIX=/usr $SAN > /dev/null 2>&1
check "make uninstall PREFIX=/usr: only the configuration file left (and the users sysusers made)" \
    "etc/treaty-relay/env" "$(files "$R2" | grep -vE '^etc/(passwd|group|shadow|gshadow|\.pwd\.lock)$')"

# make install into a real system (no DESTDIR), as the quick start's "sudo
# make install": the user made from the sysusers.d file, the configuration
# file root:treaty-relay mode 640 and readable by that user, an existing
# world-readable one made so too.  Only where this can be done without
# touching the machine: as root, in private mount and network namespaces
# where /etc is an overlay (its writes kept in $T) and /usr/local a tmpfs;
# make runs only once both are mounted.
real() {
	mkdir -p "$T/ovl/up" "$T/ovl/work"
	unshare -m -n --propagation private sh -c '
	    mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1/up,workdir=$1/work" /etc &&
	    mount -t tmpfs tmpfs /usr/local || exit 99
	    make -s -C "$2" install $3 > "$1/install.out" 2>&1 || { echo "make install failed"; exit 1; }
	    echo "$(getent passwd treaty-relay | cut -d: -f1,6,7)" \
	        "$(stat -c "%a %U:%G" /etc/treaty-relay/env)" \
	        "$(runuser -u treaty-relay -- /usr/local/bin/treaty-relay \
	            --config /etc/treaty-relay/env --check-config 2>&1)"
	    chmod 644 /etc/treaty-relay/env && chgrp root /etc/treaty-relay/env &&
	        make -s -C "$2" install $3 > /dev/null 2>&1 &&
	        stat -c "%a %U:%G" /etc/treaty-relay/env' sh "$T/ovl" "$ROOT" "$SAN"
}
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v runuser >/dev/null; then
	out=$(real 2>&1)
	if [ $? = 99 ]; then
		echo "# skip - $SUITE: make install without DESTDIR: no private overlay of /etc here"
	else
		check "make install (no DESTDIR): the user, the configuration file root:treaty-relay 640, readable by the user" \
		    "treaty-relay:/nonexistent:/usr/sbin/nologin 640 root:treaty-relay configuration ok: 0 producers, 0 subscribers
640 root:treaty-relay" "$out"
	fi
else
	echo "# skip - $SUITE: make install without DESTDIR needs root, unshare and runuser"
fi

# UNITDIR as given (a distribution's /lib/systemd/system, say).
R3=$T/root3
make -s -C "$ROOT" install DESTDIR="$R3" PREFIX=/usr UNITDIR=/lib/systemd/system $SAN > /dev/null 2>&1
check "make install UNITDIR=/lib/systemd/system: both units there" \
    "lib/systemd/system/treaty-relay.service lib/systemd/system/treaty-relay@.service" \
    "$(files "$R3" | grep 'systemd/system/' | paste -sd' ')"
finish
