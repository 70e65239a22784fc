package cli

import (
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", for the drill's own reads
	_ "modernc.org/sqlite"             // database/sql driver "sqlite", for the drill's own reads

	"github.com/nextup-dev/nextup/notify/smtp/smtptest"
	"github.com/nextup-dev/nextup/outbox"
)

// The crash drill (`make crash`): a bounded kill-9 campaign against real
// `nextup serve` processes on the real clock, under mixed concurrent load.
//
// Three stores: SQLite (one process, killed and started again on the same
// file), PostgreSQL with one process, and PostgreSQL with two processes
// sharing a schema (one of them killed at a time while the other serves,
// then started again). Customers join, watch their status link, claim
// through the claim link, decline, let offers lapse (a one-minute claim
// window on the real clock) and cancel bookings; staff release seats. Every
// POST carries an Idempotency-Key and is sent again with it, as a client
// would, when the process it went to dies. Processes are killed with
// SIGKILL: under load, half of them at a random moment, half at an offer's
// deadline, where the drill watches the database for a timer claimed and
// not yet done and kills the process holding it, inside the handler; the
// last two kills come in the drain, after the load, so that even a short
// run has offers expire around a kill.
//
// Every answer is recorded: a 2xx whose effect must persist, a 4xx refusal
// whose effect must not exist. After each restart and at the end the drill
// checks, through the API and straight from the database, that every
// acknowledged write is there exactly once and every refused one is not,
// that booked + held <= capacity on every slot (and held is what the live
// offers hold), that every offer ends exactly once and none stays open past
// its deadline by more than crashLatenessBound, that no timer is overdue by
// more than that and no message is stuck in the outbox. At the end, with
// every request answered, the seats of every slot are accounted for: what
// was booked at the start, plus every booking made, minus what the
// acknowledged releases (each in the slot's audit exactly once) and
// cancellations freed.
//
// The seed replays the drill's choices (-crash.seed); the timing is the
// OS's.

var (
	crashKills = flag.Int("crash.kills", 3, "crash drill: SIGKILLs per store (make crash runs 100)")
	crashSeed  = flag.Uint64("crash.seed", 0, "crash drill: the seed of its choices (0: a new one, logged)")
)

// crashLatenessBound is how late a due timer may fire (an offer expire)
// before the drill calls it stuck: counted from its due time, or from the
// kill of the process that held it under its lease (the last such kill, when
// several in a row caught whoever took it over), or, on one process, from
// its restart. A kill costs the lease a killed process's claim keeps others
// off the timer (timer.DefaultLease, 5 s, renewed while a handler runs),
// plus a sweep and slack for a loaded machine: 100 kills a store measured
// at most 7.5 s. It is also the bound on any overdue timer or live offer
// past its deadline.
const crashLatenessBound = 15 * time.Second

// crashMessageBound is how long a queued message may wait past its due
// time: a killed relay's lease on a message it was sending (a minute), plus
// slack.
const crashMessageBound = outbox.DefaultLease + 15*time.Second

// drillClaimWindow is the business's claim window: the shortest the rules
// allow, so offers lapse within the drill.
const drillClaimWindow = time.Minute

// drillMinLoad is the least time the load runs before it stops.
const drillMinLoad = 20 * time.Second

// drillAnswerWithin is how long a client keeps sending a request again
// (with its Idempotency-Key) before it reports that it got no answer.
const drillAnswerWithin = 90 * time.Second

// TestCrashDrill runs the kill-9 campaign on each store. `make crash` runs it
// with -crash.kills=100; the default keeps it short for CI.
func TestCrashDrill(t *testing.T) {
	t.Parallel()
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d, %d kills per store (replay the choices with -args -crash.seed=%d -crash.kills=%d)", seed, *crashKills, seed, *crashKills)
	// The stores run at once, each in a goroutine of its own rather than
	// as parallel subtests, which -parallel (GOMAXPROCS) would queue.
	var wg sync.WaitGroup
	defer wg.Wait()
	for i, store := range []struct {
		name  string
		nodes int
	}{{"sqlite", 1}, {"postgres", 1}, {"postgres-2", 2}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(store.name, func(t *testing.T) {
				mail := smtptest.Start(t)
				d := &drill{t: t, seed: seed, store: store.name, mail: mail, client: apiClient(t),
					rng:       rand.New(rand.NewPCG(seed, uint64(i))),
					joins:     map[string]*joinRec{},
					claims:    map[string]string{},
					claimNo:   map[string]string{},
					declines:  map[string]bool{},
					declineNo: map[string]string{},
					released:  map[string]int{},
					releasedN: map[string]int{},
					cancels:   map[string]bool{},
					cancelNo:  map[string]string{},
					done:      make(chan struct{}),
				}
				if store.name == "sqlite" {
					d.dsn = filepath.Join(t.TempDir(), "n.db")
					db, err := sql.Open("sqlite", "file:"+d.dsn+"?_pragma=busy_timeout(10000)&_pragma=query_only(ON)")
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { db.Close() })
					d.sql = db
				} else {
					dsn, _, _ := pgSchema(t)
					d.dsn = dsn
					db, err := sql.Open("pgx", dsn)
					if err != nil {
						t.Fatal(err)
					}
					db.SetMaxOpenConns(2)
					t.Cleanup(func() { db.Close() })
					d.sql = db
				}
				for n := range store.nodes {
					d.nodes = append(d.nodes, &drillNode{name: fmt.Sprintf("%s-%c", store.name, 'a'+n)})
				}
				d.run(*crashKills)
			})
		}()
	}
}

