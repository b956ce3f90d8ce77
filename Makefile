# treaty-relay: GNU Make.  Outputs only under build/ (build/san/ with SANITIZE=1).
#   make            build everything
#   make test       unit tests, then live tests against a real nats-server
#   make check      unit tests only
#   make run        install missing packages, build, start nats-server and the relay
#   make bench      benchmark (wrk), see docs/BENCHMARKS.md
#   make bench-deliver  end-to-end delivery benchmark (bench/deliver.sh)
#   make bench-pull     inbox workers fetching and acknowledging (bench/pull.sh)
#   make bench-work     treaty work --inbox end to end, and verify cost (bench/work.sh)
#   make bench-door     front-door attacks: unread answers, slow readers, idle flood (bench/door.sh)
#   make bench-subscribers  1,000 subscribers through the API: create, converge, memory, ingest, a PUT storm (bench/subscribers.sh)
#   make fuzz       libFuzzer run of each test/fuzz/fz-*.c (needs clang)
#   make install    programs, library, header, man pages, units, sysusers.d
#                   (PREFIX, DESTDIR, BINDIR, LIBDIR, MANDIR, UNITDIR, ...)
#   make uninstall  the same files removed
#   make SANITIZE=1 ...  the same with AddressSanitizer and UBSan
#   make ALLOC=mimalloc ...  Debian's mimalloc instead of glibc's allocator

CC	?= cc
PKGS	 = libevent libevent_openssl libevent_pthreads libnats openssl yajl
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

ifeq ($(SANITIZE),1)
O	 = build/san
SANFLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else
O	 = build
SANFLAGS =
endif

WARN	 = -Wall -Wextra -Wformat=2 -Wshadow -Wstrict-prototypes \
	   -Wmissing-prototypes -Wwrite-strings -Wcast-qual -Wundef -Werror
# CFLAGS and LDFLAGS are the builder's (make CFLAGS=-O3 too); what the
# build needs is added to them either way.
CFLAGS	?= -O2 -g
override CFLAGS	+= -std=c11 -D_GNU_SOURCE $(WARN) $(SANFLAGS) -MMD -MP \
	   -Iinclude -Isrc/common $(PKG_CFLAGS)
override LDFLAGS += $(SANFLAGS)
# The allocator: glibc's, or with ALLOC=mimalloc Debian's mimalloc
# (libmimalloc-dev, which has no pkg-config file).  mimalloc takes a
# twentieth of the instructions per event off (libevent's objects are
# recycled by evmem.c already), but keeps the memory of a
# connection flood (docs/BENCHMARKS.md, "The allocator"), so it is not
# the default.  The sanitizers bring their own.
ALLOC	?= libc
ifeq ($(SANITIZE),1)
ALLOC	 = libc
endif
ALLOC_LIBS = $(if $(filter mimalloc,$(ALLOC)),-lmimalloc)
LIBS	 = $(PKG_LIBS) $(ALLOC_LIBS) -lpthread

