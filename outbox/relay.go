// Package outbox sends the messages that use cases write to the outbox.
//
// A message row is written in the same transaction as the change that
// caused it (an offer, a confirmation). The Relay claims due rows under a
// lease, hands each to the Sender of its channel and records the outcome
// only while its lease still holds: sent, failed (retried later with
// backoff), or dead (given up; staff see it and can requeue it). The message
// ID is the idempotency key handed to the provider, so a message that is sent
// again after a crash between the provider's answer and the commit is not
// delivered twice by a provider that honours the key. Where a queue names
// each message to send instead (the Lambda deployment's SQS), SendOne
// claims and sends the one message named, the same way.
//
// Which messages are due, and when a failed one is next tried, is decided by
// the injected nextup.Clock. So is pacing: a provider's messages-per-second
// is a token bucket per provider account (golang.org/x/time/rate, fed the
// Clock's time), and a message waits for its token, holding its lease, so
// that a storm of offers goes out at the provider's rate instead of being
// refused by it. Each account's messages are sent by a worker of their own,
// so a slow or paced provider does not hold back another.
package outbox

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/nextup-dev/nextup"
)

// CodeOptedOut is the error code of a message to an address that opted
// out of its channel.
const CodeOptedOut = "opted_out"

// AddressRefused reports whether a send error says the address itself can
// never be reached on its channel: opted out, malformed, or refused by the
// provider as no such mailbox or number (the senders' codes bad_address,
// address_refused and sms_refused) — not a provider's outage, policy or
// configuration.
func AddressRefused(err error) bool {
	if !errors.Is(err, nextup.ErrInvalid) {
		return false
	}
	switch nextup.ErrorCode(err) {
	case CodeOptedOut, "bad_address", "address_refused", "sms_refused":
		return true
	}
	return false
}

// CodeNoSender is the error code of a message whose channel has no sender:
// dead at once, but the operator's doing, not the address's.
const CodeNoSender = "no_sender"

// Defaults of the Relay's optional fields.
const (
	DefaultMaxAttempts = 8
	DefaultLease       = time.Minute
	DefaultBatch       = 32
	DefaultPoll        = 500 * time.Millisecond
)

// DefaultBackoff is how long to wait before the next attempt of message id
// after attempt attempts (1 after the first failure): 30s, doubling for
// every attempt after that and capped at an hour (30s, 1m, 2m, 4m, 8m, 16m,
// 32m, 1h, 1h, ...), each moved by up to ±20%, rounded to the millisecond.
//
// The jitter matters when many messages fail together (a provider outage
// during a storm of offers): without it they would all come back in the
// same instant, as a second storm, and keep doing so at every attempt.
// It is not random but drawn from a hash of the message id and the
// attempt, so a message's schedule is the same on every relay and every
// run: staff and tests can work it out, and a relay that takes over a
// message does not change when it is tried.
func DefaultBackoff(id string, attempt int) time.Duration {
	const base, limit, spread = 30 * time.Second, time.Hour, 0.2
	if attempt < 1 {
		attempt = 1
	}
	d := base
	for i := 1; i < attempt && d < limit; i++ {
		d = min(2*d, limit)
	}
	h := sha256.Sum256([]byte(id + "/" + strconv.Itoa(attempt)))
	u := float64(binary.BigEndian.Uint64(h[:8])>>11) / (1 << 53) // uniform in [0, 1)
	return time.Duration(float64(d) * (1 + spread*(2*u-1))).Round(time.Millisecond)
}

// Limit is a provider account's sending rate: TPS messages a second on
// average, and up to Burst at once after a quiet spell (default 1: evenly
// spaced). A TPS of 0 is no limit.
type Limit struct {
	TPS   float64
	Burst int
}

// Budget is a provider account's sending budget shared by relays: the
// instances that share a database draw on one token bucket per account,
// so that between them they send at the account's Limit, not each at it.
// TakeToken takes a token of the account's bucket (tps a second, at most
// burst stored) at now and returns when it may be spent: now when the
// bucket had one to spare, later when relays ahead have drawn it down.
// ReturnToken gives back a token taken and not spent. The PostgreSQL
// store is one.
type Budget interface {
	TakeToken(ctx context.Context, account string, tps float64, burst int, now time.Time) (time.Time, error)
	ReturnToken(ctx context.Context, account string, burst int) error
}

