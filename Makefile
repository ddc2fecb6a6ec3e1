# nodwyn — make targets. `make test` is what CI runs (through .ci/run).
GO        ?= go
STATICCHECK_VERSION ?= v0.8.2
BIN       := bin
export CGO_ENABLED ?= 0

.PHONY: all build test test-short check fmt vet lint tidy-check bench demo tools clean

all: build

# The version nodwyn reports (nodwyn version, the trajectory's agent.version):
# git describe of the checkout, else "dev".
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X github.com/nodwyn/nodwyn/internal/cli.Version=$(VERSION)

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/nodwyn ./cmd/nodwyn

# The tests run with the race detector (it needs cgo, so a C compiler).
test:
	CGO_ENABLED=1 $(GO) test -race -count=1 ./...
	@if command -v python3 >/dev/null 2>&1; then \
	  echo "python3 -m unittest discover -s integrations/harbor -t ."; \
	  PYTHONDONTWRITEBYTECODE=1 NODWYN_TEST_GO="$(GO)" python3 -m unittest discover -s integrations/harbor -t .; \
	else echo "skip: no python3, so the Harbor adapter's tests (integrations/harbor) did not run"; fi

test-short:
	$(GO) test -count=1 ./...

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