// drill is one store's campaign: its processes, its load and the record of
// every answer the clients were given.
type drill struct {
	t      *testing.T
	seed   uint64
	store  string
	dsn    string  // the --db of the processes
	sql    *sql.DB // the drill's own connection, for reads
	nodes  []*drillNode
	mail   *smtptest.Server
	client *http.Client

	rngMu sync.Mutex
	rng   *rand.Rand

	bid, key  string
	firstSlot time.Time // of the first slot; each slot an hour after the last

	keys       atomic.Int64
	requests   atomic.Int64
	serverErrs atomic.Int64
	violations atomic.Int64
	stopping   atomic.Bool   // the load is over: no more joins and releases, customers claim what they get
	done       chan struct{} // closed when the customers are to stop

	mu                    sync.Mutex
	joins                 map[string]*joinRec // by email
	claims                map[string]string   // offer id → booking id, claims answered 200
	claimNo               map[string]string   // offer id → code, claims refused
	declines              map[string]bool     // offer ids, declines answered 200
	declineNo             map[string]string   // offer id → code, declines refused
	released              map[string]int      // slot id → seats asked for, releases answered 200
	releasedN             map[string]int      // slot id → releases answered 200
	releases              int                 // releases answered 200
	releaseNo             int                 // releases refused (not_enough_booked)
	cancels               map[string]bool     // booking ids, cancellations answered 200
	cancelNo              map[string]string   // booking id → code, cancellations refused
	kills                 []drillKill
	procs                 []*instance // every process started, for their logs
	slots                 []drillSlot // answered 201
	slotsAsked, slotsLost int         // slot creations not answered yet, never answered
	hunted                int         // kills of a process inside a timer's handler
	checked               int         // acknowledged writes checked through the API so far (the ledger's prefix)
	ackLog                []drillAck
}

// joinRec is what the clients were told about the joins with one email.
type joinRec struct {
	acked    []string // entry ids of joins answered 201
	refused  int      // joins answered 409 already_waiting
	inflight int      // joins sent and not answered yet
}

// drillAck is one acknowledged write, for the checks through the API.
type drillAck struct {
	kind string // join, claim, decline
	id   string // entry id, offer id
	ref  string // the booking of a claim
}

type drillSlot struct {
	id       string
	shared   bool
	capacity int
	initial  int // seats booked when it was made
}

// drillKill is one SIGKILL: when, which process, when it (or, for two
// instances, its replacement) was serving again, and the timers it held
// under a lease when it died.
type drillKill struct {
	node   string
	at     time.Time
	ready  time.Time
	leased []int64 // timer ids
}

// drillNode is one `nextup serve` of the store, started again after each kill.
type drillNode struct {
	name string
	mu   sync.Mutex
	in   *instance // nil while it is down
}

func (n *drillNode) get() *instance {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.in
}

func (d *drill) roll(n int) int {
	d.rngMu.Lock()
	defer d.rngMu.Unlock()
	return d.rng.IntN(n)
}

func (d *drill) newKey() string { return fmt.Sprintf("drill-%s-%d", d.store, d.keys.Add(1)) }

// fail records a violation, with what it takes to replay the drill.
func (d *drill) fail(format string, args ...any) {
	d.t.Helper()
	if d.violations.Add(1) <= 40 {
		d.t.Errorf("%s (seed %d: -run '^TestCrashDrill$/^%s$' -args -crash.seed=%d -crash.kills=%d)",
			fmt.Sprintf(format, args...), d.seed, d.store, d.seed, *crashKills)
	}
}

func (d *drill) start(n *drillNode) {
	d.t.Helper()
	in := startInstanceEnv(d.t, n.name, d.dsn, d.mail.Addr, nil,
		"--clock", "real", "--notify", "capture,smtp", "--db-max-conns", "4")
	n.mu.Lock()
	n.in = in
	n.mu.Unlock()
	d.mu.Lock()
	d.procs = append(d.procs, in)
	d.mu.Unlock()
}

// kill sends SIGKILL and waits for the process to be gone.
func (d *drill) kill(n *drillNode) {
	in := n.get()
	_ = in.cmd.Process.Signal(syscall.SIGKILL)
	<-in.done
	n.mu.Lock()
	n.in = nil
	n.mu.Unlock()
}

// do sends one request as a client would: to a live process (any of them);
// when it does not answer (it died) or answers 5xx or 409 conflict, it
// sends it again, with the same Idempotency-Key, to whichever process is
// up, until drillAnswerWithin has passed.
func (d *drill) do(method, path, bearer, key, body string) (answer, error) {
	deadline := time.Now().Add(drillAnswerWithin)
	pause := 20 * time.Millisecond
	var last string
	for {
		var live []*instance
		for _, n := range d.nodes {
			if in := n.get(); in != nil {
				live = append(live, in)
			}
		}
		if len(live) > 0 {
			in := live[d.roll(len(live))]
			d.requests.Add(1)
			a, err := d.send(in, method, path, bearer, key, body)
			switch {
			case err != nil:
				last = err.Error()
			case a.status >= 500:
				d.serverErrs.Add(1)
				last = fmt.Sprintf("%d %s", a.status, a.body)
			case a.status == 409 && problemCode(a.body) == "conflict":
				// Two changes raced; nothing was done. A stored answer
				// would replay it forever: a new key.
				last = "409 conflict"
				if a.replayed {
					key = d.newKey()
				}
			default:
				return a, nil
			}
		} else {
			last = "no process up"
		}
		if time.Now().After(deadline) {
			return answer{}, fmt.Errorf("%s %s: no answer in %v: %s", method, path, drillAnswerWithin, last)
		}
		time.Sleep(pause) // polling for a process to answer, under the deadline above
		pause = min(2*pause, 500*time.Millisecond)
	}
}

func (d *drill) send(in *instance, method, path, bearer, key, body string) (answer, error) {
	req, err := http.NewRequest(method, in.base+path, strings.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := d.client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return answer{status: res.StatusCode, header: res.Header, body: b, replayed: res.Header.Get("Idempotent-Replayed") == "true"}, err
}

func problemCode(body []byte) string {
	var p struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(body, &p)
	return p.Code
}

func decode(body []byte) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	return m
}

// must is do for the drill's own set-up and checks: any other status is a
// failure of the drill.
func (d *drill) must(method, path, bearer, body string, want int) map[string]any {
	d.t.Helper()
	key := ""
	if method == http.MethodPost {
		key = d.newKey()
	}
	a, err := d.do(method, path, bearer, key, body)
	if err != nil {
		d.fail("%v", err)
		return nil
	}
	if a.status != want {
		d.fail("%s %s: %d %s, want %d", method, path, a.status, a.body, want)
		return nil
	}
	return decode(a.body)
}

