# lfsync — every set-up step lives here, so a fresh Debian machine with Swift
# needs only `make demo` and `make test`.

SWIFT        ?= swift
PREFIX       ?= /usr/local
APT_PACKAGES := pkg-config libsodium-dev libssl-dev libzstd-dev libsqlite3-dev libavahi-compat-libdnssd-dev
# The lab runs its own avahi-daemon and D-Bus inside network namespaces, and
# drops packets with nftables where the kernel has no netem.
LAB_PACKAGES := avahi-daemon dbus iproute2 jq nftables
# The benchmarks compare against rsync, over ssh and as a daemon, with every receiver
# writing to a fresh ext4 (e2fsprogs) on a loop device.
BENCH_PACKAGES := rsync openssh-server openssh-client time e2fsprogs
# The CLI tests exercise the man page and the completion scripts in real tools and shells;
# the copy tests make an XFS file system in a loop file to see reflinks, the holding tests an ext4 one
# whose blocks they corrupt under the file system (debugfs); systemd-analyze checks the units.
TEST_PACKAGES := mandoc groff-base man-db bash-completion zsh fish xfsprogs e2fsprogs systemd
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEBUG_BIN    := .build/debug
RELEASE_BIN  := .build/release
# Each layer is a target; a file that imports a target its own does not list
# fails the build, even when that module happens to be built already.
LAYERS       := --explicit-target-dependency-import-check error

.PHONY: all lab deps lab-deps test-deps bench-deps bench docs install uninstall build release test unit-test demo bench-content bench-channel bench-broadcast bench-watch clean fuzz fuzz-seeds api test-tsan test-asan

all: build

# Installs only what is missing; `apt-get update` runs once, and only when needed.
deps:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