LIB_SRC	 = $(wildcard src/lib/*.c)
COMMON_SRC = $(wildcard src/common/*.c)
RELAY_SRC = $(wildcard src/relay/*.c)
CLI_SRC	 = $(wildcard src/cli/*.c)
UNIT_SRC = $(wildcard test/unit/t-*.c)
TOOL_SRC = $(wildcard test/tools/*.c)
FUZZ_SRC = $(wildcard test/fuzz/fz-*.c)

LIB_OBJ	 = $(LIB_SRC:%.c=$(O)/obj/%.o)
LIB_PIC	 = $(LIB_SRC:%.c=$(O)/pic/%.o)
COMMON_OBJ = $(COMMON_SRC:%.c=$(O)/obj/%.o)
RELAY_OBJ = $(RELAY_SRC:%.c=$(O)/obj/%.o)
RELAY_LIBOBJ = $(filter-out $(O)/obj/src/relay/main.o,$(RELAY_OBJ))
CLI_LIBOBJ = $(filter-out $(O)/obj/src/cli/main.o,$(CLI_SRC:%.c=$(O)/obj/%.o))
UNIT_BIN = $(UNIT_SRC:test/unit/%.c=$(O)/test/%)
TOOL_BIN = $(TOOL_SRC:test/tools/%.c=$(O)/test/%)
FUZZ_BIN = $(FUZZ_SRC:test/fuzz/fz-%.c=$(O)/test/t-fuzz-%)

all: $(O)/treaty-relay $(O)/libtreaty.a $(O)/libtreaty.so $(UNIT_BIN) $(TOOL_BIN) $(FUZZ_BIN) \
	$(O)/test/fault.so \
	$(O)/bench/sink $(O)/bench/load $(O)/bench/pull $(O)/bench/verify $(O)/bench/jspub \
	$(O)/bench/jslat $(O)/bench/parse \
	$(O)/treaty

$(O)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

$(O)/pic/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC -c -o $@ $<

$(O)/libtreaty.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(O)/libtreaty.so: $(LIB_PIC)
	$(CC) -shared -Wl,-soname,libtreaty.so.0 $(LDFLAGS) -o $@ $^ \
	    $(shell pkg-config --libs openssl)

# What the relay and the client share beyond libtreaty (logging, JSON,
# CloudEvents over HTTP, DNS, the HTTP client): internal, not installed.
$(O)/libcommon.a: $(COMMON_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(O)/treaty-relay: $(RELAY_OBJ) $(O)/libcommon.a $(O)/libtreaty.a
	$(CC) $(LDFLAGS) -o $@ $(RELAY_OBJ) $(O)/libcommon.a $(O)/libtreaty.a $(LIBS)

$(O)/treaty: $(CLI_SRC:%.c=$(O)/obj/%.o) $(O)/libcommon.a $(O)/libtreaty.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_SRC:%.c=$(O)/obj/%.o) $(O)/libcommon.a \
	    $(O)/libtreaty.a $(LIBS)

# The client's modules (all but main.c), for the unit tests.
$(O)/libcli.a: $(CLI_LIBOBJ)
	@rm -f $@
	ar rcs $@ $^

# Unit tests link the relay's modules (all but main.c), the client's and
# libtreaty.
$(O)/test/t-%: $(O)/obj/test/unit/t-%.o $(O)/obj/test/unit/harness.o \
	    $(RELAY_LIBOBJ) $(O)/libcli.a $(O)/libcommon.a $(O)/libtreaty.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(O)/obj/test/unit/harness.o $(RELAY_LIBOBJ) \
	    $(O)/libcli.a $(O)/libcommon.a $(O)/libtreaty.a $(LIBS)

# Fuzz targets: replayed over their corpus by test/fuzz/replay.c in make check.
$(O)/test/t-fuzz-%: $(O)/obj/test/fuzz/fz-%.o $(O)/obj/test/fuzz/replay.o \
	    $(RELAY_LIBOBJ) $(O)/libcommon.a $(O)/libtreaty.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(O)/obj/test/fuzz/replay.o $(RELAY_LIBOBJ) \
	    $(O)/libcommon.a $(O)/libtreaty.a $(LIBS)

# make fuzz: real coverage-guided fuzzing with clang's libFuzzer, if present.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS = $(FUZZ_SRC:test/fuzz/fz-%.c=%)
fuzz:
	@command -v clang >/dev/null || { echo "make fuzz needs clang"; exit 1; }
	@for t in $(FUZZ_TARGETS); do \
	    mkdir -p build/fuzz/corpus-$$t && \
	    clang -g -O1 -std=c11 -D_GNU_SOURCE \
	        -fsanitize=fuzzer,address,undefined -Iinclude -Isrc/common \
	        $(PKG_CFLAGS) -o build/fuzz/fz-$$t test/fuzz/fz-$$t.c \
	        $(filter-out src/relay/main.c,$(RELAY_SRC)) $(COMMON_SRC) \
	        $(LIB_SRC) $(LIBS) && \
	    build/fuzz/fz-$$t -max_total_time=$(FUZZ_SECONDS) \
	        build/fuzz/corpus-$$t test/fuzz/corpus/$$t || exit 1; \
	done

# Test tools may use the relay's modules (all but main.c).
$(O)/test/%: $(O)/obj/test/tools/%.o $(RELAY_LIBOBJ) $(O)/libcommon.a \
	    $(O)/libtreaty.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(RELAY_LIBOBJ) $(O)/libcommon.a \
	    $(O)/libtreaty.a $(LIBS)

# LD_PRELOAD fault injection for live tests (no sanitizer: it is loaded
# into processes before their own runtime).
$(O)/test/fault.so: test/fault/fault.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -std=c11 -D_GNU_SOURCE $(WARN) -fPIC -shared -o $@ $< -ldl

$(O)/bench/%: $(O)/obj/bench/%.o
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(LIBS)

$(O)/bench/verify: $(O)/obj/bench/verify.o $(O)/libtreaty.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(O)/libtreaty.a $(LIBS)

$(O)/bench/parse: $(O)/obj/bench/parse.o $(O)/libcommon.a $(O)/libtreaty.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(O)/libcommon.a $(O)/libtreaty.a $(LIBS)

# gcc 12's AddressSanitizer runtime can die before main, printing only
# "AddressSanitizer:DEADLYSIGNAL", where the kernel randomizes mmap with
# many bits (seen once in CI, in a test helper).  The sanitized tests run
# without address randomization where setarch may turn it off.
ifeq ($(SANITIZE),1)
NOASLR	:= $(shell setarch $$(uname -m) -R true 2>/dev/null && \
	     echo setarch $$(uname -m) -R)
endif

# On a fresh machine the first command may be make test: it installs what
# is missing (or, not root, prints the one command that does) before it
# builds, as make run does.
check:
	@scripts/install-deps.sh --required
	@$(MAKE) --no-print-directory all
	@O=$(O) $(NOASLR) test/run-unit.sh

test:
	@scripts/install-deps.sh --required
	@$(MAKE) --no-print-directory all
	@O=$(O) $(NOASLR) test/run.sh

deps:
	@scripts/install-deps.sh

run: deps
	@$(MAKE) --no-print-directory all
	@O=$(O) scripts/run-local.sh

bench: all
	@O=$(O) bench/run.sh

bench-deliver: all
	@O=$(O) bench/deliver.sh

bench-pull: all
	@O=$(O) bench/pull.sh

bench-work: all
	@O=$(O) bench/work.sh

bench-door: all
	@O=$(O) bench/door.sh

bench-subscribers: all
	@O=$(O) bench/subscribers.sh

# make install: programs, library (static, shared, pkg-config), header, man
# pages, both units with BINDIR in their ExecStart=, the sysusers.d file
# that creates the user and group treaty-relay, the tmpfiles.d file that
# gives /etc/treaty-relay/env that group, the sysctl file for rolling
# restarts, the example configuration, and /etc/treaty-relay/env when there
# is none.  It ends by listing every file it installed, DESTDIR included.
# Into a real system (no DESTDIR) it also creates the user (systemd-sysusers,
# or useradd where there is none), gives the configuration file group
# treaty-relay and mode 640 (the relay reads it itself, as that user; the
# subscribers' secrets are in it), runs ldconfig and applies the sysctl.  A
# package does the same from the files: systemd-sysusers, then
# systemd-tmpfiles --create.
PREFIX	?= /usr/local
BINDIR	?= $(PREFIX)/bin
INCLUDEDIR ?= $(PREFIX)/include
# LIBDIR: a multiarch system takes LIBDIR=/usr/lib/$(gcc -print-multiarch).
LIBDIR	?= $(PREFIX)/lib
MANDIR	?= $(PREFIX)/share/man
# The files systemd reads (units, sysusers.d, tmpfiles.d, sysctl.d): under
# /usr/lib for a package (PREFIX=/usr), under /etc for any other PREFIX
# (systemd reads /etc whatever PREFIX is, and no /opt).
ifeq ($(PREFIX),/usr)
SYSTEMD_BASE = $(PREFIX)/lib
else
SYSTEMD_BASE = /etc
endif
UNITDIR	?= $(SYSTEMD_BASE)/systemd/system
SYSUSERSDIR ?= $(SYSTEMD_BASE)/sysusers.d
TMPFILESDIR ?= $(SYSTEMD_BASE)/tmpfiles.d
SYSCTLDIR ?= $(SYSTEMD_BASE)/sysctl.d
VERSION	:= $(shell sed -n 's/^\#define TREATY_VERSION[^"]*"\(.*\)"/\1/p' include/treaty.h)
UNITS	 = treaty-relay.service treaty-relay@.service
# pkg-config's libdir relative to its prefix where it can be.
PC_LIBDIR = $(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))
PC_INCLUDEDIR = $(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))
# The paths the man pages name, as this install puts them: the programs
# everywhere, the files in FILES' entries (an example's drop-in stays in
# /etc/systemd/system).
MAN_PATHS = -e 's|/usr/local/bin/|$(BINDIR)/|g' \
	    -e '/^\.It Pa /s|/etc/systemd/system/|$(UNITDIR)/|' \
	    -e '/^\.It Pa /s|/etc/sysusers\.d/|$(SYSUSERSDIR)/|' \
	    -e '/^\.It Pa /s|/etc/tmpfiles\.d/|$(TMPFILESDIR)/|' \
	    -e '/^\.It Pa /s|/etc/sysctl\.d/|$(SYSCTLDIR)/|'
# Every file install puts in place, but /etc/treaty-relay/env: what it
# lists at its end and what uninstall removes.
INSTALLED = $(BINDIR)/treaty-relay $(BINDIR)/treaty \
	    $(INCLUDEDIR)/treaty.h $(LIBDIR)/libtreaty.a \
	    $(LIBDIR)/libtreaty.so.0 $(LIBDIR)/libtreaty.so \
	    $(LIBDIR)/pkgconfig/libtreaty.pc \
	    $(MANDIR)/man8/treaty-relay.8 \
	    $(MANDIR)/man7/treaty-relay-quickstart.7 \
	    $(MANDIR)/man3/libtreaty.3 \
	    $(MANDIR)/man1/treaty.1 \
	    $(UNITS:%=$(UNITDIR)/%) \
	    $(SYSUSERSDIR)/treaty-relay.conf $(TMPFILESDIR)/treaty-relay.conf \
	    $(SYSCTLDIR)/60-treaty-relay.conf /etc/treaty-relay/env.example
ENV_FILE = /etc/treaty-relay/env

install: all
	install -D -m 0755 $(O)/treaty-relay $(DESTDIR)$(BINDIR)/treaty-relay
	install -D -m 0755 $(O)/treaty $(DESTDIR)$(BINDIR)/treaty
	install -D -m 0644 include/treaty.h $(DESTDIR)$(INCLUDEDIR)/treaty.h
	install -D -m 0644 $(O)/libtreaty.a $(DESTDIR)$(LIBDIR)/libtreaty.a
	install -D -m 0755 $(O)/libtreaty.so $(DESTDIR)$(LIBDIR)/libtreaty.so.0
	ln -sf libtreaty.so.0 $(DESTDIR)$(LIBDIR)/libtreaty.so
	@# Files made here go through install -m: their modes do not
	@# follow the caller's umask.
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(PC_LIBDIR)' \
	    'includedir=$(PC_INCLUDEDIR)' '' 'Name: libtreaty' \
	    'Description: treaty-relay client library (signatures, subjects)' \
	    'Version: $(VERSION)' 'Requires.private: libcrypto' \
	    'Libs: -L$${libdir} -ltreaty' 'Cflags: -I$${includedir}' | \
	    install -D -m 0644 /dev/stdin $(DESTDIR)$(LIBDIR)/pkgconfig/libtreaty.pc
	sed $(MAN_PATHS) man/treaty-relay.8 | \
	    install -D -m 0644 /dev/stdin $(DESTDIR)$(MANDIR)/man8/treaty-relay.8
	sed $(MAN_PATHS) man/treaty-relay-quickstart.7 | \
	    install -D -m 0644 /dev/stdin $(DESTDIR)$(MANDIR)/man7/treaty-relay-quickstart.7
	install -D -m 0644 man/libtreaty.3 $(DESTDIR)$(MANDIR)/man3/libtreaty.3
	install -D -m 0644 man/treaty.1 $(DESTDIR)$(MANDIR)/man1/treaty.1
	for u in $(UNITS); do \
	    sed 's|/usr/local/bin/|$(BINDIR)/|g' etc/$$u | \
	    install -D -m 0644 /dev/stdin $(DESTDIR)$(UNITDIR)/$$u || exit 1; \
	done
	install -D -m 0644 etc/sysusers.d/treaty-relay.conf $(DESTDIR)$(SYSUSERSDIR)/treaty-relay.conf
	install -D -m 0644 etc/tmpfiles.d/treaty-relay.conf $(DESTDIR)$(TMPFILESDIR)/treaty-relay.conf
	install -D -m 0644 etc/sysctl.d/60-treaty-relay.conf $(DESTDIR)$(SYSCTLDIR)/60-treaty-relay.conf
	install -D -m 0644 etc/treaty-relay.env.example $(DESTDIR)/etc/treaty-relay/env.example
	@# The user before the file that takes its group: the sysusers.d
	@# line, or the same user through useradd.
	@if [ -z "$(DESTDIR)" ]; then \
	    if command -v systemd-sysusers >/dev/null; then \
	        systemd-sysusers $(SYSUSERSDIR)/treaty-relay.conf || exit 1; \
	    else \
	        id -u treaty-relay >/dev/null 2>&1 || \
	        useradd --system --user-group --no-create-home \
	            --home-dir /nonexistent --shell /usr/sbin/nologin \
	            --comment treaty-relay treaty-relay || exit 1; \
	    fi; \
	    ldconfig; \
	    sysctl -q -p $(SYSCTLDIR)/60-treaty-relay.conf || \
	        echo "make install: could not apply 60-treaty-relay.conf now" >&2; \
	fi
	@if [ ! -e $(DESTDIR)$(ENV_FILE) ]; then \
	    install -m 0640 etc/treaty-relay.env.example $(DESTDIR)$(ENV_FILE); \
	    echo "make install: wrote $(DESTDIR)$(ENV_FILE) (everything commented out)"; \
	fi
	@# What tmpfiles.d's line does at every boot, now: readable by the
	@# service's group, by no one else.
	@if [ -z "$(DESTDIR)" ]; then \
	    chgrp treaty-relay $(ENV_FILE) && chmod 0640 $(ENV_FILE) || exit 1; \
	else \
	    echo "make install: $(DESTDIR)$(ENV_FILE): mode 640; on the target," \
	        "systemd-sysusers then systemd-tmpfiles --create give it group treaty-relay"; \
	fi
	@echo "make install: installed$(if $(DESTDIR), under DESTDIR=$(DESTDIR)):"
	@printf '  %s\n' $(INSTALLED:%=$(DESTDIR)%) $(DESTDIR)$(ENV_FILE)

# Removes what install put in place, but not /etc/treaty-relay/env (the
# operator's) nor the user treaty-relay.
uninstall:
	rm -f $(INSTALLED:%=$(DESTDIR)%)
	@[ -n "$(DESTDIR)" ] || ldconfig

lint-man:
	@for m in man/*; do mandoc -Tlint -W warning $$m || exit 1; done

clean:
	rm -rf build

.PHONY: all check test deps run bench bench-deliver bench-pull bench-work bench-door bench-subscribers fuzz install uninstall lint-man clean
# Keep test and bench objects: they are not intermediates to throw away.
.SECONDARY:

-include $(shell find $(O)/obj $(O)/pic -name '*.d' 2>/dev/null)
