# spipe — build, test and measure. `make test` is what CI runs.
GO          ?= go
GOBIN       := $(shell $(GO) env GOPATH)/bin
STATICCHECK ?= $(GOBIN)/staticcheck
FUZZTIME    ?= 10s
BENCHCOUNT  ?= 6
BIN         := bin/spipe

.PHONY: all build test unit lint fmt vet staticcheck bench fuzz generate check-generated clean

all: build

build:
	$(GO) build ./...

# The suite CI runs: lint, the race-checked tests, and the pure-Go build.
test: lint unit

unit:
	$(GO) test -race ./...
	$(GO) test -tags purego ./...

lint: fmt vet staticcheck

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	$(GO) vet -tags purego ./...

staticcheck:
	$(STATICCHECK) ./...

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

generate:
	$(GO) generate ./...

clean:
	rm -rf bin

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
