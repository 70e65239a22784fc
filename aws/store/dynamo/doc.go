// Package dynamo is nextup's store on Amazon DynamoDB (on-demand: nothing
// always on, pay per request), with the same meaning as SQLite and
// PostgreSQL: it passes store/storetest. It lives in the AWS module, so
// the default binary does not link the AWS SDK; nextup-aws opens it with
// --db 'dynamodb://HOST:PORT/PREFIX?region=REGION' (no host: DynamoDB
// itself, through the default credential chain).
//
// # Table
//
// One table, TableName(PREFIX), made by Migrate (nextup migrate, and on
// open) from TableDefinition, the one definition the infrastructure
// template declares too: billing PAY_PER_REQUEST, partition key pk (a
// string, KIND#ID), no sort key, five global secondary indexes gsi1…gsi5
// with string keys gsiNpk and gsiNsk, KEYS_ONLY, and expiry on the
// attribute ttl.
//
// # Items
//
// Every item is pk, v (its version: 1 when created, one more at each
// write), d (the record: the JSON of the root package's type, e.g.
// nextup.Entry) and the index attributes of the indexes it is in. An item
// lacking gsiNpk is not in gsiN (sparse indexes). The indexes are
// overloaded: each kind writes its own prefixes into the same attributes
// (apikey#…, slots#…, entq#…), so the five serve every access pattern.
// Each kind's file says its item, its indexes and what each access costs:
//
//	kind                 item              indexes and markers                               file
//	business             biz#ID            gsi1 apikey#HASH; marker slug#SLUG                business.go
//	slot                 slot#ID           gsi2 slots#BID by start; gsi3 open#BID#SERVICE     slot.go
//	                                       (sparse: free seats, not handed back)
//	entry                ent#ID            gsi1 entstat#HASH; gsi2 entq#STATE#BID#QUEUE and   entry.go
//	                                       gsi3 entb#STATE#BID in fair order; gsi4 a person's
//	                                       entries; gsi5 expiry; counter seq#entries
//	entry ranks          rnk#BID#RANK#S#   none (point reads): a count tree of each           rank.go
//	                     PARENT#QUEUE      waitlist's waiting entries, for positions
//	offer, booking,      off#ID, …         gsi1 by token hash / offer / session; gsi2-3 by    offer.go
//	payment, hand-back                     slot, entry, person; marker: one live offer per
//	                                       entry
//	guest                gst#ENTRYID#N     gsi2 gstslot#SLOTID by registration and place      guest.go
//	                                       (the guest list); gsi3 gstent#ENTRYID by place;
//	                                       the key keeps a registration's places unique
//	audit event          audit#R           gsi1 business, gsi2 slot, gsi3 subject            message.go
//	message              msg#ID            gsi1 business, gsi2 address, gsi3 offer, gsi4 due  message.go
//	                                       (sparse), gsi5 state
//	suppression          sup#BID#CH#ADDR   none (point reads)                                message.go
//	timer                timer#ID          gsi1 due (sparse) / done, gsi2 business, gsi3      timer.go
//	                                       subject; marker timerkey#KEY; counter seq#timers
//	idempotency record   idem#SCOPE#KEY    gsi1 expiry; ttl                                   timer.go
//	staff, session,      staff#ID, sess#…  gsi2 by business / staff; gsi3 session expiry;     staff.go
//	reset, proposal,     pwreset#…,        marker staffemail#EMAIL, propsrc#…; ttl on
//	sheet version        prop#ID, shv#ID,  sessions and resets; a version's rows, gzipped,
//	                     shvrows#ID        in shvrows#ID (cut to fit 400 KB; gsi3 shvrowsbiz#BID,
//	                                       to trim the old ones)
//	job                  job#ID            gsi2 jobbiz#BID by creation (newest first)        job.go
//	monthly summary      sum#BID#MONTH     gsi2 sumbiz#BID by month (newest first); the key  summary.go
//	                                       keeps one per business and month
//
// # Markers
//
// What the SQL schema keeps unique with a UNIQUE index, a GSI cannot: an
// index is eventually consistent and accepts duplicates. Those rules are
// marker items, written in the same transaction as the record and
// conditioned on not existing (or still pointing at the same record): a
// business's slug, a staff email, one live offer per entry, a pending
// timer's key, a proposal's source, an idempotency key (its record is its
// own marker), a payment's checkout session.
//
// # Lookups through an index
//
// A lookup by secret hash (an API key, a claim or status token) or by
// parent (a slot's offers) reads the index's keys and then the items
// themselves from the base table with strongly consistent reads, checking
// again that each still belongs (Tx.query): a hit the index has not caught
// up with is not used as it was. An item written in the last moments can be
// missing from an index read by another transaction (never from the
// transaction's own reads, which lay its buffered writes over every
// query); where that matters the rule is a marker, read consistently.
//
// # Transactions
//
// DynamoDB has no interactive transactions; InTx gives them the same
// meaning by optimistic concurrency (tx.go). Reads are strongly consistent
// reads of the base table, remembered with their versions, so a
// transaction sees one version of each item. Writes are buffered, and
// later reads of the same transaction see them. Commit is one
// TransactWriteItems whose conditions check the version of every item the
// function relied on: each item it writes (v = the version read, or
// attribute_not_exists for one read as absent or created with a fresh id)
// and each item it locked without writing it (SlotGet and EntryGet: the
// row locks of the SQL stores, a ConditionCheck). A transaction of one
// write and no check is one conditional PutItem or DeleteItem (half the
// price); one that wrote nothing makes no call. A commit whose condition
// failed (another transaction changed an item meanwhile), that met a
// transaction in flight, or that was throttled runs the function again
// from fresh reads, after a short jittered wait, at most MaxTxAttempts
// times, as PostgreSQL's serialization failures do. Its ClientRequestToken
// makes the SDK's own retry of the call apply it once.
//
// The claim is an instance: OfferClaim reads the offer (by token hash) and
// writes it claimed only if it is still offered and in its window; the
// use case moves the slot's seats from held to booked. The commit checks
// that neither the offer nor the slot changed since they were read, so of
// two claims (or a claim and an expiry) exactly one commits; the other
// runs again, finds the offer claimed, and is refused.
//
// Savepoints (Tx.Savepoint) are a journal of the buffered writes: a
// failed part drops what it buffered. Reads it made stay remembered,
// which can only make the commit stricter.
//
// # Read
//
// Read runs on strongly consistent reads of the base table without
// committing: an item read twice in one Read is seen the same both times
// (store/storetest's ReadSnapshot), but two different items are each read
// at their own moment, not at one instant. DynamoDB has no snapshot across
// reads of many items (TransactGetItems takes 100 keys at once, not the
// queries a page makes); no read-only use case relies on more.
//
// # Limits
//
// The service takes at most 100 actions and 4 MB in one TransactWriteItems
// and stores items of at most 400 KB; an emulator may take more. The store
// keeps these limits itself (MaxTxActions, MaxTxBytes, MaxItemBytes):
// a commit over them fails with ErrTooLarge before any call. The store is
// a nextup.Bounded, and its transactions say how many actions they hold
// (nextup.Sized). The use cases that could write without bound in one
// transaction split their work so that each transaction keeps the
// invariant on its own (waitlist/internal/core, Work.Room): a batch
// promotion (a 200-seat event promoting 200 people) offers as many as
// are left room for in its transaction and commits a slot_decide timer
// due at once, whose transaction offers the next ones to the seats still
// free, and so on; a CSV import commits a few rows at a time within its
// request; a release that ends more bookings than one transaction takes
// (about a dozen) goes in parts, each a release of its own, committed one
// after another within its request (a keyed request that stops halfway
// resumes with the seats it had freed); the daily expiry takes batches of
// 23; a person's erasure rewrites as many of their rows as its
// transaction has room for, dependent rows first and the entries last,
// and goes on in the next (waitlist/people; the lookups it reads through
// are in person.go). Purges take at most 20 idempotency records
// and 10 sessions per call (the rest go at the next housekeeping, and expiry by
// ttl deletes them meanwhile); a timer claim takes at most 90.
//
// # Due work
//
// Timers and messages due are found through sparse indexes holding only
// what is pending (timerdue in gsi1, msgdue in gsi4), sorted by due time:
// the claim reads the range up to now, leases each hit with a write
// conditioned on the version it read (a lease that lapsed or another
// claimer's commit makes it lose and run again), and a timer or message is
// finished only under the lease it holds, as in the SQL stores. A
// message's due key moves to its lease's end while leased, so sweeps do
// not read it again until then. Each of these indexes is one partition for
// the whole table — one bucket, the store's whole due work — which takes
// about a thousand writes a second; the sources' scale (a few thousand
// timers and messages an hour) is far below. Past it, the partition value
// would gain a shard number (a hash of the id) and a claim would read each
// shard.
//
// # Counters and order
//
// Entry sequence numbers and timer ids come from atomic counters
// (UpdateItem ADD, outside the transaction: a rolled-back transaction
// leaves a gap, never a repeat). Rows the SQL stores order by insertion
// (audit events, messages and offers of one instant) carry rid(), a
// per-process increasing nanosecond key, as a tie-breaker after the
// domain's times.
//
// # Capacity
//
// Consistent reads cost 1 read unit per 4 KB item, index queries half
// that; a transactional write 2 write units per 1 KB item (a
// ConditionCheck too); a lone conditional PutItem 1. Measure() adds up
// what every call reports (ReturnConsumedCapacity); TestCapacity prints
// the units of the main use cases (and keeps them under ceilings), which
// the AWS deployment's cost model uses. Measured on the emulator:
//
//	use case                          read units  write units  calls
//	join                                       9           23      7
//	release → offer                         20.5           63     15
//	claim                                     14           66     18
//	expiry → roll on / hand back              47           98     43
//
// A message is the largest item (its text: 2-4 KB, so 6-8 write units in
// a transaction); the rest are 0.5-1 KB each. A claim is bound by its
// calls, not its units: BenchmarkClaims measures about 110 claims a second
// against about 3,000 bare conditional UpdateItems a second on the
// emulator, with 8 clients.
//
// An event registration's guests are items of their own, written in its
// transaction: 4 write units a guest (the transactional put of an item
// under 1 KB, and its two index entries) and no call (blind creates of
// the new entry's places). A registration takes as many as its
// transaction has room for, about 80 when it is confirmed at once, and
// the use case refuses more (TestGuestsFitTheTransaction). The guest
// list is one query and a BatchGetItem per 100 guests; one guest's
// check-in a GetItem and a put.
package dynamo
