# The two commands the README promises, and the longer runs kept out of CI.
GO ?= go

.PHONY: demo test test-race check test-adapters test-modules test-install test-newest test-newest-goredis test-newest-go bench bench-pkg bench-short soak test-servers clean

# Every target builds each module with that module's own build list. The
# committed go.work (for editors and hand-run commands) joins the six modules
# into one build list with the highest version any of them asks for, which
# would move the root off the oldest go-redis it supports; so the root's
# commands here run with no workspace (GOWORK=off, exported to every recipe,
# the scratch copies of test-newest included), and a sub-module's run through
# .ci/inmodule, a one-module workspace that takes the root (and redissonotel)
# from this tree, as the replace lines in go.mod once did.
export GOWORK := off
IN = .ci/inmodule

# go.mod requires the oldest go-redis the module builds and passes its tests
# with, so the main run of make test is at that end. The newest end is two
# runs more: NEWEST_GOREDIS is the go-redis the first requires instead
# ("latest": the newest release the Go module proxy serves), NEWEST_GO the Go
# toolchain of the second (the go command fetches it from the proxy).
NEWEST_GOREDIS ?= latest
NEWEST_GO ?= go1.27.3

# demo runs the flash-sale demo on an embedded miniredis (no Redis needed).
# The demos are the module cmd/, so that the library's module takes no
# OpenTelemetry dependency (their -metrics flag serves Prometheus text).
demo:
	$(IN) cmd $(GO) run ./flashsale

# test is the whole suite, set-up included: the tests start their own
# redis-server processes (installing redis-server with apt-get when it is
# missing and they run as root). The race run is at the versions go.mod
# names, the oldest supported; beside it, test-newest runs the suite at the
# newest go-redis and the newest Go, without -race. .ci/run calls exactly this.
#
# The test runs go through .ci/testprogress (standard library only, built
# first and tested itself), which prints a line per finished package, every
# 30s the tests finished so far in each running package and the tests running
# now, the whole output of every failed test and a summary, and exits with go
# test's status. TEST_PARALLEL is go test's -parallel: the slow tests that
# call t.Parallel (each on its own servers or keys) mostly wait, so they run
# four at a time even on 2 cores.
TESTPROGRESS = $(CURDIR)/.ci/testprogress/testprogress
TEST_PARALLEL ?= 4
#
# The race run and test-newest run side by side (make -j2): the suite mostly
# waits (for leases, wake-ups, failovers; a load average near 1 on 2 cores
# during the race run alone), so the two together take little longer than
# the race run, each on its own redis-server processes and free ports.
# test-newest's lines start with "[newest]".
test: check $(TESTPROGRESS)
	$(GO) test -count=1 ./.ci/testprogress
	$(MAKE) --no-print-directory -j2 test-race test-newest
	$(GO) test -count=1 -run '^$$' -bench . -benchtime 1x -timeout 10m .
	$(IN) bench $(GO) run . -short
	$(MAKE) --no-print-directory test-adapters
	$(MAKE) --no-print-directory test-modules
	$(MAKE) --no-print-directory test-install

# test-race is the race run of every package of the root module, at the
# versions go.mod names.
test-race: $(TESTPROGRESS)
	$(TESTPROGRESS) -- $(GO) test -race -count=1 -parallel $(TEST_PARALLEL) -timeout 20m -json ./...

# test-adapters vets and tests the framework adapters, each its own module.
test-adapters:
	$(IN) httplimit/ginlimit sh -c '$(GO) vet ./... && $(GO) test -race -count=1 ./...'
	$(IN) httplimit/echolimit sh -c '$(GO) vet ./... && $(GO) test -race -count=1 ./...'

# test-modules vets and tests the OpenTelemetry module and the demos, each
# its own module (they depend on OpenTelemetry; the library does not).
test-modules:
	$(IN) redissonotel sh -c '$(GO) vet ./... && $(GO) test -race -count=1 -timeout 10m ./...'
	$(IN) cmd sh -c '$(GO) vet ./... && $(GO) test -race -count=1 -timeout 10m ./...'

# test-install does what a user does: it publishes every module of the tree
# (the working tree, uncommitted changes included) at the version the others
# require into a module proxy in a temporary directory, then, outside the
# tree and with no workspace, builds a module importing each published
# package and go-installs redissonctl at that version and runs it. A replace
# left in a published go.mod, or a require of a version not published, fails
# it.
test-install:
	.ci/install-check