func (d *drill) run(kills int) {
	t := d.t
	for _, n := range d.nodes {
		d.start(n)
	}
	d.setUp()
	if t.Failed() {
		t.FailNow()
	}
	var load sync.WaitGroup
	const customers = 12
	for i := range customers {
		load.Add(1)
		go func() { defer load.Done(); d.customer(i) }()
	}
	var staff sync.WaitGroup
	staff.Add(1)
	go func() { defer staff.Done(); d.staff() }()

	// The last kills (two, in a short run) come after the load has
	// stopped, aimed at the deadlines of the offers let lapse: in every
	// run, however few the kills, some offer's expiry is due around a kill.
	began := time.Now()
	underLoad := kills - min(2, kills-1)
	stopLoad := func() {
		if rest := drillMinLoad - time.Since(began); rest > 0 {
			time.Sleep(rest) // the load runs on meanwhile
		}
		d.stopping.Store(true)
		staff.Wait()
	}
	for k := range kills {
		if k == underLoad {
			stopLoad()
		}
		n := d.victim(k >= underLoad)
		at := time.Now()
		d.kill(n)
		kill := drillKill{node: n.name, at: at, leased: d.leasedBy(n.name, at)}
		// Down for a moment (one process: nobody serves; two: the other
		// serves alone), then started again.
		time.Sleep(time.Duration(d.roll(1500)) * time.Millisecond) // a random outage, not a wait for a condition
		d.start(n)
		kill.ready = time.Now()
		d.mu.Lock()
		d.kills = append(d.kills, kill)
		d.mu.Unlock()
		t.Logf("kill %d of %d: %s, at %s, holding %d timers under a lease; serving again after %v",
			k+1, kills, n.name, at.Format("15:04:05.000"), len(kill.leased), kill.ready.Sub(at).Round(time.Millisecond))
		d.check(fmt.Sprintf("after kill %d of %d (%s)", k+1, kills, n.name), false)
		if t.Failed() && d.violations.Load() > 40 {
			break
		}
	}
	if !d.stopping.Load() {
		stopLoad()
	}
	// Drain: the customers claim what reaches them; what was let lapse
	// expires on its own. Then every message goes out.
	d.waitFor("no live offer", drillClaimWindow+crashLatenessBound+30*time.Second,
		`SELECT count(*) FROM offers WHERE state IN ('pending', 'offered')`)
	close(d.done)
	load.Wait()
	d.waitFor("no queued message", crashMessageBound,
		`SELECT count(*) FROM messages WHERE state IN ('queued', 'failed')`)
	d.check("at the end", true)
	d.report(time.Since(began))
}

// setUp makes the business (a one-minute claim window, no quiet hours, no
// daily cap), its chairs and classes, all booked.
func (d *drill) setUp() {
	biz := d.must("POST", "/v1/businesses", "adm", fmt.Sprintf(`{"name":"Salon","timezone":"UTC","rules":{"quiet_hours":null,
		"claim_window_seconds":%d,"max_offers_per_person_per_day":0,"min_lead_seconds":0}}`, int(drillClaimWindow/time.Second)), 201)
	if biz == nil {
		return
	}
	d.bid, d.key = biz["id"].(string), biz["api_key"].(string)
	d.firstSlot = time.Now().UTC().Add(72 * time.Hour).Truncate(time.Hour)
	for i := range 24 {
		d.openSlot(i%6 == 5, true)
	}
}

// openSlot adds a chair (or a class of 6), booked or (a new opening) free,
// and records it when the answer is 201.
func (d *drill) openSlot(shared, booked bool) {
	d.mu.Lock()
	at := d.firstSlot.Add(time.Duration(len(d.slots)+d.slotsAsked) * time.Hour)
	d.slotsAsked++
	d.mu.Unlock()
	sl := drillSlot{capacity: 1, shared: shared}
	body := fmt.Sprintf(`{"service":"cut","starts_at":%q,"ends_at":%q`, at.Format(time.RFC3339), at.Add(time.Hour).Format(time.RFC3339))
	if shared {
		sl.capacity = 6
		body = fmt.Sprintf(`{"service":"class","seating":"shared","capacity":6,"starts_at":%q,"ends_at":%q`,
			at.Format(time.RFC3339), at.Add(time.Hour).Format(time.RFC3339))
	}
	if booked {
		sl.initial = sl.capacity
		body += "}"
	} else {
		body += `,"booked_seats":0}`
	}
	a, err := d.do("POST", "/v1/businesses/"+d.bid+"/slots", d.key, d.newKey(), body)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.slotsAsked--
	switch {
	case err != nil:
		d.fail("open a slot: %v", err)
		d.slotsLost++
	case a.status == 201:
		sl.id, _ = decode(a.body)["id"].(string)
		d.slots = append(d.slots, sl)
	default:
		d.fail("open a slot: %d %s", a.status, a.body)
	}
}

func (d *drill) slotList() []drillSlot {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.slots)
}

// staff release seats as bookings are cancelled or not shown up for,
// mostly of slots they see booked, sometimes of one with nothing booked
// (refused, not_enough_booked), and now and then add a new opening.
func (d *drill) staff() {
	for !d.stopping.Load() {
		time.Sleep(time.Duration(200+d.roll(500)) * time.Millisecond) // the pace of the load
		if d.roll(10) == 0 {
			d.openSlot(d.roll(4) == 0, false)
			continue
		}
		slots := d.slotList()
		sl := slots[d.roll(len(slots))]
		for range 3 {
			if v := d.must("GET", "/v1/slots/"+sl.id, d.key, "", 200); v == nil || v["booked_seats"].(float64) > 0 || d.roll(5) == 0 {
				break
			}
			sl = slots[d.roll(len(slots))]
		}
		reason := []string{"cancellation", "no_show"}[d.roll(2)]
		seats := sl.capacity
		body := fmt.Sprintf(`{"reason":%q}`, reason)
		if sl.shared {
			seats = 1 + d.roll(2)
			body = fmt.Sprintf(`{"seats":%d,"reason":%q}`, seats, reason)
		}
		a, err := d.do("POST", "/v1/slots/"+sl.id+":release", d.key, d.newKey(), body)
		switch {
		case err != nil:
			d.fail("release: %v", err)
		case a.status == 200:
			d.mu.Lock()
			d.released[sl.id] += seats
			d.releasedN[sl.id]++
			d.releases++
			d.mu.Unlock()
		case a.status == 409 && problemCode(a.body) == "not_enough_booked":
			d.mu.Lock()
			d.releaseNo++
			d.mu.Unlock()
		default:
			d.fail("release %s: %d %s", sl.id, a.status, a.body)
		}
	}
}

