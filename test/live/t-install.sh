#!/usr/bin/env bash
# make install and uninstall into a staging root (DESTDIR), and the units
# they ship (SPEC 11, 12): both run the relay with --config and reload with
# SIGHUP, the template shares the port; systemd-analyze verify is clean with
# the installed paths, and systemd-analyze security rates both at most 1.8.
. "$(dirname "$0")/lib.sh"
SAN=
[ "$O" = build/san ] && SAN=SANITIZE=1
R=$T/root

# Under a strict umask: what install makes must still be readable by all.
(umask 077; make -s -C "$ROOT" install DESTDIR="$R" PREFIX=/opt/treaty $SAN) > "$T/install.out" 2>&1
check "make install DESTDIR=.. PREFIX=/opt/treaty (umask 077): exit 0" 0 "$?"
want="etc/sysctl.d/60-treaty-relay.conf
etc/systemd/system/treaty-relay.service
etc/systemd/system/treaty-relay@.service
etc/treaty-relay/env
etc/treaty-relay/env.example
opt/treaty/bin/treaty
opt/treaty/bin/treaty-relay
opt/treaty/include/treaty.h
opt/treaty/lib/libtreaty.a
opt/treaty/lib/libtreaty.so
opt/treaty/lib/libtreaty.so.0
opt/treaty/lib/pkgconfig/libtreaty.pc
opt/treaty/share/man/man1/treaty.1
opt/treaty/share/man/man3/libtreaty.3
opt/treaty/share/man/man8/treaty-relay.8"
check "every file in its place" "$want" "$(cd "$R" && find . \( -type f -o -type l \) | sed 's|^\./||' | sort)"
check "the configuration file: mode 640" 640 "$(stat -c %a "$R/etc/treaty-relay/env")"
check "the files install writes itself (.pc, units, man page) are 644 whatever the umask" \
    "644 644 644 644" "$(stat -c %a "$R/opt/treaty/lib/pkgconfig/libtreaty.pc" \
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
check_match "libtreaty.pc names PREFIX" '^prefix=/opt/treaty$' "$(head -1 "$R/opt/treaty/lib/pkgconfig/libtreaty.pc")"
check "pkg-config reads it" "-I/opt/treaty/include -L/opt/treaty/lib -ltreaty" \
    "$(PKG_CONFIG_PATH=$R/opt/treaty/lib/pkgconfig pkg-config --cflags --libs libtreaty | sed 's/ *$//')"

# libtreaty(3)'s example, built as its page says, with pkg-config (the
# staging root standing in for /), and run against the installed .so.
sed -n '/^\/\* example: verify.c \*\/$/,/^\/\* end of example \*\/$/p' "$ROOT/man/libtreaty.3" |
    sed 's/\\e/\\/g' > "$T/verify.c"
case $O in *san*) SANCC="-fsanitize=address,undefined" ;; *) SANCC= ;; esac
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror $SANCC -o "$T/verify" "$T/verify.c" \
    $(PKG_CONFIG_PATH=$R/opt/treaty/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$R pkg-config --cflags --libs libtreaty) \
    2> "$T/cc.err"
check "libtreaty(3)'s example builds with pkg-config --cflags --libs libtreaty" "0 []" "$? [$(head -3 "$T/cc.err")]"
secret=example-secret-0123456789 body='{"n":1}' now=$(date +%s)
sig="t=$now,v1=$(printf '%s' "$now.ex-1.$body" | openssl dgst -sha256 -hmac "$secret" -r | cut -d' ' -f1)"
check "and runs against the installed libtreaty.so" "genuine libtreaty.so.0" \
    "$(printf '%s' "$body" | LD_LIBRARY_PATH=$R/opt/treaty/lib TREATY_SECRET=$secret "$T/verify" "$sig" ex-1 2>&1) $(LD_LIBRARY_PATH=$R/opt/treaty/lib ldd "$T/verify" | grep -o 'libtreaty.so.0 => [^ ]*'"$R"'[^ ]*' | cut -d' ' -f1)"

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
else
	echo "# skip - $SUITE: systemd-analyze is not installed"
fi

# A second install keeps the operator's configuration file.
echo "# mine" >> "$R/etc/treaty-relay/env"
make -s -C "$ROOT" install DESTDIR="$R" PREFIX=/opt/treaty $SAN > /dev/null 2>&1
check "a second install keeps /etc/treaty-relay/env" "# mine" "$(tail -1 "$R/etc/treaty-relay/env")"
make -s -C "$ROOT" uninstall DESTDIR="$R" PREFIX=/opt/treaty $SAN > "$T/uninstall.out" 2>&1
check "make uninstall: exit 0" 0 "$?"
check "  leaves only the operator's configuration file" "etc/treaty-relay/env" \
    "$(cd "$R" && find . \( -type f -o -type l \) | sed 's|^\./||' | sort)"
finish
