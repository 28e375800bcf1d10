# spipe — build, test and measure. `make test` is what CI runs.
GO          ?= go
# Pinned in go.mod (tool directive): no separate install.
STATICCHECK ?= $(GO) tool staticcheck
FUZZTIME    ?= 10s
BENCHCOUNT  ?= 6
BIN         := bin/spipe

.PHONY: all build test unit lint fmt vet staticcheck bench fuzz generate check-generated clean api api-check

all: build

build:
	$(GO) build ./...

# The suite CI runs: lint, the frozen API, the race-checked tests, and the
# pure-Go build. Programs the tests run that Debian does not have by
# default are installed first when missing (as root; otherwise the command
# is printed).
test: check-generated lint api-check unit test-qemu

# qemu-user for test-qemu; systemd for systemd-socket-activate and
# systemd-analyze, with which cmd/spipe tests socket activation and the
# units in contrib/systemd.
TEST_TOOLS := qemu-x86_64:qemu-user systemd-socket-activate:systemd systemd-analyze:systemd
.PHONY: test-tools
test-tools:
	@bash scripts/need.sh $(TEST_TOOLS)

unit: test-tools
	$(GO) test -race ./...
	$(GO) test -tags purego ./...

lint: fmt vet vet-cross staticcheck

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	$(GO) vet -tags purego ./...

# The fallback must build and vet where there is no assembly: another
# 64-bit architecture and a 32-bit one (what zeebo/blake3's CI checks).
.PHONY: vet-cross
vet-cross:
	GOARCH=arm64 $(GO) vet ./...
	GOARCH=386 $(GO) vet ./...

staticcheck:
	$(STATICCHECK) ./...
	$(STATICCHECK) -tags purego ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count $(BENCHCOUNT) ./pkg/...

# Each fuzz target for a short, fixed time; FUZZTIME=5m for a campaign.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$target"; \
	    $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

# Assembly generators (asmgen/, a module of its own), as generator:package.
# Generator asmgen/<gen> writes internal/<package>/<gen>_amd64.s and
# <gen>_stubs_amd64.go, with the same command as the //go:generate line in
# that package (the header records it, so the paths must match exactly).
ASMGEN := chacha:chachacore salsa:salsacore poly1305:poly1305