// Accounter is a Sender whose provider limits sending per account: Account
// names it (the notify/ senders use "twilio:<account SID>",
// "smtp:<user>@<host:port>", ...). Channels whose senders name the same
// account share one rate limit and one worker. A Sender that is not an
// Accounter is an account of its own for its channel.
type Accounter interface {
	Account() string
}

// Attempt is a send attempt whose outcome the relay recorded, as told to
// Relay.OnAttempt.
type Attempt struct {
	// Message is the message as claimed, before this attempt.
	Message nextup.Message
	// State is the outcome: sent, failed (to be retried) or dead.
	State nextup.MessageState
	// At is when the outcome was recorded, in the Clock's time.
	At time.Time
	// Call is how long the provider took to answer, in wall time: more
	// than zero exactly when a provider was called (not for an opted-out
	// address or a channel without a sender).
	Call time.Duration
	// Err is why the attempt failed (nil when sent); errors.Is(Err,
	// nextup.ErrInvalid) says the address itself was refused for good.
	Err error
}

// Queued is how long the message had waited when this attempt ended:
// from when it was first due (its creation, or NotBefore when that is
// later) to At, in the Clock's time. For a sent message it is what the
// customer waited for, retries and pacing included.
func (a Attempt) Queued() time.Duration {
	due := a.Message.CreatedAt
	if a.Message.NotBefore.After(due) {
		due = a.Message.NotBefore
	}
	return a.At.Sub(due)
}

// Relay sends due outbox messages. Store and Clock are required, and a
// sender for every channel in use, through Senders or Default. A Relay must
// not be copied after first use; its methods are safe for concurrent use,
// and several relays (in one process or several) may share one store: the
// lease makes each claimed message theirs alone.
type Relay struct {
	Store nextup.Store
	Clock nextup.Clock
	// Senders deliver messages by channel.
	Senders map[nextup.Channel]nextup.Sender
	// Default delivers messages whose channel has no entry in Senders (in
	// development, a capture.Sender for every channel). When it is nil
	// too, such a message goes dead at once, saying why.
	Default nextup.Sender
	// MaxAttempts is how many attempts a message gets before it goes
	// dead. Default 8.
	MaxAttempts int
	// Backoff is how long to wait before the next attempt of a message,
	// given its id and the number of attempts made so far. Default
	// DefaultBackoff.
	Backoff func(id string, attempt int) time.Duration
	// Lease is how long a claimed message is reserved for this relay.
	// Default 1m; it should outlast a slow provider call.
	Lease time.Duration
	// Batch is how many messages are claimed at once. Default 32.
	Batch int
	// Limits paces sends, given per channel and kept per provider
	// account: the channel's sender's account (see Accounter) gets a
	// token bucket at that rate, and channels whose senders share an
	// account share the bucket, at the lowest of their rates. A channel
	// without a limit is not paced. Without a Budget every relay has
	// buckets of its own: several relays (instances) each send at the
	// full rate. A rate must allow two messages a Lease (Check). See
	// RunOnce.
	Limits map[nextup.Channel]Limit
	// Budget, when set, is where the tokens come from instead: a bucket
	// per account shared with the other relays on the same database, so
	// that the sum of their sends stays under each account's limit.
	Budget Budget
	// Sleep waits for d, or until ctx ends and then returns its error;
	// a message waits for its rate limit's token with it. Default: a
	// timer. With a fake Clock, a Sleep that advances the clock makes
	// pacing deterministic.
	Sleep func(ctx context.Context, d time.Duration) error
	// Poll is how often Run looks for due messages when not woken.
	// Default 500ms.
	Poll time.Duration
	// Logger receives send failures. Default slog.Default().
	Logger *slog.Logger
	// OnAttempt, when set, is told of every attempt whose outcome was
	// recorded (metrics). Several workers may call it at once; it must
	// not block.
	OnAttempt func(Attempt)
	// OnDead, when set, is run inside the transaction that records a
	// message dead, so that what the dead letter triggers (the use
	// cases' fallback: the same message on the person's other channel,
	// or their offer rolling on) commits with it or not at all. Its
	// error rolls that transaction back: the outcome is not recorded and
	// the message is tried again when its lease lapses, so a store that
	// failed for a moment loses no fallback. A fallback that has failed
	// DeadFallbackTries times in a row for one message (a bug, not a
	// moment) is given up: the message is recorded dead without it and
	// logged, rather than sent again at every lease. after, when not
	// nil, is run once the transaction has committed.
	OnDead func(ctx context.Context, tx nextup.Tx, m nextup.Message, sendErr error) (after func(), err error)
	// OnSent, when set, is run inside the transaction that records a
	// message sent, with the moment it was handed to the provider (an
	// offer's claim window starts then: waitlist's Service.Handed), in a
	// savepoint of its own: when it fails, what it wrote is undone and
	// logged, and the message is recorded sent all the same. It returns
	// what to do once that transaction commits.
	OnSent func(ctx context.Context, tx nextup.Tx, m nextup.Message, at time.Time) (after func(), err error)
	// DeadFallbackTries is how many times in a row OnDead may fail for
	// one message, in this process, before the message is recorded dead
	// without its fallback. Default 5.
	DeadFallbackTries int
	// Crash, when set (only in builds for crash tests), is called at
	// named points of a send so that a test can kill the process there.
	Crash func(point string, m nextup.Message)

	wakeOnce sync.Once
	wake     chan struct{}

	mu       sync.Mutex
	buckets  map[string]*rate.Limiter // by account
	deadErrs map[string]int           // OnDead's failures in a row, by message
}