# test-newest runs vet and the tests (no soak, no benchmarks, no -race) at
# the newest end of both ranges at once: NEWEST_GOREDIS built with the
# NEWEST_GO toolchain, in a scratch copy of the working tree. With the race
# run at the oldest end (go.mod's go-redis, the local Go) it covers both
# corners of the matrix in two runs instead of three; the two targets below
# each move one end alone. Its only network use is the Go module proxy
# (GOPROXY), and only for what the module cache lacks: the NEWEST_GO
# toolchain (the module golang.org/toolchain), the list of go-redis versions
# ("latest" is a query) and the modules of that go-redis's build, all checked
# against the checksum database (GOSUMDB). The tests run through
# .ci/testprogress, like the race run.
test-newest: $(TESTPROGRESS)
	GOTOOLCHAIN=$(NEWEST_GO) $(GO) version
	.ci/scratch sh -c 'export GOTOOLCHAIN=$(NEWEST_GO) && \
	  $(GO) get github.com/redis/go-redis/v9@$(NEWEST_GOREDIS) && \
	  $(GO) list -m github.com/redis/go-redis/v9 && \
	  $(GO) vet ./... && \
	  $(TESTPROGRESS) -label newest -- $(GO) test -count=1 -parallel $(TEST_PARALLEL) -timeout 20m -json ./...'

# test-newest-goredis runs the tests (no soak, no benchmarks, no -race)
# against NEWEST_GOREDIS, in a scratch copy of the working tree (.ci/scratch)
# so the checkout's go.mod and go.sum stay as they are.
test-newest-goredis:
	.ci/scratch sh -c '$(GO) get github.com/redis/go-redis/v9@$(NEWEST_GOREDIS) && \
	  $(GO) list -m github.com/redis/go-redis/v9 && \
	  $(GO) vet ./... && $(GO) test -count=1 -timeout 20m ./...'

# test-newest-go runs vet and the tests (no soak, no benchmarks, no -race)
# with the NEWEST_GO toolchain, at the versions go.mod names.
test-newest-go:
	GOTOOLCHAIN=$(NEWEST_GO) $(GO) version
	GOTOOLCHAIN=$(NEWEST_GO) $(GO) vet ./...
	GOTOOLCHAIN=$(NEWEST_GO) $(GO) test -count=1 -timeout 20m ./...

$(TESTPROGRESS): $(wildcard .ci/testprogress/*.go)
	$(GO) build -o $@ ./.ci/testprogress

# test-servers runs the root suite (no -race, -count=1) against each server
# binary of SERVERS, a comma-separated list of absolute paths to redis-server
# or valkey-server, one after the other, and ends with a PASS/FAIL line per
# server naming the failing tests (docs/servers.md: which servers, results).
#   make test-servers SERVERS=/usr/bin/redis-server,/opt/valkey/valkey-server
test-servers:
	@test -n "$(SERVERS)" || { echo "usage: make test-servers SERVERS=/abs/server-a,/abs/server-b"; exit 2; }
	GO=$(GO) .ci/test-servers '$(SERVERS)'

# check is formatting and vet.
check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(IN) bench $(GO) vet ./...
	$(IN) redissonotel $(GO) vet ./...
	$(IN) cmd $(GO) vet ./...

# bench runs the side-by-side suite (bench/, its own module) against
# redislock, redsync, redis_rate and ulule/limiter, with full settings
# (several minutes); it prints Markdown tables.
bench:
	$(IN) bench $(GO) run .

# bench-short runs every scenario of the suite once, briefly: it fails only
# when a scenario fails, never on speed.
bench-short:
	$(IN) bench $(GO) run . -short

# bench-pkg runs the package benchmarks for real numbers.
bench-pkg:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 -benchtime 3s .

# soak runs the long history and fault runs (minutes each; set
# REDISSON_SOAK_DURATION, default 2m) and prints their counts. The reliable
# queue's crash tests (a server, and a partitioned queue on a Cluster) run
# REDISSON_SOAK_JOBS jobs each (default 1,000,000; e.g. make soak
# REDISSON_SOAK_JOBS=30000 for a short run).
REDISSON_SOAK_JOBS ?= 1000000
export REDISSON_SOAK_JOBS
soak:
	$(GO) test -tags soak -count=1 -run '^TestSoak' -v -timeout 180m .

clean:
	$(GO) clean -testcache