# avahi-daemon must never run on the host's real interfaces (ARCHITECTURE.md, "Testing"): while
# installing it, a policy-rc.d forbids service starts, and afterwards the units are masked.
lab-deps:
	@missing=""; for p in $(LAB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages for the lab:$$missing"; \
	  created=""; if [ ! -e /usr/sbin/policy-rc.d ]; then \
	    printf '#!/bin/sh\nexit 101\n' | $(SUDO) tee /usr/sbin/policy-rc.d >/dev/null && $(SUDO) chmod +x /usr/sbin/policy-rc.d && created=1; fi; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	  [ -z "$$created" ] || $(SUDO) rm -f /usr/sbin/policy-rc.d; \
	  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then \
	    $(SUDO) systemctl mask --now avahi-daemon.service avahi-daemon.socket >/dev/null 2>&1 || true; fi; \
	fi

test-deps:
	@missing=""; for p in $(TEST_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages for the tests:$$missing"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

# Service starts are forbidden while installing (sshd must not start on real interfaces);
# the benchmark runs its own sshd and rsync daemon on loopback.
bench-deps:
	@missing=""; for p in $(BENCH_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages for the benchmarks:$$missing"; \
	  created=""; if [ ! -e /usr/sbin/policy-rc.d ]; then \
	    printf '#!/bin/sh\nexit 101\n' | $(SUDO) tee /usr/sbin/policy-rc.d >/dev/null && $(SUDO) chmod +x /usr/sbin/policy-rc.d && created=1; fi; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	  [ -z "$$created" ] || $(SUDO) rm -f /usr/sbin/policy-rc.d; \
	fi

build: deps
	$(SWIFT) build $(LAYERS)

release: deps
	$(SWIFT) build -c release $(LAYERS)

# Every test: unit and end-to-end (the e2e tests run the freshly built lfsync binary).
# In parallel, at most TEST_WIDTH test cases at a time. Unbounded, all ~500 start at once
# on the two threads of Swift's cooperative pool; their queue of CPU work alone then
# outlasts the real-time deadlines of the network tests (a handshake "not completed in
# time" after 60 s in a queue). swift-testing's width switch is still marked experimental:
# a toolchain without it runs the suite one test at a time (slower, never unbounded).
# The lab's namespaces run in a test of their own.
TEST_WIDTH ?= 4
WIDTH_FLAG = --experimental-maximum-parallelization-width
TEST_PARALLELISM = $(shell $(SWIFT) test --help-hidden 2>/dev/null | grep -q -- '$(WIDTH_FLAG)' \
	&& echo '$(WIDTH_FLAG) $(TEST_WIDTH)' || echo '--no-parallel')
test: deps test-deps lab-deps
	$(SWIFT) build --build-tests $(LAYERS)
	LFSYNC_BINARY=$(CURDIR)/$(DEBUG_BIN)/lfsync \
	LFSYNC_DISCOVERY_PROBE=$(CURDIR)/$(DEBUG_BIN)/lfsync-discovery-probe \
	LFSYNC_BENCH_BINARY=$(CURDIR)/$(DEBUG_BIN)/lfsync-bench \
	LFSYNC_HOSTILE_PEER=$(CURDIR)/$(DEBUG_BIN)/lfsync-hostile-peer \
	$(SWIFT) test --skip-build $(TEST_PARALLELISM)

# The suite under a sanitizer, each in a build directory of its own (the debug build is
# left alone). Where a test cannot run under one, it says so and is skipped (LFSYNC_SANITIZER).
SANITIZED_ENV = LFSYNC_BINARY=$(CURDIR)/$(1)/debug/lfsync \
	LFSYNC_DISCOVERY_PROBE=$(CURDIR)/$(1)/debug/lfsync-discovery-probe \
	LFSYNC_BENCH_BINARY=$(CURDIR)/$(1)/debug/lfsync-bench \
	LFSYNC_HOSTILE_PEER=$(CURDIR)/$(1)/debug/lfsync-hostile-peer
# Under TSan the project's locks are pthread mutexes (LFSYNC_THREAD_SANITIZER, see
# LockedState.swift): the futex inside Synchronization.Mutex is invisible to TSan.
TSAN_FLAGS := --sanitize=thread -Xswiftc -DLFSYNC_THREAD_SANITIZER --build-path .build/tsan
test-tsan: deps test-deps lab-deps
	$(SWIFT) build --build-tests $(TSAN_FLAGS)
	$(call SANITIZED_ENV,.build/tsan) LFSYNC_SANITIZER=thread TSAN_OPTIONS=exitcode=66 \
	$(SWIFT) test --skip-build $(TSAN_FLAGS) $(TEST_PARALLELISM)

test-asan: deps test-deps lab-deps
	$(SWIFT) build --build-tests --sanitize=address --build-path .build/asan
	$(call SANITIZED_ENV,.build/asan) LFSYNC_SANITIZER=address ASAN_OPTIONS=detect_leaks=0 \
	$(SWIFT) test --skip-build --sanitize=address --build-path .build/asan $(TEST_PARALLELISM)

# Coverage-guided fuzzing (libFuzzer, AddressSanitizer): every target for FUZZ_SECONDS each,
# starting from Fuzz/corpus and merging what it learns back into it. Findings (the input that
# crashed, leaked or hung) land in .build/fuzz/findings; `make test` replays the corpus.
FUZZ_SECONDS ?= 60
# gold, the default linker, crashes on the sanitized link (an internal error in its DWARF reader).
fuzz: deps
	$(SWIFT) build -c release --build-path .build/fuzz --product lfsync-fuzz \
	  -Xswiftc -sanitize=fuzzer,address -Xswiftc -DLFSYNC_LIBFUZZER -Xswiftc -use-ld=lld
	bash scripts/fuzz.sh $(CURDIR)/.build/fuzz/release/lfsync-fuzz $(FUZZ_SECONDS)

# Writes the generated seeds (real encodings, fixture media) that are missing from Fuzz/corpus.
# Writes the listing of the public API (Tests/LocalFirstSyncTests/API/public-api.txt) from
# the built modules' symbol graphs; PublicAPITests fails while the two differ.
api: deps
	$(SWIFT) build --build-tests $(LAYERS)
	LFSYNC_WRITE_API=1 $(SWIFT) test --skip-build --filter PublicAPITests

fuzz-seeds: deps
	$(SWIFT) build --build-tests $(LAYERS)
	LFSYNC_WRITE_FUZZ_SEEDS=1 $(SWIFT) test --skip-build --filter FuzzCorpusTests

# The multi-device lab alone (root; network namespaces with their own avahi-daemon).
# It exits 77 when it cannot run here; that is reported, not a failure.
lab: build lab-deps
	@bash Tests/Lab/lab.sh $(CURDIR)/$(DEBUG_BIN)/lfsync $(CURDIR)/$(DEBUG_BIN)/lfsync-bench $(CURDIR)/$(DEBUG_BIN)/lfsync-hostile-peer; rc=$$?; \
	if [ $$rc -eq 77 ]; then echo "lab skipped (reason above)"; exit 0; fi; exit $$rc

# The main job: builds a sample library and shows what lfsync makes of it.
demo: build
	@sh scripts/demo.sh $(CURDIR)/$(DEBUG_BIN)

# The performance targets (ARCHITECTURE.md), lfsync against rsync side by side (release build; ~10 minutes at 1 GiB).
# Knobs: BENCH_SIZE_MIB, BENCH_REPS, BENCH_BIG_MIB, BENCH_SMALL_FILES.
bench: release bench-deps
	bash scripts/bench.sh $(CURDIR)/$(RELEASE_BIN)

# Everyday use (release build): a photo's last write to its Receipt under `watch` (median of
# 20), an idle `watch` over 200,000 files (CPU, RSS, ulimit -n 1024), --bwlimit accuracy.
bench-watch: release
	python3 scripts/bench-watch.py $(CURDIR)/$(RELEASE_BIN)

# Chunk+hash throughput against plain BLAKE2b, and a 10k-file cached rescan (release build).
bench-content: release
	$(RELEASE_BIN)/lfsync-bench content

# Encrypted channel over loopback TCP (1 GiB) against single-core ChaCha20-Poly1305 (release build).
bench-channel: release
	$(RELEASE_BIN)/lfsync-bench channel

# The engine's acceptance run: 300 MiB broadcast to three peers over loopback TCP (release build).
bench-broadcast: release
	$(RELEASE_BIN)/lfsync-bench broadcast

# Regenerates man/lfsync.1 and completions/ from the command model; commit the result.
docs: build
	$(DEBUG_BIN)/lfsync __generate-docs .

BINDIR      ?= $(PREFIX)/bin
MANDIR      ?= $(PREFIX)/share/man/man1
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d

install: release
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR) $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	install -m 755 $(RELEASE_BIN)/lfsync $(DESTDIR)$(BINDIR)/lfsync
	install -m 644 man/lfsync.1 $(DESTDIR)$(MANDIR)/lfsync.1
	install -m 644 completions/lfsync.bash $(DESTDIR)$(BASHCOMPDIR)/lfsync
	install -m 644 completions/_lfsync $(DESTDIR)$(ZSHCOMPDIR)/_lfsync
	install -m 644 completions/lfsync.fish $(DESTDIR)$(FISHCOMPDIR)/lfsync.fish

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/lfsync $(DESTDIR)$(MANDIR)/lfsync.1 $(DESTDIR)$(BASHCOMPDIR)/lfsync \
	  $(DESTDIR)$(ZSHCOMPDIR)/_lfsync $(DESTDIR)$(FISHCOMPDIR)/lfsync.fish

clean:
	rm -rf .build demo-out bench-out
