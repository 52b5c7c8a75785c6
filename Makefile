# lfsync — every set-up step lives here, so a fresh Debian machine with Swift
# needs only `make demo` and `make test`.

SWIFT        ?= swift
PREFIX       ?= /usr/local
APT_PACKAGES := pkg-config libsodium-dev libzstd-dev libsqlite3-dev libavahi-compat-libdnssd-dev
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEBUG_BIN    := .build/debug
RELEASE_BIN  := .build/release

.PHONY: all deps build release test unit-test demo bench-content clean

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

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

# Every test: unit and end-to-end (the e2e tests run the freshly built lfsync binary).
test: deps
	$(SWIFT) build --build-tests
	LFSYNC_BINARY=$(CURDIR)/$(DEBUG_BIN)/lfsync $(SWIFT) test --skip-build

# The main job: builds a sample library and shows what lfsync makes of it.
demo: build
	@sh scripts/demo.sh $(CURDIR)/$(DEBUG_BIN)

# Chunk+hash throughput against plain BLAKE2b, and a 10k-file cached rescan (release build).
bench-content: release
	$(RELEASE_BIN)/lfsync-bench content

clean:
	rm -rf .build demo-out bench-out
