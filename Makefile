# The two commands the README promises, and the longer runs kept out of CI.
GO ?= go

.PHONY: demo test check test-adapters test-modules test-newest test-newest-goredis test-newest-go bench bench-pkg bench-short soak test-servers clean

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
	cd cmd && $(GO) run ./flashsale

# test is the whole suite, set-up included: the tests start their own
# redis-server processes (installing redis-server with apt-get when it is
# missing and they run as root). The race run is at the versions go.mod
# names, the oldest supported; the last two steps are the newest go-redis and
# the newest Go, without -race. .ci/run calls exactly this.
test: check
	$(GO) test -race -count=1 -timeout 20m ./...
	$(GO) test -count=1 -run '^$$' -bench . -benchtime 1x -timeout 10m .
	cd bench && $(GO) run . -short
	$(MAKE) --no-print-directory test-adapters
	$(MAKE) --no-print-directory test-modules
	$(MAKE) --no-print-directory test-newest

# test-adapters vets and tests the framework adapters, each its own module.
test-adapters:
	cd httplimit/ginlimit && $(GO) vet ./... && $(GO) test -race -count=1 ./...
	cd httplimit/echolimit && $(GO) vet ./... && $(GO) test -race -count=1 ./...

# test-modules vets and tests the OpenTelemetry module and the demos, each
# its own module (they depend on OpenTelemetry; the library does not).
test-modules:
	cd redissonotel && $(GO) vet ./... && $(GO) test -race -count=1 -timeout 10m ./...
	cd cmd && $(GO) vet ./... && $(GO) test -race -count=1 -timeout 10m ./...

# test-newest runs vet and the tests (no soak, no benchmarks, no -race) at
# the newest end of both ranges at once: NEWEST_GOREDIS built with the
# NEWEST_GO toolchain, in a scratch copy of the working tree. With the race
# run at the oldest end (go.mod's go-redis, the local Go) it covers both
# corners of the matrix in two runs instead of three; the two targets below
# each move one end alone.
test-newest:
	GOTOOLCHAIN=$(NEWEST_GO) $(GO) version
	.ci/scratch sh -c 'export GOTOOLCHAIN=$(NEWEST_GO) && \
	  $(GO) get github.com/redis/go-redis/v9@$(NEWEST_GOREDIS) && \
	  $(GO) list -m github.com/redis/go-redis/v9 && \
	  $(GO) vet ./... && $(GO) test -count=1 -timeout 20m ./...'

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
	cd bench && $(GO) vet ./...
	cd redissonotel && $(GO) vet ./...
	cd cmd && $(GO) vet ./...

# bench runs the side-by-side suite (bench/, its own module) against
# redislock, redsync, redis_rate and ulule/limiter, with full settings
# (several minutes); it prints Markdown tables.
bench:
	cd bench && $(GO) run .

# bench-short runs every scenario of the suite once, briefly: it fails only
# when a scenario fails, never on speed.
bench-short:
	cd bench && $(GO) run . -short

# bench-pkg runs the package benchmarks for real numbers.
bench-pkg:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 -benchtime 3s .

# soak runs the long history and fault runs (minutes each; set
# REDISSON_SOAK_DURATION, default 2m) and prints their counts.
soak:
	$(GO) test -tags soak -count=1 -run '^TestSoak' -v -timeout 60m .

clean:
	$(GO) clean -testcache