// drillEntry is an entry a customer follows through their status link.
type drillEntry struct {
	id, token string
	handled   map[string]bool // offers acted on (or let lapse)
}

// customer joins, follows their entries by their status links and acts on
// each offer: claim, decline, or let it lapse; then joins again as someone
// new. Sometimes they join twice (refused: already_waiting) or cancel the
// booking they claimed.
func (d *drill) customer(i int) {
	first := true
	for n := 1; ; n++ {
		select {
		case <-d.done:
			return
		default:
		}
		if d.stopping.Load() {
			<-d.done
			return
		}
		email := fmt.Sprintf("c%d-%d@example.com", i, n)
		service, party := "cut", 1
		if d.roll(10) < 3 {
			service, party = "class", 1+d.roll(2)
		}
		body := fmt.Sprintf(`{"name":"Customer %d-%d","email":%q,"service":%q,"party_size":%d}`, i, n, email, service, party)
		var entries []*drillEntry
		for tries := 1 + btoi(d.roll(5) == 0); tries > 0; tries-- { // sometimes a second join (a double submit)
			if e := d.join(email, body); e != nil {
				entries = append(entries, e)
			}
		}
		d.follow(i, &first, entries)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// join sends one join and records its answer.
func (d *drill) join(email, body string) *drillEntry {
	d.mu.Lock()
	rec := d.joins[email]
	if rec == nil {
		rec = &joinRec{}
		d.joins[email] = rec
	}
	rec.inflight++
	d.mu.Unlock()
	a, err := d.do("POST", "/v1/businesses/"+d.bid+"/waitlist:join", d.key, d.newKey(), body)
	d.mu.Lock()
	defer d.mu.Unlock()
	rec.inflight--
	switch {
	case err != nil:
		rec.inflight++ // never answered: it may or may not exist
		d.fail("join %s: %v", email, err)
	case a.status == 201:
		m := decode(a.body)
		id, _ := m["id"].(string)
		status, _ := m["status_url"].(string)
		rec.acked = append(rec.acked, id)
		d.ackLog = append(d.ackLog, drillAck{kind: "join", id: id})
		return &drillEntry{id: id, token: status[strings.LastIndex(status, "/")+1:], handled: map[string]bool{}}
	case a.status == 409 && problemCode(a.body) == "already_waiting":
		rec.refused++
	default:
		d.fail("join %s: %d %s", email, a.status, a.body)
	}
	return nil
}

// follow watches the entries' status links until each is booked (or the
// drill is over) and acts on each offer that appears.
func (d *drill) follow(i int, first *bool, entries []*drillEntry) {
	for len(entries) > 0 {
		select {
		case <-d.done:
			return
		case <-time.After(time.Duration(250+d.roll(300)) * time.Millisecond): // a customer glancing at their phone
		}
		for _, e := range slices.Clone(entries) {
			a, err := d.do("GET", "/v1/status/"+e.token, "", "", "")
			if err != nil {
				d.fail("status of %s: %v", e.id, err)
				continue
			}
			if a.status != 200 {
				d.fail("status of %s: %d %s", e.id, a.status, a.body)
				continue
			}
			st := decode(a.body)
			if st["state"] != "waiting" && st["state"] != "offered" {
				entries = slices.DeleteFunc(entries, func(x *drillEntry) bool { return x == e })
				continue
			}
			o, _ := st["offer"].(map[string]any)
			if o == nil || o["state"] != "offered" {
				continue
			}
			oid, _ := o["id"].(string)
			link, _ := o["claim_url"].(string)
			if e.handled[oid] || link == "" {
				continue
			}
			e.handled[oid] = true
			tok := link[strings.LastIndex(link, "/")+1:]
			r := d.roll(10)
			if *first && !d.stopping.Load() {
				// Each customer's first offer: a decline, a lapse, or two
				// claims, so that even a short run has all three.
				*first, r = false, []int{5, 9, 0, 0}[i%4]
			}
			switch {
			case d.stopping.Load() || r < 5:
				d.claim(oid, tok)
			case r < 7:
				d.decline(oid, tok)
			default: // lets it lapse
			}
		}
	}
}

// claim opens the claim link and claims, sometimes tapping twice at once.
func (d *drill) claim(oid, tok string) {
	if a, err := d.do("GET", "/v1/claims/"+tok, "", "", ""); err != nil || a.status != 200 {
		d.fail("claim page of %s: %v %d %s", oid, err, a.status, a.body)
		return
	}
	taps := 1 + btoi(d.roll(10) == 0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var booking string
	for range taps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := d.do("POST", "/v1/claims/"+tok+":accept", "", d.newKey(), "")
			d.mu.Lock()
			defer d.mu.Unlock()
			switch {
			case err != nil:
				d.fail("claim %s: %v", oid, err)
			case a.status == 200:
				b, _ := decode(a.body)["booking"].(map[string]any)
				id, _ := b["id"].(string)
				if prev, ok := d.claims[oid]; ok && prev != id {
					d.fail("claim %s answered booking %s, and %s to another tap", oid, id, prev)
				}
				if _, ok := d.claims[oid]; !ok {
					d.ackLog = append(d.ackLog, drillAck{kind: "claim", id: oid, ref: id})
				}
				d.claims[oid] = id
				mu.Lock()
				booking = id
				mu.Unlock()
			case a.status == 409:
				d.claimNo[oid] = problemCode(a.body)
			default:
				d.fail("claim %s: %d %s", oid, a.status, a.body)
			}
		}()
	}
	wg.Wait()
	if booking != "" && !d.stopping.Load() && d.roll(7) == 0 {
		// Plans change: the customer asks the salon to cancel.
		a, err := d.do("POST", "/v1/bookings/"+booking+":cancel", d.key, d.newKey(), `{"reason":"plans changed"}`)
		d.mu.Lock()
		defer d.mu.Unlock()
		switch {
		case err != nil:
			d.fail("cancel %s: %v", booking, err)
		case a.status == 200:
			d.cancels[booking] = true
		case a.status == 409:
			d.cancelNo[booking] = problemCode(a.body)
		default:
			d.fail("cancel %s: %d %s", booking, a.status, a.body)
		}
	}
}

func (d *drill) decline(oid, tok string) {
	a, err := d.do("POST", "/v1/claims/"+tok+":decline", "", d.newKey(), "")
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case err != nil:
		d.fail("decline %s: %v", oid, err)
	case a.status == 200:
		d.declines[oid] = true
		d.ackLog = append(d.ackLog, drillAck{kind: "decline", id: oid})
	case a.status == 409:
		d.declineNo[oid] = problemCode(a.body)
	default:
		d.fail("decline %s: %d %s", oid, a.status, a.body)
	}
}

