# nextup — make targets a newcomer can paste. See README.md.

GO      ?= go
SEEDS   ?= 10000
FUZZTIME ?= 15s
BENCHTIME ?= 1s

.PHONY: all run demo test lint race sim fuzz bench build

all: lint test

build:
	$(GO) build -o bin/nextup ./cmd/nextup

# A guided run of the engine on a fresh embedded store.
run demo:
	$(GO) run ./cmd/nextup demo

# Every test: vet, unit, conformance, engine properties, fuzz seed corpora,
# the simulation with its default 200 seeds (and 12 on PostgreSQL), the
# race detector on the packages with concurrency, and one short run of the
# PostgreSQL claims benchmark so that it keeps working (its figures come
# from make bench).
test: lint
	$(GO) test -count=1 ./...
	$(GO) test -count=1 -tags bedrock ./intake/bedrock
	$(GO) test -count=1 -race ./store/... ./timer/... ./outbox/... ./waitlist/... ./web/... ./cmd/...
	$(GO) test -count=1 -run '^$$' -bench 'ClaimsPostgres|Registrations' -benchtime 50x ./waitlist

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags bedrock ./intake/bedrock ./cmd/nextup

# More simulation seeds than CI runs: make sim SEEDS=10000
sim:
	$(GO) test ./sim -run 'TestSim$$' -count=1 -timeout 0 -sim.seeds=$(SEEDS)

# Coverage-guided fuzzing of every fuzz target for FUZZTIME each.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$f"; \
	    $(GO) test $$pkg -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME); \
	  done; \
	done

# Benchmarks report ratios to a baseline measured in the same run; the
# PostgreSQL claims benchmark (NEXTUP_TEST_POSTGRES) runs 2000 claims.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...
	$(GO) test -run '^$$' -bench 'ClaimsPostgres|Registrations' -benchtime 2000x ./waitlist