// deadFailed counts a failure of message id's fallback and reports whether
// it has now failed DeadFallbackTries times in a row.
func (r *Relay) deadFailed(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.deadErrs == nil {
		r.deadErrs = map[string]int{}
	}
	r.deadErrs[id]++
	if r.deadErrs[id] < cmp.Or(r.DeadFallbackTries, 5) {
		return false
	}
	delete(r.deadErrs, id)
	return true
}

func (r *Relay) deadDone(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.deadErrs, id)
}

func (r *Relay) maxAttempts() int {
	return cmp.Or(r.MaxAttempts, DefaultMaxAttempts)
}

func (r *Relay) backoff(id string, attempt int) time.Duration {
	if r.Backoff != nil {
		return r.Backoff(id, attempt)
	}
	return DefaultBackoff(id, attempt)
}

func (r *Relay) lease() time.Duration {
	return cmp.Or(r.Lease, DefaultLease)
}

func (r *Relay) batch() int {
	return cmp.Or(r.Batch, DefaultBatch)
}

func (r *Relay) poll() time.Duration {
	return cmp.Or(r.Poll, DefaultPoll)
}

func (r *Relay) logger() *slog.Logger {
	return cmp.Or(r.Logger, slog.Default())
}

func (r *Relay) wakeCh() chan struct{} {
	r.wakeOnce.Do(func() { r.wake = make(chan struct{}, 1) })
	return r.wake
}