// victim waits for the moment of the next kill and says whom to kill.
// Under load, half the time it is a random process at a random moment.
// Otherwise (and always in the drain) the moment is the next offer's
// deadline, if one is near: from just before it, the database is watched
// for a timer claimed and not yet done, and the process holding it is
// killed at once, inside the handler; when none is seen, a random process
// dies just after the deadline.
func (d *drill) victim(drain bool) *drillNode {
	random := d.nodes[d.roll(len(d.nodes))]
	wait := time.Duration(2000+d.roll(4000)) * time.Millisecond
	if !drain && d.roll(2) == 0 {
		time.Sleep(wait) // the kill's random moment
		return random
	}
	horizon := 10 * time.Second
	if drain {
		horizon = drillClaimWindow + 5*time.Second
	}
	now := time.Now()
	next := d.int64(fmt.Sprintf(`SELECT coalesce(min(expires_at), 0) FROM offers WHERE state = 'offered' AND expires_at > %d`, now.UnixMicro()))
	due := time.UnixMicro(next)
	if next == 0 || due.Sub(now) > horizon {
		time.Sleep(wait)
		return random
	}
	time.Sleep(time.Until(due.Add(-100 * time.Millisecond))) // until just before the deadline
	for end := due.Add(1500 * time.Millisecond); time.Now().Before(end); {
		var owner string
		err := d.sql.QueryRow(fmt.Sprintf(`SELECT claimed_by FROM timers WHERE done_at IS NULL AND claimed_until > %d ORDER BY due_at LIMIT 1`,
			time.Now().UnixMicro())).Scan(&owner)
		if err == nil {
			for _, n := range d.nodes {
				if n.name == owner {
					d.hunted++
					return n
				}
			}
		} else if err != sql.ErrNoRows {
			d.t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // watching for a claim, under the deadline above
	}
	return random
}

// leasedBy lists the timers a process held under a lease when it died.
func (d *drill) leasedBy(node string, at time.Time) []int64 {
	var ids []int64
	d.rows(fmt.Sprintf(`SELECT id FROM timers WHERE done_at IS NULL AND claimed_by = '%s' AND claimed_until > %d`, node, at.UnixMicro()),
		func(r *sql.Rows) error {
			var id int64
			err := r.Scan(&id)
			ids = append(ids, id)
			return err
		})
	return ids
}

func (d *drill) int64(query string) int64 {
	d.t.Helper()
	var n int64
	if err := d.sql.QueryRow(query).Scan(&n); err != nil {
		d.t.Fatalf("%s: %v", query, err)
	}
	return n
}

func (d *drill) rows(query string, each func(*sql.Rows) error) {
	d.t.Helper()
	rows, err := d.sql.Query(query)
	if err != nil {
		d.t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			d.t.Fatalf("%s: %v", query, err)
		}
	}
	if err := rows.Err(); err != nil {
		d.t.Fatalf("%s: %v", query, err)
	}
}

// waitFor polls the database until query counts zero.
func (d *drill) waitFor(what string, within time.Duration, query string) {
	deadline := time.Now().Add(within)
	for {
		n := d.int64(query)
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			d.fail("%s: still %d after %v (%s)", what, n, within, query)
			return
		}
		time.Sleep(200 * time.Millisecond) // polling the database under the deadline above
	}
}

// upSince is since when the store has had a process serving without a
// break: the last restart of a single process; the start, for two.
func (d *drill) upSince() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.nodes) > 1 || len(d.kills) == 0 {
		return time.Time{}
	}
	return d.kills[len(d.kills)-1].ready
}

// check holds the store to its promises, through the API and from the
// database. final: every request has been answered and the load is over,
// so the ledger must match the database exactly.
func (d *drill) check(when string, final bool) {
	d.t.Helper()
	// What the clients had been told before the database is read: all of
	// it must be there.
	d.mu.Lock()
	acks := slices.Clone(d.ackLog)
	from := d.checked
	d.checked = len(acks)
	d.mu.Unlock()
	d.checkAPI(when, acks, from, final)
	d.checkDB(when, final)
}

// checkAPI reads, through the API, what the clients were told since the
// last check (and, at the end, everything; otherwise a sample of the rest).
func (d *drill) checkAPI(when string, acks []drillAck, from int, final bool) {
	var pick []drillAck
	if final {
		pick = acks
	} else {
		pick = acks[from:]
		for range min(20, from) {
			pick = append(pick, acks[d.roll(from)])
		}
	}
	for _, a := range pick {
		switch a.kind {
		case "join":
			if e := d.must("GET", "/v1/waitlist/"+a.id, d.key, "", 200); e == nil || e["id"] != a.id {
				d.fail("%s: the entry %s a join was answered with: %v", when, a.id, e)
			}
		case "claim":
			if o := d.must("GET", "/v1/offers/"+a.id, d.key, "", 200); o == nil || o["state"] != "claimed" {
				d.fail("%s: offer %s was claimed (booking %s) but reads %v", when, a.id, a.ref, o)
			}
			if b := d.must("GET", "/v1/bookings/"+a.ref, d.key, "", 200); b == nil || b["id"] != a.ref {
				d.fail("%s: booking %s of a claim reads %v", when, a.ref, b)
			}
		case "decline":
			if o := d.must("GET", "/v1/offers/"+a.id, d.key, "", 200); o == nil || o["state"] != "declined" {
				d.fail("%s: offer %s was declined but reads %v", when, a.id, o)
			}
		}
	}
	d.mu.Lock()
	var refusedClaims []string
	for oid := range d.claimNo {
		refusedClaims = append(refusedClaims, oid)
	}
	d.mu.Unlock()
	sort.Strings(refusedClaims)
	if !final && len(refusedClaims) > 10 {
		refusedClaims = refusedClaims[len(refusedClaims)-10:]
	}
	for _, oid := range refusedClaims {
		if o := d.must("GET", "/v1/offers/"+oid, d.key, "", 200); o != nil && o["state"] == "claimed" {
			d.mu.Lock()
			_, acked := d.claims[oid]
			d.mu.Unlock()
			if !acked {
				d.fail("%s: a claim of offer %s was refused, yet it is claimed", when, oid)
			}
		}
	}
	slots := d.slotList()
	if !final && len(slots) > 30 {
		d.rngMu.Lock()
		d.rng.Shuffle(len(slots), func(i, j int) { slots[i], slots[j] = slots[j], slots[i] })
		d.rngMu.Unlock()
		slots = slots[:30]
	}
	for _, sl := range slots {
		s := d.must("GET", "/v1/slots/"+sl.id, d.key, "", 200)
		if s == nil {
			continue
		}
		booked, held, free := int(s["booked_seats"].(float64)), int(s["held_seats"].(float64)), int(s["free_seats"].(float64))
		if booked+held > sl.capacity || booked+held+free != sl.capacity {
			d.fail("%s: slot %s reads booked %d + held %d (free %d) of %d", when, sl.id, booked, held, free, sl.capacity)
		}
	}
}

