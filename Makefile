# nextup — make targets a newcomer can paste. See README.md.

GO      ?= go
SEEDS   ?= 10000
FUZZTIME ?= 15s
BENCHTIME ?= 1s

# staticcheck, pinned so that every machine and CI report the same
# findings (v0.8.2 is staticcheck 2026.2.2); make lint installs this
# version into $(GOBIN) when another one, or none, is there.
STATICCHECK_VERSION := v0.8.2
GOBIN_DIR   := $(or $(shell $(GO) env GOBIN),$(shell $(GO) env GOPATH)/bin)
STATICCHECK := $(GOBIN_DIR)/staticcheck

# Tests that skip because a server or tool is missing (PostgreSQL,
# Chromium, stripe-mock) write a line here (internal/missing); make test
# names them all at the end.
SKIP_LOG ?= $(CURDIR)/bin/test-skips.tsv
export NEXTUP_SKIP_LOG := $(SKIP_LOG)

# Both modules of go.work: the main module (./...) and the AWS module
# (./aws/...), which ./... does not reach.
PKGS := ./... ./aws/...

.PHONY: all run demo test test-suites skipped lint staticcheck race sim sim-dynamo fuzz bench build lambda coldstart crash backup-drill

all: lint test

build:
	$(GO) build -o bin/nextup ./cmd/nextup
	$(GO) build -o bin/nextup-aws ./aws/cmd/nextup-aws

# The Lambda bootstrap for the provided.al2023 arm64 runtime, zipped as
# Lambda takes it: dist/lambda-arm64.zip holding bootstrap.
lambda:
	@mkdir -p dist
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -tags lambda.norpc -trimpath -ldflags '-s -w' -o dist/bootstrap ./aws/cmd/lambda
	cd dist && rm -f lambda-arm64.zip && $(GO) run ../aws/cmd/lambda/zipbootstrap bootstrap lambda-arm64.zip

# The Lambda bootstrap's cold start (init: exec to its first GET of the
# next invocation) and warm durations, and a minimal Python function's
# init for comparison, under a Lambda Runtime API of our own on dynoxide
# (aws/internal/coldstart). Not part of make test: it times things.
COLDSTART_STARTS ?= 20
coldstart:
	$(GO) test -count=1 -timeout 30m -run '^TestMeasure$$' -v ./aws/internal/coldstart -args -coldstart.starts=$(COLDSTART_STARTS)

# A guided run of the engine on a fresh embedded store.
run demo:
	$(GO) run ./cmd/nextup demo

# Every test of both modules: lint (gofmt, vet, staticcheck), unit,
# conformance, engine properties, fuzz seed corpora, the simulation with
# its default 200 seeds (and 12 on PostgreSQL), the race detector on the
# packages with concurrency (less the kill-9 drill and the hostile-input
# battery, sequential requests that the plain run covers and that the race
# detector would slow past the package timeout), and one short run of the PostgreSQL claims
# benchmark so that it keeps working (its figures come from make bench).
# It ends with one line naming every suite that skipped for a missing
# server or tool, pass or fail.
test: lint
	@mkdir -p $(dir $(SKIP_LOG)); rm -f $(SKIP_LOG); \
	status=0; $(MAKE) --no-print-directory test-suites || status=$$?; \
	$(MAKE) --no-print-directory skipped; exit $$status

test-suites:
	$(GO) test -count=1 -timeout 30m $(PKGS)
	$(GO) test -count=1 -timeout 30m -race -skip '^(TestCrashDrill|TestHostileInput)$$' ./store/... ./timer/... ./outbox/... ./waitlist/... ./web/... ./cmd/...
	$(GO) test -count=1 -run '^$$' -bench 'ClaimsPostgres|Registrations' -benchtime 50x ./waitlist

# The suites that skipped in the last make test, in one loud line.
skipped:
	@if [ -s $(SKIP_LOG) ]; then \
	  awk -F '\t' '!seen[$$1]++ { s = s sep $$1 " (" $$3 "; to enable: " $$2 ")"; sep = "; " } \
	    END { print "*** SKIPPED, not tested: " s ". NEXTUP_REQUIRE_ALL=1 turns these skips into failures. ***" }' $(SKIP_LOG); \
	else echo "make test: no suite skipped (PostgreSQL, Chromium, stripe-mock, DynamoDB and the Lambda emulator all ran)"; fi

lint: staticcheck
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(STATICCHECK) $(PKGS)

# Installs the pinned staticcheck unless it is already there.
staticcheck:
	@$(STATICCHECK) -version 2>/dev/null | grep -qF '($(STATICCHECK_VERSION:v%=%))' || \
	  { echo "installing staticcheck $(STATICCHECK_VERSION)"; $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION); }

# More simulation seeds than CI runs: make sim SEEDS=10000
sim:
	$(GO) test ./sim -run 'TestSim$$' -count=1 -timeout 0 -sim.seeds=$(SEEDS)

# The simulation on DynamoDB (dynoxide), each seed compared with SQLite:
# make sim-dynamo SEEDS=500
sim-dynamo:
	$(GO) test ./aws/sim -count=1 -timeout 0 -sim.seeds=$(SEEDS)

# The kill-9 campaign: real `nextup serve` processes on SQLite, PostgreSQL
# and two PostgreSQL instances, on the real clock, under mixed load, killed
# CRASH_KILLS times each (CI runs 3); NEXTUP_TEST_POSTGRES for PostgreSQL.
# make crash CRASH_KILLS=100; replay a seed with CRASH_ARGS=-crash.seed=N
CRASH_KILLS ?= 100
crash:
	$(GO) test -count=1 -timeout 0 -run '^TestCrashDrill$$' -v ./cmd/nextup/cli -args -crash.kills=$(CRASH_KILLS) $(CRASH_ARGS)

# The backup, restore and storage-failure tests alone (docs/backup.md):
# a live backup under load, refused restores, the Litestream restore drill
# (litestream on PATH or in $(GOBIN)), a full and a read-only disk (root).
backup-drill:
	$(GO) test -count=1 -v -run 'Backup|Restore|Litestream|DiskFull|ReadOnly|StorageErrors' ./store/sqlite ./cmd/nextup/cli

# Coverage-guided fuzzing of every fuzz target for FUZZTIME each.
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$f"; \
	    $(GO) test $$pkg -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME); \
	  done; \
	done

# Benchmarks report ratios to a baseline measured in the same run; the
# PostgreSQL claims benchmark (NEXTUP_TEST_POSTGRES) runs 2000 claims.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) $(PKGS)
	$(GO) test -run '^$$' -bench 'ClaimsPostgres|Registrations' -benchtime 2000x ./waitlist