func (r *Relay) sleep(ctx context.Context, d time.Duration) error {
	if r.Sleep != nil {
		return r.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Check reports what would stop the Relay from running: no Store or Clock,
// or a limit it cannot keep. A message waits for its token holding its
// lease, and must get it within the lease, so a rate must allow at least
// two messages a Lease (with the default lease, one every 30 seconds).
func (r *Relay) Check() error {
	if r.Store == nil || r.Clock == nil {
		return errors.New("outbox: Relay needs a Store and a Clock")
	}
	for ch, l := range r.Limits {
		if l.TPS < 0 || l.Burst < 0 {
			return fmt.Errorf("outbox: the limit of channel %s is negative", ch)
		}
		if l.TPS > 0 && l.TPS*r.lease().Seconds() < 2 {
			return fmt.Errorf("outbox: the limit of channel %s, %g a second, is below two messages a lease (%v)", ch, l.TPS, r.lease())
		}
	}
	return nil
}

func (r *Relay) sender(ch nextup.Channel) nextup.Sender {
	if s, ok := r.Senders[ch]; ok && s != nil {
		return s
	}
	return r.Default
}

// account names the provider account that sends ch's messages.
func (r *Relay) account(ch nextup.Channel) string {
	if a, ok := r.sender(ch).(Accounter); ok {
		return a.Account()
	}
	return "channel:" + string(ch)
}

// limiters returns the token bucket of every limited channel, creating
// and adjusting the accounts' buckets to the current Limits and senders.
func (r *Relay) limiters(now time.Time) map[nextup.Channel]*rate.Limiter {
	if len(r.Limits) == 0 {
		return nil
	}
	accounts := map[nextup.Channel]string{}
	want := map[string]Limit{}
	for ch, l := range r.Limits {
		if l.TPS <= 0 {
			continue
		}
		l.Burst = max(l.Burst, 1)
		a := r.account(ch)
		accounts[ch] = a
		if w, ok := want[a]; ok {
			l = Limit{TPS: min(w.TPS, l.TPS), Burst: min(w.Burst, l.Burst)}
		}
		want[a] = l
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.buckets == nil {
		r.buckets = map[string]*rate.Limiter{}
	}
	for a, l := range want {
		switch b := r.buckets[a]; {
		case b == nil:
			r.buckets[a] = rate.NewLimiter(rate.Limit(l.TPS), l.Burst)
		case b.Limit() != rate.Limit(l.TPS) || b.Burst() != l.Burst:
			b.SetLimitAt(now, rate.Limit(l.TPS))
			b.SetBurstAt(now, l.Burst)
		}
	}
	out := make(map[nextup.Channel]*rate.Limiter, len(accounts))
	for ch, a := range accounts {
		out[ch] = r.buckets[a]
	}
	return out
}

// claimLimit is how many messages a round may claim: Batch, but no more
// than any limited account can send within half a lease (its tokens now
// and those that come in that time), since the batch may be all its
// messages. The other half of the lease is for the provider calls. At
// least one.
func (r *Relay) claimLimit(now time.Time, lims map[nextup.Channel]*rate.Limiter) int {
	n := r.batch()
	half := r.lease().Seconds() / 2
	for _, lim := range lims {
		can := int(lim.TokensAt(now) + float64(lim.Limit())*half)
		n = min(n, max(can, 1))
	}
	return n
}

// Wake makes a running Run look for due messages now instead of at its next
// poll. It never blocks; wake-ups that arrive while one is pending merge. A
// use case calls it after committing a message that should go at once.
func (r *Relay) Wake() {
	select {
	case r.wakeCh() <- struct{}{}:
	default:
	}
}

// RunOnce claims one batch of due messages and tries to send each. It
// returns how many were sent and how many failed (including those that
// went dead); the error is a store failure or ctx ending. Messages left for
// a later round (a lapsed lease, a token that would come too late) and sends
// whose outcome could not be recorded because another relay had taken the
// message over count as neither.
//
// The batch is split by provider account (see Accounter), and each
// account's messages are sent in order by a worker of its own, at once
// with the other accounts'. For every claimed message:
//   - sent: recorded with the provider's id;
//   - a permanent error (errors.Is(err, nextup.ErrInvalid)), or no sender
//     for its channel and no Default: dead at once;
//   - any other error: failed, next tried at now+Backoff(id, attempts), or
//     dead once it has had MaxAttempts attempts.
//
// A message of a limited channel first waits (Sleep) for a token of its
// account's bucket, measured in the Clock's time, keeping its lease: a
// storm is paced, nothing is refused or counted as an attempt. So that the
// wait ends well within the lease, a round claims no more messages than
// every limited account could send in half a lease (see Limits); should a
// token still come later than three quarters of the way through the lease
// (another round on the same relay took the tokens), the message and the
// rest of its account's are left, untouched, to be claimed again when the
// lease lapses.
//
// A message whose lease has run out by the time its turn comes (a slow
// provider earlier in the batch) is skipped as well: another relay may
// have claimed it, and sending it here could deliver it twice.
func (r *Relay) RunOnce(ctx context.Context) (sent, failed int, err error) {
	sent, failed, _, err = r.round(ctx)
	return sent, failed, err
}

// round is RunOnce, also returning how many messages it could have
// claimed.
func (r *Relay) round(ctx context.Context) (sent, failed, limit int, err error) {
	if err := r.Check(); err != nil {
		return 0, 0, 0, err
	}
	now := r.Clock.Now()
	lims := r.limiters(now)
	limit = r.claimLimit(now, lims)
	var due []nextup.Message
	err = r.Store.InTx(ctx, func(tx nextup.Tx) error {
		var err error
		due, err = tx.MessageClaimDue(ctx, now, r.lease(), limit)
		return err
	})
	if err != nil {
		return 0, 0, limit, fmt.Errorf("outbox: claim due messages: %w", err)
	}
	var accounts []string
	byAccount := map[string][]nextup.Message{}
	for _, m := range due {
		a := r.account(m.Channel)
		if _, ok := byAccount[a]; !ok {
			accounts = append(accounts, a)
		}
		byAccount[a] = append(byAccount[a], m)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, a := range accounts {
		wg.Go(func() {
			s, f, e := r.work(ctx, byAccount[a], lims)
			mu.Lock()
			defer mu.Unlock()
			sent, failed = sent+s, failed+f
			if err == nil {
				err = e
			}
		})
	}
	wg.Wait()
	return sent, failed, limit, err
}

// OneResult is what SendOne did with one message.
type OneResult struct {
	// State is the outcome recorded: sent, failed (due again at
	// NextAttemptAt) or dead (given up; OnDead ran with it). It is ""
	// when nothing was recorded: the message was Skipped, or Lost.
	State nextup.MessageState
	// NextAttemptAt is when a failed message is due again, the zero time
	// for any other State: when a queue that names messages to send
	// should name this one again.
	NextAttemptAt time.Time
	// Skipped says the message was not claimed, so nothing was sent: it
	// may not be sent now (sent, dead or cancelled already, leased by
	// another relay, not due yet), or there is no such message. A second
	// delivery of an id that was sent gets this, and so does an id the
	// store does not have, which no later delivery would find either.
	Skipped bool
	// Lost says the message was sent (or tried) but its outcome was not
	// recorded: its lease ran out during the send and another relay
	// claimed it, whose outcome is the one that counts.
	Lost bool
	// Reason is why the message was Skipped: the store's refusal,
	// wrapping nextup.ErrNotFound (no such message) or nextup.ErrConflict
	// (not claimable now; its text says why). Nil otherwise; a send's
	// error is logged and told to OnAttempt, as in a batch.
	Reason error
}

// SendOne claims the message with this id and sends it just as RunOnce
// sends a message of its batch: the opt-out check, the sender, the
// outcome recorded under the lease, OnDead, OnAttempt. It is for a queue
// that names each message to send (the Lambda deployment's SQS
// consumer), which may name one more than once: the claim is what makes
// the send happen once, since a message already sent, or leased by
// another consumer, is Skipped. Limits do not apply: how many consumers
// run at once paces the sends.
//
// The error is a store failure, a dead letter's OnDead that failed (the
// message stays leased and is tried again, fallback and all, once the
// lease lapses), or ctx ending: cases in which the id should be named
// again. Neither a message that may not be claimed nor an id the store
// does not have is an error (both are Skipped): naming them again would
// change nothing.
func (r *Relay) SendOne(ctx context.Context, id string) (OneResult, error) {
	if r.Store == nil || r.Clock == nil {
		return OneResult{}, errors.New("outbox: Relay needs a Store and a Clock")
	}
	var m nextup.Message
	err := r.Store.InTx(ctx, func(tx nextup.Tx) error {
		var err error
		m, err = tx.MessageClaim(ctx, id, r.Clock.Now(), r.lease())
		return err
	})
	switch {
	case errors.Is(err, nextup.ErrNotFound), errors.Is(err, nextup.ErrConflict):
		return OneResult{Skipped: true, Reason: err}, nil
	case err != nil:
		return OneResult{}, fmt.Errorf("outbox: claim message %s: %w", id, err)
	}
	out, res, err := r.send(ctx, m)
	switch {
	case err != nil:
		return OneResult{}, err
	case out == outcomeLost:
		return OneResult{Lost: true}, nil
	}
	return OneResult{State: res.State, NextAttemptAt: res.NextAttemptAt}, nil
}

// work sends one account's share of a batch, in order.
func (r *Relay) work(ctx context.Context, msgs []nextup.Message, lims map[nextup.Channel]*rate.Limiter) (sent, failed int, err error) {
	var deadErr error // the first fallback that failed
	defer func() { err = cmp.Or(err, deadErr) }()
	for _, m := range msgs {
		if err := ctx.Err(); err != nil {
			return sent, failed, err
		}
		if m.ClaimedUntil == nil || !r.Clock.Now().Before(*m.ClaimedUntil) {
			continue
		}
		if lim := lims[m.Channel]; lim != nil {
			ok, err := r.pace(ctx, lim, m)
			if err != nil {
				return sent, failed, err
			}
			if !ok {
				// The account's later messages would wait longer still.
				return sent, failed, nil
			}
		}
		out, _, err := r.send(ctx, m)
		var fb *fallbackError
		if errors.As(err, &fb) && ctx.Err() == nil {
			// One message's fallback failed; the store answers, so
			// the account's later messages go on.
			deadErr = cmp.Or(deadErr, err)
			continue
		}
		if err != nil {
			return sent, failed, err
		}
		switch out {
		case outcomeSent:
			sent++
		case outcomeFailed:
			failed++
		}
	}
	return sent, failed, nil
}

// pace waits for m's token from lim. It reports false, handing the token
// back, when m may not be sent: the token would come later than three
// quarters of the way through m's lease, or the lease ran out meanwhile.
// A message that went to no provider in the end (opted out, no sender)
// still spent its token: rare enough not to matter.
func (r *Relay) pace(ctx context.Context, lim *rate.Limiter, m nextup.Message) (bool, error) {
	if r.Budget != nil {
		return r.paceShared(ctx, lim, m)
	}
	now := r.Clock.Now()
	res := lim.ReserveN(now, 1)
	if !res.OK() {
		return false, nil
	}
	d := res.DelayFrom(now)
	if d == 0 {
		return true, nil
	}
	if now.Add(d).After(m.ClaimedUntil.Add(-r.lease() / 4)) {
		res.CancelAt(now)
		return false, nil
	}
	if err := r.sleep(ctx, d); err != nil {
		res.CancelAt(r.Clock.Now())
		return false, err
	}
	if now := r.Clock.Now(); !now.Before(*m.ClaimedUntil) {
		res.CancelAt(now)
		return false, nil
	}
	return true, nil
}

// paceShared is pace with the token taken from the shared Budget, at the
// rate and burst of lim (the account's, as Limits give it).
func (r *Relay) paceShared(ctx context.Context, lim *rate.Limiter, m nextup.Message) (bool, error) {
	account, burst := r.account(m.Channel), lim.Burst()
	now := r.Clock.Now()
	ready, err := r.Budget.TakeToken(ctx, account, float64(lim.Limit()), burst, now)
	if err != nil {
		return false, fmt.Errorf("outbox: %w", err)
	}
	if !ready.After(now) {
		return true, nil
	}
	giveBack := func() error {
		// The other relays' waits were counted from this token: give
		// it back for them.
		if err := r.Budget.ReturnToken(context.WithoutCancel(ctx), account, burst); err != nil {
			return fmt.Errorf("outbox: %w", err)
		}
		return nil
	}
	if ready.After(m.ClaimedUntil.Add(-r.lease() / 4)) {
		return false, giveBack()
	}
	if err := r.sleep(ctx, ready.Sub(now)); err != nil {
		return false, cmp.Or(err, giveBack())
	}
	if now := r.Clock.Now(); !now.Before(*m.ClaimedUntil) {
		return false, giveBack()
	}
	return true, nil
}

// optedOut returns the reason m's address may not be contacted on its
// channel, or "" when it may.
func (r *Relay) optedOut(ctx context.Context, m nextup.Message) (string, error) {
	if m.To == "" {
		return "", nil
	}
	var reason string
	err := r.Store.Read(ctx, func(tx nextup.Tx) error {
		sups, err := tx.SuppressionList(ctx, m.BusinessID, []string{nextup.AddressKey(m.Channel, m.To)})
		for _, s := range sups {
			if s.Channel == m.Channel {
				reason = s.Reason
			}
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("outbox: suppressions of message %s: %w", m.ID, err)
	}
	return reason, nil
}

// fallbackError is the failure of a dead message's fallback (OnDead): the
// message stays leased and is tried again when its lease lapses.
type fallbackError struct {
	id  string
	err error
}

func (e *fallbackError) Error() string {
	return fmt.Sprintf("outbox: fallback of dead message %s: %v", e.id, e.err)
}

func (e *fallbackError) Unwrap() error { return e.err }

// outcome is what became of one claimed message.
type outcome int

const (
	outcomeSent   outcome = iota
	outcomeFailed         // failed or dead
	outcomeLost           // the lease was lost; another relay's outcome counts
)

// send delivers one claimed message and records the outcome, which it
// also returns (unless the outcome is outcomeLost); the error is a store
// failure or ctx ending.
func (r *Relay) send(ctx context.Context, m nextup.Message) (outcome, nextup.MessageResult, error) {
	log := r.logger()
	attempt := m.Attempts + 1
	var providerID string
	var sendErr error
	var call time.Duration
	optedOut, err := r.optedOut(ctx, m)
	if err != nil {
		return outcomeLost, nextup.MessageResult{}, err
	}
	if s := r.sender(m.Channel); optedOut != "" {
		// Checked at the last moment, so an opt-out (an SMS STOP, a
		// bounce) is honoured before the next message, even one queued
		// earlier. Permanent: the message goes dead, visibly.
		sendErr = nextup.Errorf(nextup.ErrInvalid, CodeOptedOut, "%s opted out of %s (%s)", m.To, m.Channel, optedOut)
	} else if s == nil {
		sendErr = nextup.Errorf(nextup.ErrInvalid, CodeNoSender, "no sender for channel %q (and no default sender)", m.Channel)
	} else {
		// A provider that hangs must not hold the relay: give up on
		// the call when the lease would have run out in real time.
		sctx, cancel := context.WithTimeout(ctx, r.lease())
		start := time.Now() // wall time: a measurement of the provider, not logic
		providerID, sendErr = s.Send(sctx, m)
		call = max(time.Since(start), time.Nanosecond) // > 0: a provider was called
		cancel()
		if sendErr != nil && ctx.Err() != nil {
			// Shutting down, not the provider's fault: leave the
			// message leased; it is tried again when the lease lapses.
			return outcomeLost, nextup.MessageResult{}, ctx.Err()
		}
	}

	now := r.Clock.Now()
	res := nextup.MessageResult{State: nextup.MessageSent, At: now, ProviderID: providerID}
	if sendErr != nil {
		res = nextup.MessageResult{State: nextup.MessageFailed, At: now, Error: sendErr.Error()}
		switch {
		case errors.Is(sendErr, nextup.ErrInvalid):
			res.State = nextup.MessageDead
		case attempt >= r.maxAttempts():
			res.State = nextup.MessageDead
		default:
			res.NextAttemptAt = now.Add(r.backoff(m.ID, attempt))
		}
		attrs := []slog.Attr{
			slog.String("message_id", m.ID),
			slog.String("business_id", m.BusinessID),
			slog.String("channel", string(m.Channel)),
			slog.Int("attempt", attempt),
			slog.String("state", string(res.State)),
			slog.Any("error", sendErr),
		}
		if res.State == nextup.MessageFailed {
			attrs = append(attrs, slog.Time("next_attempt_at", res.NextAttemptAt))
		}
		log.LogAttrs(ctx, slog.LevelWarn, "outbox send failed", attrs...)
	}

	if r.Crash != nil {
		r.Crash("before_finish", m)
	}
	var after func()
	var deadErr error // OnDead's
	finish := func(onDead bool) error {
		return r.Store.InTx(ctx, func(tx nextup.Tx) error {
			after, deadErr = nil, nil
			if err := tx.MessageFinish(ctx, m.ID, *m.ClaimedUntil, res); err != nil {
				return err
			}
			if res.State == nextup.MessageSent && r.OnSent != nil {
				if err := tx.Savepoint(ctx, func() error {
					var err error
					after, err = r.OnSent(ctx, tx, m, res.At)
					return err
				}); err != nil {
					after = nil
					log.LogAttrs(ctx, slog.LevelError, "outbox: what follows a sent message failed; the message is recorded sent",
						slog.String("message_id", m.ID), slog.Any("error", err))
				}
				return nil
			}
			if !onDead || res.State != nextup.MessageDead || r.OnDead == nil {
				return nil
			}
			after, deadErr = r.OnDead(ctx, tx, m, sendErr)
			return deadErr
		})
	}
	err = finish(true)
	if deadErr != nil && ctx.Err() == nil {
		if !r.deadFailed(m.ID) {
			// Most likely the store failed for a moment: nothing is
			// recorded, and the message is tried again, fallback and
			// all, when its lease lapses.
			log.LogAttrs(ctx, slog.LevelError, "outbox: the fallback of a dead message failed; the message is tried again when its lease lapses",
				slog.String("message_id", m.ID), slog.Any("error", deadErr))
			return outcomeLost, nextup.MessageResult{}, &fallbackError{m.ID, deadErr}
		}
		// The fallback fails every time: it would send the message
		// again at every lease. Record the dead letter alone, where
		// staff see it (and can requeue it).
		log.LogAttrs(ctx, slog.LevelError, "outbox: the fallback of a dead message failed again; the message is recorded dead without it",
			slog.String("message_id", m.ID), slog.Any("error", deadErr))
		err = finish(false)
	} else if r.OnDead != nil && res.State == nextup.MessageDead {
		r.deadDone(m.ID)
	}
	if errors.Is(err, nextup.ErrConflict) {
		// The lease ran out during the send and another relay took the
		// message; its outcome is the one that counts.
		log.LogAttrs(ctx, slog.LevelWarn, "outbox lease lost before the outcome was recorded",
			slog.String("message_id", m.ID), slog.String("state", string(res.State)))
		return outcomeLost, nextup.MessageResult{}, nil
	}
	if err != nil {
		return outcomeLost, nextup.MessageResult{}, fmt.Errorf("outbox: finish message %s: %w", m.ID, err)
	}
	if r.Crash != nil {
		r.Crash("after_finish", m)
	}
	if after != nil {
		after()
	}
	if r.OnAttempt != nil {
		r.OnAttempt(Attempt{Message: m, State: res.State, At: now, Call: call, Err: sendErr})
	}
	if res.State == nextup.MessageSent {
		return outcomeSent, res, nil
	}
	return outcomeFailed, res, nil
}

// Run sends due messages until ctx is done: RunOnce, at once again while
// batches come back full, else wait for the next poll or a Wake. It returns
// nil when ctx is cancelled. Store errors are logged and retried at the next
// poll. The wall-clock ticker only sets the cadence; which messages are due
// is decided by r.Clock.
func (r *Relay) Run(ctx context.Context) error {
	if err := r.Check(); err != nil {
		return err
	}
	ticker := time.NewTicker(r.poll())
	defer ticker.Stop()
	wake := r.wakeCh()
	for {
		sent, failed, limit, err := r.round(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			r.logger().LogAttrs(ctx, slog.LevelError, "outbox round failed", slog.Any("error", err))
		}
		if err == nil && sent+failed >= limit {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		case <-wake:
		}
	}
}