// checkDB reads the database itself.
func (d *drill) checkDB(when string, final bool) {
	d.mu.Lock()
	acked := map[string]bool{} // entry ids
	for _, r := range d.joins {
		for _, id := range r.acked {
			acked[id] = true
		}
	}
	claims, declines := mapsClone(d.claims), mapsClone(d.declines)
	d.mu.Unlock()

	// The invariant, and held seats are the live offers' seats.
	d.rows(`SELECT s.id, s.capacity, s.booked_seats, s.held_seats,
		(SELECT coalesce(sum(o.seats), 0) FROM offers o WHERE o.slot_id = s.id AND o.state IN ('pending', 'offered')),
		(SELECT coalesce(sum(b.seats), 0) FROM bookings b WHERE b.slot_id = s.id AND b.state = 'booked')
		FROM slots s`, func(r *sql.Rows) error {
		var id string
		var capacity, booked, held, live, inBookings int64
		if err := r.Scan(&id, &capacity, &booked, &held, &live, &inBookings); err != nil {
			return err
		}
		if booked+held > capacity || booked < 0 || held < 0 {
			d.fail("%s: slot %s has %d booked + %d held of %d seats", when, id, booked, held, capacity)
		}
		if held != live {
			d.fail("%s: slot %s holds %d seats, its live offers %d", when, id, held, live)
		}
		if inBookings > booked {
			d.fail("%s: slot %s has %d seats booked, its bookings %d", when, id, booked, inBookings)
		}
		return nil
	})
	// Every offer ends exactly once; an entry is offered exactly while it
	// holds one live offer.
	d.rows(`SELECT o.id, o.state, (SELECT count(*) FROM audit_events e WHERE e.subject_type = 'offer' AND e.subject_id = o.id
		AND e.to_state IN ('claimed', 'declined', 'expired', 'cancelled')) FROM offers o`, func(r *sql.Rows) error {
		var id, state string
		var ends int64
		if err := r.Scan(&id, &state, &ends); err != nil {
			return err
		}
		live := state == "pending" || state == "offered"
		if (live && ends != 0) || (!live && ends != 1) {
			d.fail("%s: offer %s is %s and ended %d times in the audit", when, id, state, ends)
		}
		return nil
	})
	if n := d.int64(`SELECT count(*) FROM entries e WHERE (e.state = 'offered') <>
		((SELECT count(*) FROM offers o WHERE o.entry_id = e.id AND o.state IN ('pending', 'offered')) = 1)
		OR (SELECT count(*) FROM offers o WHERE o.entry_id = e.id AND o.state IN ('pending', 'offered')) > 1`); n != 0 {
		d.fail("%s: %d entries are offered without one live offer, or hold more than one", when, n)
	}
	// Acknowledged writes are there.
	entries := map[string]string{} // id → email
	d.rows(`SELECT id, email FROM entries`, func(r *sql.Rows) error {
		var id, email string
		err := r.Scan(&id, &email)
		entries[id] = email
		return err
	})
	for id := range acked {
		if _, ok := entries[id]; !ok {
			d.fail("%s: entry %s, answered 201, is not in the database", when, id)
		}
	}
	bookings := map[string][]string{} // offer id → booking ids
	d.rows(`SELECT id, offer_id FROM bookings`, func(r *sql.Rows) error {
		var id, offer string
		err := r.Scan(&id, &offer)
		bookings[offer] = append(bookings[offer], id)
		return err
	})
	offerState := map[string]string{}
	d.rows(`SELECT id, state FROM offers`, func(r *sql.Rows) error {
		var id, state string
		err := r.Scan(&id, &state)
		offerState[id] = state
		return err
	})
	for oid, bid := range claims {
		if b := bookings[oid]; len(b) != 1 || b[0] != bid || offerState[oid] != "claimed" {
			d.fail("%s: offer %s was claimed (booking %s); the database has it %s with bookings %v", when, oid, bid, offerState[oid], b)
		}
	}
	for oid := range declines {
		if offerState[oid] != "declined" {
			d.fail("%s: offer %s was declined; the database has it %s", when, oid, offerState[oid])
		}
	}
	// Refused writes are not, and everything there was told to someone.
	d.mu.Lock()
	for oid, code := range d.claimNo {
		if _, ok := d.claims[oid]; ok {
			d.fail("%s: offer %s: one claim answered 200, another refused %s", when, oid, code)
		} else if len(bookings[oid]) != 0 || offerState[oid] == "claimed" {
			d.fail("%s: a claim of offer %s was refused (%s), yet it is %s with bookings %v", when, oid, code, offerState[oid], bookings[oid])
		}
	}
	for oid, code := range d.declineNo {
		if offerState[oid] == "declined" {
			d.fail("%s: a decline of offer %s was refused (%s), yet it is declined", when, oid, code)
		}
	}
	byEmail := map[string]int{}
	for _, email := range entries {
		byEmail[email]++
	}
	for email, n := range byEmail {
		r := d.joins[email]
		switch {
		case r == nil:
			d.fail("%s: %d entries for %s, whom no client joined", when, n, email)
		case n > len(r.acked)+r.inflight:
			d.fail("%s: %d entries for %s; joins answered 201: %d, refused: %d, unanswered: %d", when, n, email, len(r.acked), r.refused, r.inflight)
		}
	}
	d.mu.Unlock()
	if final {
		d.checkFinal(when, bookings, offerState)
	}
	// Nothing stuck: no offer live, no timer pending, no message queued
	// past its time by more than the bounds (counted from when a process
	// was serving again).
	now, up := time.Now(), d.upSince()
	if now.Sub(up) > crashLatenessBound {
		cut := now.Add(-crashLatenessBound).UnixMicro()
		if n := d.int64(fmt.Sprintf(`SELECT count(*) FROM offers WHERE state = 'offered' AND expires_at < %d`, cut)); n != 0 {
			d.fail("%s: %d offers still open more than %v past their deadline", when, n, crashLatenessBound)
		}
		if n := d.int64(fmt.Sprintf(`SELECT count(*) FROM timers WHERE done_at IS NULL AND due_at < %d`, cut)); n != 0 {
			d.fail("%s: %d timers overdue by more than %v", when, n, crashLatenessBound)
		}
	}
	if now.Sub(up) > crashMessageBound {
		cut := now.Add(-crashMessageBound).UnixMicro()
		if n := d.int64(fmt.Sprintf(`SELECT count(*) FROM messages WHERE state IN ('queued', 'failed') AND next_attempt_at < %d`, cut)); n != 0 {
			d.fail("%s: %d messages stuck in the outbox for more than %v past their time", when, n, crashMessageBound)
		}
	}
	if n := d.int64(`SELECT count(*) FROM messages WHERE state = 'dead'`); n != 0 {
		d.fail("%s: %d dead messages", when, n)
	}
}

