# toolgate — the Makefile is the contract: CI only calls these targets.
# `make run` and `make test` must work on a fresh machine with Go and npm.

SHELL        := /bin/bash
.SHELLFLAGS  := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO          ?= go
BIN         := $(CURDIR)/bin
MODULE      := github.com/toolgate/toolgate
INTEROP     := testplugins/interop
# Where make run serves: make run ADDR=127.0.0.1:9000 when 8931 is taken.
ADDR        ?= 127.0.0.1:8931
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS     := -X $(MODULE)/host/version.Toolgate=$(VERSION)
# Every OS/architecture toolgate supports: make check builds and vets each,
# so Linux-only code cannot land unnoticed. Test files are vetted too.
PLATFORMS   := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
# Tests run with the race detector, always. TEST_TIMEOUT bounds one package.
TEST_TIMEOUT ?= 20m
TESTFLAGS   ?=

# Every binary and the package it builds from, as name=package: the one
# list, binaries.list, which internal/testbin and deploy/Dockerfile read too.
BINARIES := $(shell awk '!/^\#/ && NF { print $$1 "=" $$2 }' binaries.list)

.PHONY: help
help: ## list targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n",$$1,$$2}'

.PHONY: deps
deps: ## download Go modules
	$(GO) mod download

.PHONY: build
build: deps ## build bin/toolgate, the plugins and the test servers
	@mkdir -p $(BIN) $(BIN)/plugins $(BIN)/testplugins
	@for pair in $(BINARIES); do \
		name=$${pair%%=*}; pkg=$${pair#*=}; \
		echo "go build -o bin/$$name $$pkg"; \
		$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/$$name $$pkg; \
	done

.PHONY: proto
proto: ## regenerate sdk/internal/pb from sdk/proto (pinned generators into bin/tools)
	bash sdk/scripts/genproto.sh

.PHONY: interop
interop: $(INTEROP)/node_modules/.installed ## install the pinned npm referees (conformance, everything, inspector, Claude Code, Codex CLI)

$(INTEROP)/node_modules/.installed: $(INTEROP)/package.json $(INTEROP)/package-lock.json
	@command -v npm >/dev/null || { echo "npm is required for the interop tests (conformance suite, server-everything, inspector): install Node.js and npm" >&2; exit 1; }
	cd $(INTEROP) && npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

# The ssh executor test drives the system's OpenSSH client against an SSH
# server of its own. Fresh Debian images lack the client: as root with
# apt-get it is installed, anywhere else its absence stops make test here.
.PHONY: ssh-client
ssh-client: ## make sure the OpenSSH client the ssh executor test drives is installed
	@if command -v ssh >/dev/null; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "apt-get install openssh-client (for the ssh executor test)"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get install -y --no-install-recommends openssh-client >/dev/null 2>&1 || \
			{ apt-get update >/dev/null && apt-get install -y --no-install-recommends openssh-client; }; \
	else \
		echo "the ssh executor test needs the OpenSSH client (ssh): install openssh-client (Debian/Ubuntu) or your system's OpenSSH, then rerun" >&2; \
		exit 1; \
	fi

# The approvals browser test (host/inbox) drives headless Chromium. Fresh
# Debian images lack it: as root with apt-get it is installed, anywhere
# else a missing Chromium/Chrome stops make test here (macOS and Windows
# CI runners have Chrome; TOOLGATE_CHROME names another executable).
.PHONY: chromium
chromium: ## make sure the Chromium the approvals browser test drives is installed
	@if [ -n "$${TOOLGATE_CHROME:-}" ] || command -v chromium >/dev/null || command -v chromium-browser >/dev/null || \
		command -v google-chrome >/dev/null || command -v google-chrome-stable >/dev/null || \
		[ -x "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome" ] || \
		[ -x "/c/Program Files/Google/Chrome/Application/chrome.exe" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "apt-get install chromium (for the approvals browser test)"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 || \
			{ apt-get update >/dev/null && apt-get install -y --no-install-recommends chromium; }; \
	else \
		echo "the approvals browser test needs Chromium or Chrome: install chromium (Debian/Ubuntu: apt-get install chromium) or Google Chrome, or set TOOLGATE_CHROME to its executable, then rerun" >&2; \
		exit 1; \
	fi

# Test artifacts (the approvals inbox screenshot) go to bin/artifacts.
ARTIFACTS := $(BIN)/artifacts

.PHONY: test
test: build interop ssh-client chromium ## run every test with the race detector (builds binaries and referees first); lists skipped tests at the end
	@# deploy/validate is a module of its own (k8s.io/api stays out of
	@# toolgate's graph): decode and cross-check the Kubernetes manifests.
	cd deploy/validate && $(GO) test -race -timeout $(TEST_TIMEOUT) $(TESTFLAGS) ./...
	@# -json through internal/testsummary: the output of a plain go test
	@# (ok/FAIL lines, failures, races), then every skipped test and why.
	@# The exit status stays go test's (pipefail).
	@echo "test artifacts go to $(ARTIFACTS): the approvals inbox screenshot is $(ARTIFACTS)/approvals-inbox.png"
	TOOLGATE_BIN=$(BIN) TOOLGATE_TESTPLUGINS_DIR=$(BIN)/testplugins TOOLGATE_INTEROP=$(CURDIR)/$(INTEROP) TOOLGATE_ARTIFACTS=$(ARTIFACTS) \
		$(GO) test -race -json -timeout $(TEST_TIMEOUT) $(TESTFLAGS) ./... | $(GO) run ./internal/testsummary
	@echo "screenshot of the approvals inbox: $(ARTIFACTS)/approvals-inbox.png"

# The tests that need containment by cgroup v2 (they skip elsewhere, and
# make test lists them at the end). test-cgroup runs them with
# TOOLGATE_REQUIRE_CGROUP=1, which turns that skip into a failure: run it
# as root or inside a delegated cgroup (systemd-run --user --scope -p
# Delegate=yes make test-cgroup); CI's cgroup job does.
CGROUP_TESTS := ^(TestCloseEndsEverythingTheChildStarted|TestKilledSupervisorIsReplaced|TestKillWithoutCgroupKill|TestPluginRunsInACgroupOfItsOwn|TestNoProcessOutlivesToolgate)$$

.PHONY: test-cgroup
test-cgroup: build ## run the cgroup containment tests, failing (not skipping) without a delegated cgroup v2
	TOOLGATE_REQUIRE_CGROUP=1 TOOLGATE_BIN=$(BIN) TOOLGATE_TESTPLUGINS_DIR=$(BIN)/testplugins \
		$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) -run '$(CGROUP_TESTS)' ./internal/contain/ ./host/pluginhost/ ./host/gateway/

.PHONY: bench
bench: build ## run the benchmarks (ratios against baselines measured in the same run)
	TOOLGATE_BIN=$(BIN) $(GO) test -run '^$$' -bench . -benchmem -count 1 ./...

.PHONY: check
check: proto ## gofmt, go vet, build and vet for every supported OS/arch, the sdk/ import boundary, the pipeline boundary, the low layers' config boundary, generated code up to date
	@unformatted=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go' | grep -v '/internal/pb/')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	@# go vet compiles and type-checks every package and test file for the
	@# target; linking every main package per target would take minutes, so
	@# only toolgate itself is linked (into bin/cross/).
	@for platform in $(PLATFORMS); do \
		os=$${platform%/*}; arch=$${platform#*/}; \
		echo "GOOS=$$os GOARCH=$$arch go vet ./... && go build ./host/cmd/toolgate"; \
		GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) vet ./... || { echo "go vet fails for $$platform: put OS-specific code in _$$os.go files (see docs/processes.md, Platforms)"; exit 1; }; \
		GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) build -o $(BIN)/cross/$$os-$$arch/ ./host/cmd/toolgate || { echo "toolgate does not build for $$platform"; exit 1; }; \
	done
	@leak=$$($(GO) list -deps -test ./sdk/... | grep -E '^$(MODULE)/(host|plugins)(/|$$)' || true); \
	if [ -n "$$leak" ]; then echo "sdk/ must not import host/ or plugins/, but imports:"; echo "$$leak"; exit 1; fi
	@# Only host/pipeline sends requests to servers: no door may skip
	@# admission, hooks, approval or the audit log.
	@$(GO) test -count=1 -run '^TestOnlyThePipelineSendsRequests$$' ./host/pipeline/ || \
		{ echo "a package sends requests to servers outside host/pipeline (listed above): route them through Host.Pipeline().Do"; exit 1; }
	@# The low layers (launch, execution, ratelimit, tokenauth) take their
	@# own option types: they must not depend on host/config.
	@$(GO) test -count=1 -run '^TestLowLayersDoNotDependOnConfig$$' ./host/config/ || \
		{ echo "a low layer depends on host/config (listed above): give it its own option type and translate where it is wired"; exit 1; }
	@changed=$$(git status --porcelain -- sdk/internal/pb); \
	if [ -n "$$changed" ]; then echo "make proto changed generated code; commit the result:"; echo "$$changed"; exit 1; fi
	@echo "check: ok"

.PHONY: run
run: build ## the main job: serve every tool of config.hcl.example to MCP clients at http://$(ADDR)/mcp (Ctrl-C stops)
	@# toolgate prints where to connect and a client one-liner once its servers are up.
	exec $(BIN)/toolgate serve --http $(ADDR) --config config.hcl.example

.PHONY: clean
clean: ## remove build outputs
	rm -rf $(BIN)
