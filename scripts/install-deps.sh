#!/usr/bin/env bash
# install-deps.sh: make sure the Debian packages treaty-relay needs are
# installed.  Quiet when they all are.  As root, installs what is missing
# (apt-get update once, then apt-get install -y); otherwise prints the exact
# command to run and exits 1.
#
#   scripts/install-deps.sh            required packages, plus the optional
#                                      ones when they can be installed
#   scripts/install-deps.sh --required required packages only
#
# Required: build, test and run (libc6-dev: gcc only recommends it, and
# recommendations are not installed; iproute2: the several-instances test
# brings up the loopback of a network namespace of its own; nodejs and npm:
# the tracing test reads traceparent with OpenTelemetry's propagator,
# installed by npm ci from test/live/w3c's lock file.  Debian's npm package
# only when there is no npm command: a Node.js from elsewhere brings its
# own, and Debian's would conflict with it).  Optional: wrk (make bench), mandoc
# (make lint-man), libmimalloc-dev (make ALLOC=mimalloc); missing optional
# packages never fail the script when not root.
# Package lists are space-separated strings, split on purpose.
# shellcheck disable=SC2086
set -eu

required="libevent-dev libnats-dev libssl-dev libyajl-dev nats-server \
pkg-config gcc libc6-dev make curl openssl python3 iproute2 nodejs"
optional="wrk mandoc libmimalloc-dev"

only_required=0
case "${1:-}" in
--required) only_required=1 ;;
"") ;;
*)	echo "usage: $0 [--required]" >&2; exit 2 ;;
esac

# 0 when the package is installed (not merely known or half-removed).
installed() {
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "install-deps: dpkg-query not found: this script is for Debian" \
	    "(12 or later); install by hand: $required" >&2
	exit 1
fi

missing="" missing_opt=""
for p in $required; do
	installed "$p" || missing="$missing $p"
done
command -v npm >/dev/null 2>&1 || missing="$missing npm"
if [ "$only_required" -eq 0 ]; then
	for p in $optional; do
		installed "$p" || missing_opt="$missing_opt $p"
	done
fi
missing=${missing# } missing_opt=${missing_opt# }

[ -z "$missing" ] && [ -z "$missing_opt" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	if [ -n "$missing" ]; then
		echo "install-deps: missing packages: $missing" >&2
		echo "run:" >&2
		echo "  sudo apt-get update && sudo apt-get install -y $missing${missing_opt:+ $missing_opt}" >&2
		exit 1
	fi
	echo "install-deps: optional packages not installed ($missing_opt);" \
	    "for make bench / make lint-man:" >&2
	echo "  sudo apt-get install -y $missing_opt" >&2
	exit 0
fi

export DEBIAN_FRONTEND=noninteractive
echo "install-deps: installing ${missing}${missing:+${missing_opt:+ }}$missing_opt" >&2
# One unreachable archive fails the update but leaves the other lists
# fresh: go on, and let the install (and the check below) decide.
apt-get update -qq || echo "install-deps: apt-get update failed;" \
    "installing from the package lists there are" >&2
if [ -n "$missing" ]; then
	apt-get install -y -qq --no-install-recommends $missing
fi
# Optional packages: a failure (say, wrk not in the configured archive)
# is reported, not fatal.
if [ -n "$missing_opt" ]; then
	apt-get install -y -qq --no-install-recommends $missing_opt ||
	    echo "install-deps: could not install optional packages:" \
	    "$missing_opt" >&2
fi

still=""
for p in $required; do
	installed "$p" || still="$still $p"
done
if [ -n "$still" ]; then
	echo "install-deps: still missing after apt-get:$still" >&2
	exit 1
fi