// checkFinal: with every request answered, the database holds exactly what
// the clients were told.
func (d *drill) checkFinal(when string, bookings map[string][]string, offerState map[string]string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for email, r := range d.joins {
		var n int
		for range r.acked {
			n++
		}
		if got := d.int64(fmt.Sprintf(`SELECT count(*) FROM entries WHERE email = '%s'`, email)); got != int64(n) {
			d.fail("%s: %d entries for %s; joins answered 201: %d, refused: %d", when, got, email, n, r.refused)
		}
	}
	for oid, bs := range bookings {
		if _, ok := d.claims[oid]; !ok {
			d.fail("%s: bookings %v of offer %s, whose claim nobody was told of", when, bs, oid)
		}
	}
	for oid, state := range offerState {
		if state == "declined" && !d.declines[oid] {
			d.fail("%s: offer %s is declined, and no decline was answered 200", when, oid)
		}
	}
	// Bookings cancelled: answered 200 → cancelled; the cancellation of a
	// booking a release had ended is refused.
	cancelled := map[string]int64{} // booking id → seats, of those ended
	bookingSlot := map[string]string{}
	d.rows(`SELECT id, slot_id, seats, state FROM bookings`, func(r *sql.Rows) error {
		var id, slot, state string
		var seats int64
		err := r.Scan(&id, &slot, &seats, &state)
		bookingSlot[id] = slot
		if state != "booked" {
			cancelled[id] = seats
		}
		return err
	})
	for b := range d.cancels {
		if _, ok := cancelled[b]; !ok {
			d.fail("%s: booking %s was cancelled (200), yet it stands", when, b)
		}
	}
	// Every release answered 200 is in the slot's story exactly once, and
	// no refused one is: one audit row each, booked=X → booked=Y. A
	// release frees at least the seats asked for; more when the last of
	// them belong to a larger party's booking, which is freed whole.
	freed, rels := map[string]int64{}, map[string]int{}
	d.rows(`SELECT slot_id, from_state, to_state FROM audit_events WHERE subject_type = 'slot'
		AND reason IN ('cancellation', 'no_show') AND from_state LIKE 'booked=%'`, func(r *sql.Rows) error {
		var slot, from, to string
		if err := r.Scan(&slot, &from, &to); err != nil {
			return err
		}
		var x, y int64
		if _, err := fmt.Sscanf(from+" "+to, "booked=%d booked=%d", &x, &y); err != nil {
			return fmt.Errorf("release row %q → %q: %w", from, to, err)
		}
		freed[slot] += x - y
		rels[slot]++
		return nil
	})
	// The seats of every slot add up: booked at the start, plus every
	// booking made, minus what the releases and cancellations answered
	// 200 freed.
	made := map[string]int64{}
	d.rows(`SELECT slot_id, coalesce(sum(seats), 0) FROM bookings GROUP BY slot_id`, func(r *sql.Rows) error {
		var slot string
		var seats int64
		err := r.Scan(&slot, &seats)
		made[slot] = seats
		return err
	})
	gone := map[string]int64{}
	for b := range d.cancels {
		gone[bookingSlot[b]] += cancelled[b]
	}
	if n := d.int64(`SELECT count(*) FROM slots`); n < int64(len(d.slots)) || n > int64(len(d.slots)+d.slotsLost) {
		d.fail("%s: %d slots in the database; %d answered 201 (%d never answered)", when, n, len(d.slots), d.slotsLost)
	}
	for _, sl := range d.slots {
		if rels[sl.id] != d.releasedN[sl.id] || freed[sl.id] < int64(d.released[sl.id]) {
			d.fail("%s: slot %s: %d releases answered 200 (%d seats asked for); its audit has %d (%d seats freed)",
				when, sl.id, d.releasedN[sl.id], d.released[sl.id], rels[sl.id], freed[sl.id])
		}
		booked := d.int64(fmt.Sprintf(`SELECT booked_seats FROM slots WHERE id = '%s'`, sl.id))
		want := int64(sl.initial) + made[sl.id] - freed[sl.id] - gone[sl.id]
		if booked != want {
			d.fail("%s: slot %s has %d seats booked; %d at the start + %d booked by claims - %d freed by releases - %d cancelled = %d",
				when, sl.id, booked, sl.initial, made[sl.id], freed[sl.id], gone[sl.id], want)
		}
	}
	// Every message sent reached the mail server.
	arrived := map[string]bool{}
	for _, m := range d.mail.Mails() {
		arrived[m.Header.Get("X-Nextup-Message-Id")] = true
	}
	d.rows(`SELECT id, state FROM messages WHERE channel = 'email'`, func(r *sql.Rows) error {
		var id, state string
		if err := r.Scan(&id, &state); err != nil {
			return err
		}
		if state == "sent" && !arrived[id] {
			d.fail("%s: message %s is sent but never arrived", when, id)
		}
		return nil
	})
}

