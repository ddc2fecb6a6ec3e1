# nodwyn — make targets. `make test` is what CI runs (through .ci/run).
GO        ?= go
STATICCHECK_VERSION ?= v0.8.2
BIN       := bin
export CGO_ENABLED ?= 0

.PHONY: all build test test-short test-slow check fmt vet lint tidy-check bench demo tools clean

all: build

# The version nodwyn reports (nodwyn version, the trajectory's agent.version):
# git describe of the checkout, else "dev".
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X github.com/nodwyn/nodwyn/internal/cli.Version=$(VERSION)

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/nodwyn ./cmd/nodwyn

# The tests run with the race detector (it needs cgo, so a C compiler).
# The Harbor adapter's tests run the real binary: it is built alongside the
# Go tests, at the lowest priority, so its compiling takes the time the
# tests leave idle (after them it was 35 s of a cold make test; a -race
# build runs them 20 s slower). GORACE: a -race binary otherwise sleeps a
# second as it exits (atexit_sleep_ms).
# The Harbor adapter's tests run a nodwyn built with -race after the Go
# tests: its packages are those the tests just compiled, so it only links
# (a binary built otherwise would compile everything a second time).
test:
	@d=$$(mktemp -d); \
	echo "CGO_ENABLED=1 GORACE=atexit_sleep_ms=0 $(GO) test -race -count=1 ./..."; \
	CGO_ENABLED=1 GORACE=atexit_sleep_ms=0 $(GO) test -race -count=1 ./...; rc=$$?; \
	CGO_ENABLED=1 $(GO) build -race -o $$d/nodwyn ./cmd/nodwyn >$$d/build.log 2>&1; echo $$? >$$d/build.rc; \
	if [ $$rc -eq 0 ]; then \
	  if ! command -v python3 >/dev/null 2>&1; then \
	    echo "skip: no python3, so the Harbor adapter's tests (integrations/harbor) did not run"; \
	  elif [ "$$(cat $$d/build.rc)" != 0 ]; then \
	    cat $$d/build.log; rc=1; \
	  else \
	    echo "python3 -m unittest discover -s integrations/harbor -t ."; \
	    GORACE=atexit_sleep_ms=0 PYTHONDONTWRITEBYTECODE=1 NODWYN_TEST_BINARY=$$d/nodwyn python3 -m unittest discover -s integrations/harbor -t . || rc=1; \
	  fi; \
	fi; \
	rm -rf $$d; exit $$rc

test-short:
	$(GO) test -count=1 ./...

# The for-real suites that take tens of seconds each (the floor against the
# exfiltration corpus, toolchains and tracing under it, go test in a fresh
# home under write confinement, whole runs of npm ci, pip, cargo, pytest, go
# mod download, git fetch and the network attempts under the confinement):
# make test skips them, saying so; .ci/run runs them after make test.
SLOW_TESTS = TestFloorHoldsTheExfiltrationCorpusForReal|TestFloorDeniesWhatTheLineNeverNames|TestFloorLetsToolchainsWork|TestFloorKeepsACommandFromTracingNodwyn|TestConfinedWritesKeepOrdinaryWorkInAFreshHome|TestServerEverything|TestEcosystemsWorkUnderConfinement|TestGitFetchFromAHostNotAllowedIsRefused|TestNetworkAttemptsFailUnderConfinement
test-slow:
	NODWYN_SLOW_TESTS=1 CGO_ENABLED=1 GORACE=atexit_sleep_ms=0 $(GO) test -race -count=1 -run '^($(SLOW_TESTS))$$' ./internal/sandbox/ ./internal/session/ ./internal/mcp/ ./cmd/nodwyn/

fmt:
	@out=$$(gofmt -s -l $$(git ls-files '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

tools:
	@command -v staticcheck >/dev/null 2>&1 || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

lint: tools
	PATH="$$PATH:$$($(GO) env GOPATH)/bin" staticcheck ./...

tidy-check:
	@cp go.mod /tmp/nodwyn-go.mod.bak; cp go.sum /tmp/nodwyn-go.sum.bak; \
	$(GO) mod tidy; \
	if ! cmp -s go.mod /tmp/nodwyn-go.mod.bak || ! cmp -s go.sum /tmp/nodwyn-go.sum.bak; then \
	  echo "go mod tidy changes go.mod/go.sum; run it and commit"; \
	  cp /tmp/nodwyn-go.mod.bak go.mod; cp /tmp/nodwyn-go.sum.bak go.sum; exit 1; fi

check: fmt vet lint tidy-check test

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./scheme/ ./internal/... ./cmd/nodwyn/
	cd bench && $(GO) test -run '^$$' -bench . -benchmem .

demo: build
	@./scripts/demo.sh

clean:
	rm -rf $(BIN)
