# nodwyn — make targets. `make test` is what CI runs (through .ci/run).
GO        ?= go
STATICCHECK_VERSION ?= v0.8.2
BIN       := bin
export CGO_ENABLED ?= 0

.PHONY: all build test test-race test-short test-slow check fmt vet lint tidy-check bench demo tools clean

all: build

# The version nodwyn reports (nodwyn version, the trajectory's agent.version):
# git describe of the checkout, else "dev".
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X github.com/nodwyn/nodwyn/internal/cli.Version=$(VERSION)

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/nodwyn ./cmd/nodwyn

# make test: every package's tests, built as nodwyn ships (CGO_ENABLED=0,
# no race detector), and the Harbor adapter's Python tests against a nodwyn
# built the same way. The binary is built first: its packages are those the
# Go tests compile next, so it costs only its link, and the Python tests run
# alongside the Go tests (mostly waiting on the processes they start), their
# output printed after. go vet's checks are make vet's (make check, .ci/run),
# not repeated here. -p: go test runs this many builds and test binaries at
# once (by default one per core); the test binaries often wait on the
# processes, namespaces and servers they start, so twice as many as cores
# keeps the cores busy (a cold run on 2 shared cores: 280-310 CPU-seconds
# in 153-169 s, 2026-12-06).
# -parallel: within a package, this many parallel tests at once (by default
# one per core); the testscripts mostly wait on the nodwyn processes they
# start: cmd/nodwyn's tests take 22 s of wall at 8 against 38 s at 2, for
# the same processor time.
# make test-race: the same under the race detector (it needs cgo, so a C
# compiler). Instrumented tests run 2-5 times slower (about 490
# CPU-seconds cold on 2 cores when make test took 330, before the DWARF
# and parallel changes), too many for make test's 3 minutes: .ci/run runs
# both.
# TEST_BUILD: the tests' binaries (and make test's nodwyn) carry no DWARF
# debug information, which no test reads: from an empty build cache on 2
# cores, compiling and linking every test binary takes 124 CPU-seconds
# and 64 s instead of 160 and 82 s (go test -run '^$' ./..., once each
# way). A debugger wants go test run by hand.
# GORACE: a -race binary otherwise sleeps a second as it exits.
test-race: TEST_ENV = CGO_ENABLED=1 GORACE=atexit_sleep_ms=0
test-race: TEST_FLAGS = -race $(TEST_BUILD)
test-race: TEST_PARALLEL = $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
TEST_BUILD = -gcflags=all=-dwarf=false -ldflags=-w
TEST_FLAGS ?= $(TEST_BUILD)
TEST_P    ?= $(shell echo $$((2 * $$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1))))
TEST_PARALLEL ?= $(shell echo $$((4 * $$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1))))
test test-race:
	@d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; rc=0; py=; \
	echo "$(strip $(TEST_ENV) $(GO) build $(TEST_FLAGS)) -o $$d/nodwyn ./cmd/nodwyn"; \
	$(TEST_ENV) $(GO) build $(TEST_FLAGS) -o $$d/nodwyn ./cmd/nodwyn || exit 1; \
	if command -v python3 >/dev/null 2>&1; then \
	  ( $(TEST_ENV) PYTHONDONTWRITEBYTECODE=1 NODWYN_TEST_BINARY=$$d/nodwyn \
	    python3 -m unittest discover -s integrations/harbor -t . >$$d/py.log 2>&1; echo $$? >$$d/py.rc ) & py=$$!; \
	fi; \
	echo "$(strip $(TEST_ENV) $(GO) test $(TEST_FLAGS)) -p $(TEST_P) -parallel $(TEST_PARALLEL) -count=1 -vet=off ./..."; \
	$(TEST_ENV) $(GO) test $(TEST_FLAGS) -p $(TEST_P) -parallel $(TEST_PARALLEL) -count=1 -vet=off ./... || rc=1; \
	if [ -z "$$py" ]; then \
	  echo "skip: no python3, so the Harbor adapter's tests (integrations/harbor) did not run"; \
	else \
	  wait $$py; echo "python3 -m unittest discover -s integrations/harbor -t ."; cat $$d/py.log; \
	  [ "$$(cat $$d/py.rc)" = 0 ] || rc=1; \
	fi; \
	exit $$rc

test-short:
	$(GO) test -count=1 ./...

# The for-real suites that take tens of seconds each (the floor against the
# exfiltration corpus, toolchains and tracing under it, go test in a fresh
# home under write confinement, whole runs of npm ci, pip, cargo, pytest, go
# mod download, git fetch and the network attempts under the confinement,
# the session namespaces' tests again as another user):
# make test skips them, saying so; .ci/run runs them after make test.
# A race test whose swapping goroutine holds a core makes a few rounds
# under make test and all of them here (slowCount).
SLOW_TESTS = TestFloorHoldsTheExfiltrationCorpusForReal|TestFloorDeniesWhatTheLineNeverNames|TestFloorLetsToolchainsWork|TestFloorKeepsACommandFromTracingNodwyn|TestConfinedWritesKeepOrdinaryWorkInAFreshHome|TestConfinedWritesKeepGoAndPythonWork|TestServerEverything|TestServerEverythingInARun|TestEcosystemsWorkUnderConfinement|TestGitFetchFromAHostNotAllowedIsRefused|TestNetworkAttemptsFailUnderConfinement|TestCopyCheckoutRaceWithALinkSwappedForADirectory|TestFollowingARunAsItEnds|TestSessionNSUnprivileged
test-slow:
	NODWYN_SLOW_TESTS=1 CGO_ENABLED=1 GORACE=atexit_sleep_ms=0 $(GO) test -race $(TEST_BUILD) -count=1 -run '^($(SLOW_TESTS))$$' ./internal/sandbox/ ./internal/session/ ./internal/mcp/ ./internal/daemon/runs/ ./cmd/nodwyn/

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