func mapsClone[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// report logs the campaign's figures, and fails on an expiry later than
// crashLatenessBound: each lapsed offer's lateness is from its deadline,
// or, when the deadline passed while no process was serving, from the
// restart.
func (d *drill) report(took time.Duration) {
	d.mu.Lock()
	kills := slices.Clone(d.kills)
	acks := len(d.ackLog) + d.releases + len(d.cancels)
	refused := d.releaseNo + len(d.claimNo) + len(d.declineNo) + len(d.cancelNo)
	for _, r := range d.joins {
		refused += r.refused
	}
	d.mu.Unlock()
	base := func(due time.Time) time.Time {
		if len(d.nodes) > 1 {
			return due
		}
		for _, k := range kills {
			if !due.Before(k.at) && due.Before(k.ready) {
				return k.ready
			}
		}
		return due
	}
	// The expiry timers a killed process held under its lease: after such
	// a kill the timer waits out the lease, and a timer caught by several
	// kills in a row (each killing whoever took it over) waits once for
	// each; its lateness is counted from the last of them.
	lastHeld := map[string]time.Time{} // offer id → the last kill that held its expiry timer
	var again int
	for _, k := range kills {
		for _, id := range k.leased {
			var subject string
			if err := d.sql.QueryRow(fmt.Sprintf(`SELECT subject_id FROM timers WHERE id = %d`, id)).Scan(&subject); err != nil {
				d.t.Fatal(err)
			}
			if _, ok := lastHeld[subject]; ok {
				again++
			}
			lastHeld[subject] = k.at
		}
	}
	var maxLate, maxLateAfterKill, maxFromDeadline time.Duration
	var lapsed, nearKill int
	var latest string
	d.rows(`SELECT id, expires_at, resolved_at FROM offers WHERE state = 'expired'`, func(r *sql.Rows) error {
		var id string
		var exp, res int64
		if err := r.Scan(&id, &exp, &res); err != nil {
			return err
		}
		lapsed++
		due := time.UnixMicro(exp)
		from := base(due)
		maxFromDeadline = max(maxFromDeadline, time.UnixMicro(res).Sub(from))
		if k, ok := lastHeld[id]; ok && k.After(from) {
			from = k
		}
		late := time.UnixMicro(res).Sub(from)
		if late > crashLatenessBound {
			d.fail("offer %s expired %v late (deadline %s, last kill that held its timer %s; bound %v)", id, late.Round(time.Millisecond),
				due.Format("15:04:05.000"), lastHeld[id].Format("15:04:05.000"), crashLatenessBound)
		}
		if late > maxLate {
			maxLate, latest = late, fmt.Sprintf("offer %s, due %s", id, due.Format("15:04:05.000"))
		}
		for _, k := range kills {
			if due.After(k.at.Add(-5*time.Second)) && due.Before(k.ready.Add(crashLatenessBound)) {
				nearKill++
				maxLateAfterKill = max(maxLateAfterKill, late)
				break
			}
		}
		return nil
	})
	// The timers a killed process held under its lease: how late they
	// fired once someone else (or the restarted process) could take them.
	var held int
	var maxHeldLate time.Duration
	for _, k := range kills {
		for _, id := range k.leased {
			var due int64
			var done sql.NullInt64
			if err := d.sql.QueryRow(fmt.Sprintf(`SELECT due_at, done_at FROM timers WHERE id = %d`, id)).Scan(&due, &done); err != nil {
				d.t.Fatal(err)
			}
			held++
			if done.Valid {
				maxHeldLate = max(maxHeldLate, time.UnixMicro(done.Int64).Sub(base(time.UnixMicro(due))))
			}
		}
	}
	states := map[string]int64{}
	d.rows(`SELECT state, count(*) FROM offers GROUP BY state`, func(r *sql.Rows) error {
		var s string
		var n int64
		err := r.Scan(&s, &n)
		states[s] = n
		return err
	})
	d.t.Logf("%s: %d kills in %v; %d requests (%d answered 5xx and were sent again); %d writes acknowledged, %d refused; offers %v; %d violations",
		d.store, len(kills), took.Round(time.Second), d.requests.Load(), d.serverErrs.Load(), acks, refused, states, d.violations.Load())
	d.t.Logf("%s: expiry lateness after a kill (bound %v): max %v over %d lapsed offers; max %v over the %d due around a kill; %d kills caught a process inside a timer's handler; %d timers held by a killed process under its lease (%d of them by one killed before), fired again at most %v after their deadline; the latest expiry from its deadline: %v",
		d.store, crashLatenessBound, maxLate.Round(time.Millisecond), lapsed, maxLateAfterKill.Round(time.Millisecond), nearKill, d.hunted, held, again, maxHeldLate.Round(time.Millisecond), maxFromDeadline.Round(time.Millisecond))
	// What the servers logged as going wrong (a handler that failed and
	// was retried shows here).
	logged := map[string]int{}
	var examples []string
	d.mu.Lock()
	for _, in := range d.procs {
		for _, line := range strings.Split(in.logs.String(), "\n") {
			var l struct{ Level, Msg, Path, Error string }
			if json.Unmarshal([]byte(line), &l) == nil && (l.Level == "WARN" || l.Level == "ERROR") {
				if logged[l.Level+" "+l.Msg]++; len(examples) < 5 {
					examples = append(examples, fmt.Sprintf("%s %s %s: %s", in.name, l.Msg, l.Path, l.Error))
				}
			}
		}
	}
	d.mu.Unlock()
	d.t.Logf("%s: the latest expiry: %s; warnings and errors the servers logged: %v %q", d.store, latest, logged, examples)
	if lapsed == 0 || states["claimed"] == 0 || states["declined"] == 0 {
		d.fail("the drill did not exercise lapses, claims and declines: offers %v", states)
	}
}