generate:
	@set -e; for g in $(ASMGEN); do gen=$${g%%:*}; pkg=$${g##*:}; \
	  echo "asmgen/$$gen -> internal/$$pkg"; \
	  (cd asmgen && $(GO) run ./$$gen -out ../internal/$$pkg/$${gen}_amd64.s \
	    -stubs ../internal/$$pkg/$${gen}_stubs_amd64.go -pkg $$pkg); \
	done

# Regenerates into a scratch copy of the tree layout (same relative paths,
# so the same header) and fails if any committed file differs; also vets and
# tests the generator module, which `go vet ./...` at the root skips.
check-generated:
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	(cd asmgen && $(GO) vet ./... && $(GO) test -count=1 ./...); \
	cp -r asmgen "$$tmp/asmgen"; \
	for g in $(ASMGEN); do gen=$${g%%:*}; pkg=$${g##*:}; \
	  mkdir -p "$$tmp/internal/$$pkg"; \
	  (cd "$$tmp/asmgen" && $(GO) run ./$$gen -out ../internal/$$pkg/$${gen}_amd64.s \
	    -stubs ../internal/$$pkg/$${gen}_stubs_amd64.go -pkg $$pkg); \
	  for f in $${gen}_amd64.s $${gen}_stubs_amd64.go; do \
	    diff -u "internal/$$pkg/$$f" "$$tmp/internal/$$pkg/$$f" || \
	      { echo "internal/$$pkg/$$f differs from its generator: run make generate"; exit 1; }; \
	  done; \
	done; echo "generated assembly is up to date"

clean:
	rm -rf bin

# The exported API of every package under pkg/, one file per package in
# api/ (api/pkg/aead.txt, ...), written by internal/tools/apigen. Every
# change to an exported name is a reviewed diff of those files: `make api`
# rewrites them, `make api-check` fails, printing the diff, if they differ
# from the code. The check describes the default build, the pure-Go one
# and two other architectures, so an API that differs between builds
# fails too.
API_PKGS   ?= ./pkg/...
API_BUILDS := "" "-tags purego" "-goarch arm64" "-goarch 386"

api:
	$(GO) run ./internal/tools/apigen -out api $(API_PKGS)

api-check:
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(GO) build -o "$$tmp/apigen" ./internal/tools/apigen; \
	for b in $(API_BUILDS); do \
	  "$$tmp/apigen" -out "$$tmp/api" $$b $(API_PKGS); \
	  diff -ru api "$$tmp/api" || { \
	    echo "api/ differs from the exported API$${b:+ (apigen $$b)}: review the diff above, then run make api"; exit 1; }; \
	done; echo "api/ matches the exported API"

# The tool, end to end: `make demo` pushes DEMO_SIZE (1 GiB) through a
# loopback spipe connect/listen pair and checks it; `make e2e` drives a real
# sshd and curl through spipe; `make man` writes the man pages to MANDIR.
.PHONY: demo e2e man
demo:
	BIN=$(BIN) GO=$(GO) bash scripts/demo.sh

e2e:
	BIN=$(BIN) GO=$(GO) bash scripts/e2e.sh

MANDIR ?= bin/man
man:
	$(GO) build -o $(BIN) ./cmd/spipe
	rm -rf $(MANDIR) && $(BIN) man $(MANDIR)
	@echo "man pages in $(MANDIR): man -l $(MANDIR)/spipe.1"

# The kernel test binaries again on emulated CPUs (Debian's qemu-user):
# Haswell has AVX2 but no AVX-512, Penryn SSSE3 but no AVX, so x/sys/cpu
# reports less and dispatch falls back for real. A kernel that strays into
# EVEX encodings dies with SIGILL here, and SPIPE_EXPECT_KERNEL makes the
# dispatch tests prove each run used the path it was meant to test.
# QEMU_MODELS pairs a CPU model with the kernel name each package must pick.
QEMU        ?= qemu-x86_64
QEMU_PKGS   ?= ./internal/chachacore ./pkg/chacha20 ./internal/salsacore ./pkg/salsa20 ./internal/poly1305
QEMU_MODELS ?= Haswell:avx2 Penryn:ssse3
.PHONY: test-qemu
test-qemu: test-tools
	@command -v $(QEMU) >/dev/null || { echo "test-qemu needs $(QEMU) (apt-get install qemu-user)"; exit 1; }
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	for pkg in $(QEMU_PKGS); do \
	  bin="$$tmp/$$(echo $$pkg | tr / _).test"; \
	  $(GO) test -c -o "$$bin" $$pkg; \
	  for m in $(QEMU_MODELS); do \
	    echo "== $$pkg on $${m%%:*} (expect $${m##*:})"; status=0; \
	    (cd $$pkg && SPIPE_EXPECT_KERNEL=$${m##*:} $(QEMU) -cpu $${m%%:*} "$$bin" \
	      -test.short -test.count=1) >"$$tmp/out" 2>&1 || status=$$?; \
	    grep -v "TCG doesn't support requested feature" "$$tmp/out" | tail -n 20; \
	    [ $$status -eq 0 ] || { echo "FAIL: $$pkg on $${m%%:*}"; exit 1; }; \
	  done; \
	done

# Our ChaCha20 against OpenSSL (AVX-512, and AVX2 with AVX-512 masked off)
# and x/crypto, pinned to one core, medians of BENCHCOUNT interleaved runs;
# then the Salsa20 rows. Not part of `make test`: it takes minutes.
.PHONY: bench-compare
bench-compare:
	GO=$(GO) BENCHCOUNT=$(BENCHCOUNT) bash scripts/bench-compare.sh
	@if [ -f scripts/bench-salsa.sh ]; then GO=$(GO) BENCHCOUNT=$(BENCHCOUNT) bash scripts/bench-salsa.sh; fi
	@if [ -f scripts/bench-poly1305.sh ]; then GO=$(GO) BENCHCOUNT=$(BENCHCOUNT) bash scripts/bench-poly1305.sh; fi
	@if [ -f scripts/bench-aead.sh ]; then GO=$(GO) BENCHCOUNT=$(BENCHCOUNT) bash scripts/bench-aead.sh; fi

# The long form of the stress suite (internal/stress; its short form runs
# in `make test`): 1,000 concurrent 1 MiB echoes through one connect/listen
# pair, 500 stalled handshakes, faults while 32 connections run, listener
# restarts. Logs peak RSS per connection and goroutine/fd counts.
.PHONY: stress
stress:
	SPIPE_STRESS=1 $(GO) test -count=1 -v -timeout 30m ./internal/faultproxy ./internal/stress

# spipe (and spipe connect --mux) beside raw TCP, a plaintext relay pair
# (our engine, encryption off), spiped and ssh -L on loopback: bulk MB/s,
# pinned round trips and connections/s, medians of REPS with a
# quiet-machine wait before each measurement; the time to a new
# connection's first byte through a link of DELAY_MS each way
# (internal/delayproxy); a round trip beside a bulk stream; and the ratios
# the hardening issue and issue 17 target. Needs spiped and
# openssh-server; not part of `make test`. SIZE, RTT_N, CPS_N, CPS_P, REPS,
# SUITES, QUIET_BUSY, QUIET_TIMEOUT, DELAY_MS, TTFB_N, FAIR_N override the
# defaults.
.PHONY: bench-pipe
bench-pipe:
	GO=$(GO) bash scripts/bench-pipe.sh
