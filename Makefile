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
#   make fuzz       libFuzzer run of each test/fuzz/fz-*.c (needs clang)
#   make install    programs, library, header, man pages, units (PREFIX, DESTDIR)
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

# make install: programs, library (static, shared, pkg-config), header, man
# pages, both units with PREFIX in their ExecStart=, the sysctl file for
# rolling restarts, the example configuration, and /etc/treaty-relay/env
# when there is none (mode 640, group treaty-relay: the relay reads it
# itself, as that user).  Into a real system (no DESTDIR) it also creates
# the system user treaty-relay, runs ldconfig and applies the sysctl.
PREFIX	?= /usr/local
VERSION	:= $(shell sed -n 's/^\#define TREATY_VERSION[^"]*"\(.*\)"/\1/p' include/treaty.h)
UNITS	 = treaty-relay.service treaty-relay@.service
INSTALLED = $(PREFIX)/bin/treaty-relay $(PREFIX)/bin/treaty \
	    $(PREFIX)/include/treaty.h $(PREFIX)/lib/libtreaty.a \
	    $(PREFIX)/lib/libtreaty.so.0 $(PREFIX)/lib/libtreaty.so \
	    $(PREFIX)/lib/pkgconfig/libtreaty.pc \
	    $(PREFIX)/share/man/man8/treaty-relay.8 \
	    $(PREFIX)/share/man/man3/libtreaty.3 \
	    $(PREFIX)/share/man/man1/treaty.1 \
	    $(UNITS:%=/etc/systemd/system/%) \
	    /etc/sysctl.d/60-treaty-relay.conf /etc/treaty-relay/env.example

install: all
	install -D -m 0755 $(O)/treaty-relay $(DESTDIR)$(PREFIX)/bin/treaty-relay
	install -D -m 0755 $(O)/treaty $(DESTDIR)$(PREFIX)/bin/treaty
	install -D -m 0644 include/treaty.h $(DESTDIR)$(PREFIX)/include/treaty.h
	install -D -m 0644 $(O)/libtreaty.a $(DESTDIR)$(PREFIX)/lib/libtreaty.a
	install -D -m 0755 $(O)/libtreaty.so $(DESTDIR)$(PREFIX)/lib/libtreaty.so.0
	ln -sf libtreaty.so.0 $(DESTDIR)$(PREFIX)/lib/libtreaty.so
	@# Files made here go through install -m: their modes do not
	@# follow the caller's umask.
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' \
	    'includedir=$${prefix}/include' '' 'Name: libtreaty' \
	    'Description: treaty-relay client library (signatures, subjects)' \
	    'Version: $(VERSION)' 'Requires.private: libcrypto' \
	    'Libs: -L$${libdir} -ltreaty' 'Cflags: -I$${includedir}' | \
	    install -D -m 0644 /dev/stdin $(DESTDIR)$(PREFIX)/lib/pkgconfig/libtreaty.pc
	sed 's|/usr/local/bin/|$(PREFIX)/bin/|g' man/treaty-relay.8 | \
	    install -D -m 0644 /dev/stdin $(DESTDIR)$(PREFIX)/share/man/man8/treaty-relay.8
	install -D -m 0644 man/libtreaty.3 $(DESTDIR)$(PREFIX)/share/man/man3/libtreaty.3
	install -D -m 0644 man/treaty.1 $(DESTDIR)$(PREFIX)/share/man/man1/treaty.1
	for u in $(UNITS); do \
	    sed 's|/usr/local/bin/|$(PREFIX)/bin/|g' etc/$$u | \
	    install -D -m 0644 /dev/stdin $(DESTDIR)/etc/systemd/system/$$u || exit 1; \
	done
	install -D -m 0644 etc/sysctl.d/60-treaty-relay.conf $(DESTDIR)/etc/sysctl.d/60-treaty-relay.conf
	install -D -m 0644 etc/treaty-relay.env.example $(DESTDIR)/etc/treaty-relay/env.example
	@if [ -z "$(DESTDIR)" ]; then \
	    id -u treaty-relay >/dev/null 2>&1 || \
	    useradd --system --user-group --no-create-home \
	        --home-dir /nonexistent --shell /usr/sbin/nologin treaty-relay; \
	    ldconfig; \
	    sysctl -q -p /etc/sysctl.d/60-treaty-relay.conf || \
	        echo "make install: could not apply 60-treaty-relay.conf now" >&2; \
	fi
	@if [ ! -e $(DESTDIR)/etc/treaty-relay/env ]; then \
	    install -m 0640 etc/treaty-relay.env.example $(DESTDIR)/etc/treaty-relay/env; \
	    [ -n "$(DESTDIR)" ] || chgrp treaty-relay /etc/treaty-relay/env; \
	    echo "make install: wrote /etc/treaty-relay/env (everything commented out)"; \
	fi

# Removes what install put in place, but not /etc/treaty-relay/env (the
# operator's) nor the user treaty-relay.
uninstall:
	rm -f $(INSTALLED:%=$(DESTDIR)%)
	@[ -n "$(DESTDIR)" ] || ldconfig

lint-man:
	@for m in man/*; do mandoc -Tlint -W warning $$m || exit 1; done

clean:
	rm -rf build

.PHONY: all check test deps run bench bench-deliver bench-pull bench-work bench-door fuzz install uninstall lint-man clean
# Keep test and bench objects: they are not intermediates to throw away.
.SECONDARY:

-include $(shell find $(O)/obj $(O)/pic -name '*.d' 2>/dev/null)
