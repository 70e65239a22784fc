// Package sim is nextup's model-based randomized simulation, in the spirit
// of TigerBeetle's VOPR and FoundationDB's simulation testing.
//
// Each seed builds a world from nothing but that seed: a fake clock, a
// fresh store (a SQLite file; in TestSimPostgres a PostgreSQL schema), the
// waitlist service with ids and tokens drawn from the seed's PRNG, the
// timer sweeper, and the outbox relay with an email and an SMS provider
// played by the seed: every address a person gives is drawn to be good,
// flaky, down (its messages go dead after their last attempt), refused for
// good (no such mailbox or number) or refused by a provider's policy, and
// the relay's dead letters run the fallback in their own transaction, as
// `nextup serve` wires it (relay.go). It then takes random steps —
// businesses, slots and events, joins, event registrations (confirmed at
// once or waitlisted; by staff, or through the public event page, with
// named guests and, when waitlisted, one waitlist confirmation message)
// and their cancellations, the organiser's override,
// check-ins and no-shows, releases, resizes, claims (right,
// stale, repeated, forged and concurrent; by the offer's link, or from the
// status page, which answers whatever offer the entry holds), declines, withdrawals, leaves,
// cancelled bookings and no-shows, clock jumps that fire timers, relay
// rounds (after a short clock step or not), a carrier's "undelivered"
// report for a text that went out, restarts of the store, store faults
// injected half-way through a use case's transaction, a timer sweep's or
// a relay round's (most often the one that records a dead letter with its
// fallback) — and after every step reads the store and checks it against
// an independent model: the seat invariant, offers ending exactly once,
// fair order, reverse matching, hand-backs, the audit trail, the outbox,
// the timers, and the dead letters: each dead message of a live offer has
// its fallback on the other channel, a fallback_skipped row, or its offer
// ended no_channel with the slot rolling on, in the same committed state;
// one fallback per message at most; an address refused for good is opted
// out and never sent to again (check.go lists them). A failing seed
// prints its step log and replays exactly:
//
//	go test ./sim                                       # 200 seeds, about a minute
//	go test ./sim -run TestSim -sim.seed=17 -sim.trace  # replay one seed, every step
//	go test ./sim -run 'TestSim$' -sim.seeds=10000 -timeout 0
//	go test ./sim -run TestSimPostgres -sim.pgseeds=100  # NEXTUP_TEST_POSTGRES
//
// TestSimPostgres runs seeds on PostgreSQL and then on SQLite and requires
// the same steps and the same final state from both (sequence numbers
// compared by rank: a PostgreSQL sequence keeps the numbers rolled-back
// transactions drew). TestSimCopyToPostgres copies what seeds leave in
// SQLite to PostgreSQL with store/storecopy, verified kind by kind.
//
// Flags: -sim.seeds, -sim.first, -sim.seed, -sim.steps, -sim.trace,
// -sim.strict, -sim.pgseeds. The SQLite files live in /dev/shm when there
// is one (NEXTUP_SIM_DIR picks another parent), because per-commit fsyncs
// on a shared disk, not the checks, made the run slow.
//
// The simulation itself is not test code, so that a store in another module
// (the DynamoDB store in aws/) can run the same seeds: RunSeed runs one seed
// on a Backend, and Compare requires two backends to take the same steps to
// the same state, the way TestSimPostgres holds PostgreSQL to SQLite:
//
//	lite := sim.RunSeed(ctx, sim.Backend{Name: "sqlite", Open: openSQLite}, seed, sim.DefaultSteps, nil)
//	dyn := sim.RunSeed(ctx, sim.Backend{Name: "dynamo", Open: open}, seed, sim.DefaultSteps, nil)
//	// check lite.Failure() and dyn.Failure(), then
//	if d := sim.Compare(dyn, lite); d != "" {
//		t.Fatal(d)
//	}
package sim
