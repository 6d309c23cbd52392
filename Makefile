# The two commands the README promises, and the longer runs kept out of CI.
GO ?= go

.PHONY: demo test check bench bench-pkg bench-short soak clean

# demo runs the flash-sale demo on an embedded miniredis (no Redis needed).
demo:
	$(GO) run ./cmd/flashsale

# test is the whole suite, set-up included: the tests start their own
# redis-server processes (installing redis-server with apt-get when it is
# missing and they run as root). .ci/run calls exactly this.
test: check
	$(GO) test -race -count=1 -timeout 20m ./...
	$(GO) test -count=1 -run '^$$' -bench . -benchtime 1x -timeout 10m .
	cd bench && $(GO) run . -short

# check is formatting and vet.
check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd bench && $(GO) vet ./...

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
