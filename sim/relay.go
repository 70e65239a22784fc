package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/outbox"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
)

// The outbox relay in the simulation (issue 14). Every world has an
// outbox.Relay over its store and fake clock, with an email and an SMS
// sender played by the seed: each address a person gives is drawn, when
// the person is made, to be good, flaky (a send fails now and then, for a
// passing reason), down (every send fails for a passing reason: the
// message goes dead after relayAttempts), refused for good (no such mailbox or number, the
// errors notify/smtp returns for 5.1.1 and notify/twilio for 21211, which
// outbox.AddressRefused knows) or rejected (a provider's policy: permanent,
// but not the address's fault). Its dead letters run the use cases'
// fallback in the transaction that records them dead, wired as
// `nextup serve` wires it, so that whole stories happen: an offer
// whose only address refuses ends no_channel and the slot rolls on; an
// offer whose text is refused goes again by email. A carrier's
// "undelivered" report for a text that went out (waitlist.SMSDelivery) is
// a step of its own, and faults hit the relay's transactions — above all
// the one that records a dead letter with its fallback.

// relayAttempts is the relay's MaxAttempts: small, so that an address that
// is down gives up its messages within a seed.
const relayAttempts = 3

// How an address answers the simulated providers.
const (
	addrGood     = "good"
	addrFlaky    = "flaky"
	addrDown     = "down"
	addrRefused  = "refused"
	addrRejected = "rejected"
)

// Outcomes of one simulated send.
const (
	sendOK        = "sent"
	sendTransient = "transient"
	sendRefused   = "refused"
	sendRejected  = "rejected"
)

// drawAddress draws how a new address answers.
func (w *world) drawAddress() string {
	switch r := w.intn(100); {
	case r < 55:
		return addrGood
	case r < 75:
		return addrFlaky
	case r < 82:
		return addrDown
	case r < 94:
		return addrRefused
	default:
		return addrRejected
	}
}

// addAddresses draws how a new person's addresses answer.
func (w *world) addAddresses(biz string, p *person) {
	var parts []string
	for _, a := range []struct {
		ch   nextup.Channel
		addr string
	}{{nextup.ChannelEmail, p.email}, {nextup.ChannelSMS, p.phone}} {
		if a.addr == "" {
			continue
		}
		b := w.drawAddress()
		w.addrs[supKey{biz, a.ch, nextup.AddressKey(a.ch, a.addr)}] = b
		parts = append(parts, fmt.Sprintf("%s %s", a.ch, b))
	}
	w.note("new %s (%s)", p.name, strings.Join(parts, ", "))
}

// sendRec is one call of a simulated provider in a relay round.
type sendRec struct {
	m         nextup.Message // as the relay claimed it
	behaviour string
	outcome   string
	provider  string
	err       error
	problem   string // a failed check, reported after the round (the sender runs on the relay's goroutine)
}

// simSender is a provider of one channel, answering as the address was
// drawn. Both channels name one account, so the relay sends a round's
// messages on one worker in claim order, and the seed's draws (the
// sender's and those of the fallbacks' ids and tokens) come in the same
// order on every run and every backend.
type simSender struct {
	w  *world
	ch nextup.Channel
}

func (s *simSender) Channel() nextup.Channel { return s.ch }

func (s *simSender) Account() string { return "sim" }

func (s *simSender) Send(ctx context.Context, m nextup.Message) (string, error) {
	w := s.w
	key := nextup.AddressKey(m.Channel, m.To)
	rec := sendRec{m: m, behaviour: w.addrs[supKey{m.BusinessID, m.Channel, key}]}
	defer func() {
		w.sendMu.Lock()
		defer w.sendMu.Unlock()
		w.sends = append(w.sends, rec)
	}()
	if m.Channel != s.ch {
		rec.problem = fmt.Sprintf("message %s of channel %s handed to the %s sender", m.ID, m.Channel, s.ch)
	}
	if rec.behaviour == "" {
		rec.problem = fmt.Sprintf("message %s goes to %s %q, an address no simulated person gave", m.ID, m.Channel, m.To)
	}
	// A suppressed address is never sent to: the relay looks at the
	// opt-outs just before it sends, and nothing else writes to this
	// address's channel between that look and this call.
	err := w.fs.Read(ctx, func(tx nextup.Tx) error {
		sups, err := tx.SuppressionList(ctx, m.BusinessID, []string{key})
		for _, sp := range sups {
			if sp.Channel == m.Channel {
				rec.problem = fmt.Sprintf("message %s was sent to %s %s, opted out since %s (%s)", m.ID, m.Channel, m.To, fmtT(sp.At), sp.Reason)
			}
		}
		return err
	})
	if err != nil {
		rec.problem = fmt.Sprintf("read the opt-outs of %s: %v", key, err)
	}
	switch rec.behaviour {
	case addrFlaky:
		rec.outcome = sendOK
		if w.chance(0.4) {
			rec.outcome = sendTransient
		}
	case addrDown:
		rec.outcome = sendTransient
	case addrRefused:
		rec.outcome = sendRefused
	case addrRejected:
		rec.outcome = sendRejected
	default:
		rec.outcome = sendOK
	}
	email := m.Channel == nextup.ChannelEmail
	switch rec.outcome {
	case sendTransient:
		if email {
			rec.err = fmt.Errorf("smtp send %s: 451 4.3.0 mailbox temporarily unavailable", m.ID)
		} else {
			rec.err = fmt.Errorf("twilio send %s: 20429 too many requests", m.ID)
		}
	case sendRefused:
		// As notify/smtp and notify/twilio report a refused address.
		if email {
			rec.err = nextup.Errorf(nextup.ErrInvalid, "address_refused", "mail server refused %s: 550 5.1.1 no such mailbox", m.To)
		} else {
			rec.err = nextup.Errorf(nextup.ErrInvalid, "sms_refused", "twilio refused %s: 21211 invalid 'To' phone number", m.To)
		}
	case sendRejected:
		if email {
			rec.err = nextup.Errorf(nextup.ErrInvalid, "mail_refused", "mail server refused to send to %s: 554 5.7.1 relay access denied", m.To)
		} else {
			rec.err = nextup.Errorf(nextup.ErrInvalid, "sms_not_allowed", "twilio may not text %s: 21408 permission to send to this region is not enabled", m.To)
		}
	default:
		rec.provider = fmt.Sprintf("sim-%s-%d", m.ID, m.Attempts+1)
	}
	return rec.provider, rec.err
}

// relayStore is the world's store (with its faults) as the relay sees
// it. The store hands out a claimed batch in due order, and messages due
// and made at the same instant — a round's fallbacks, a release's offers —
// in the order RETURNING gives, which is not the same on SQLite and
// PostgreSQL; the simulation orders those by id, so that both backends
// and every replay send in one order.
type relayStore struct{ w *world }

func (s relayStore) InTx(ctx context.Context, fn func(tx nextup.Tx) error) error {
	return s.w.fs.InTx(ctx, func(tx nextup.Tx) error { return fn(claimOrderTx{Tx: tx, w: s.w}) })
}

func (s relayStore) Read(ctx context.Context, fn func(tx nextup.Tx) error) error {
	return s.w.fs.Read(ctx, fn)
}

func (s relayStore) Ping(ctx context.Context) error { return s.w.fs.Ping(ctx) }

func (s relayStore) Close() error { return nil }

type claimOrderTx struct {
	nextup.Tx
	w *world
}

func (t claimOrderTx) MessageClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]nextup.Message, error) {
	ms, err := t.Tx.MessageClaimDue(ctx, now, lease, limit)
	slices.SortStableFunc(ms, func(a, b nextup.Message) int {
		if c := a.NextAttemptAt.Compare(b.NextAttemptAt); c != 0 {
			return c
		}
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	if err == nil {
		t.w.claimed = len(ms)
		for _, m := range ms {
			if _, ok := t.w.leased[m.ID]; ok {
				// Left leased by a faulted round: claimed again once the
				// lease lapsed.
				delete(t.w.leased, m.ID)
				t.w.st.relayRetried++
			}
		}
	}
	return ms, err
}

// newRelay is the world's relay, its OnDead wired as `nextup serve`
// wires it (deadLetter there).
func (w *world) newRelay() *outbox.Relay {
	return &outbox.Relay{
		Store: relayStore{w: w},
		Clock: w.clock,
		Senders: map[nextup.Channel]nextup.Sender{
			nextup.ChannelEmail: &simSender{w: w, ch: nextup.ChannelEmail},
			nextup.ChannelSMS:   &simSender{w: w, ch: nextup.ChannelSMS},
		},
		MaxAttempts: relayAttempts,
		Logger:      w.svc.Logger,
		// Faults here are moments, never bugs: a fallback that failed
		// is always tried again (the relay's own tests give one up).
		DeadFallbackTries: math.MaxInt,
		OnDead: func(ctx context.Context, tx nextup.Tx, m nextup.Message, sendErr error) (func(), error) {
			return w.svc.DeadLetter(ctx, tx, m.ID, outbox.AddressRefused(sendErr), fmt.Sprint(sendErr))
		},
		OnSent: w.svc.Handed,
	}
}

// ---------------------------------------------------------------- steps

func (w *world) opRelay() bool { return w.relayRound(false) }

func (w *world) opRelayFault() bool { return w.relayRound(true) }

// relayRound runs one relay round (RunOnce), half the time after moving
// the clock a little (so that failed messages come due again and leases
// lapse). With fault, a store fault is armed for the round: most often in
// the transaction that records a dead letter with its fallback, otherwise
// in the claim or any send's outcome. The round's other transactions
// commit; the faulted one leaves its message leased, to be tried again
// when the lease lapses.
func (w *world) relayRound(fault bool) bool {
	if fault && len(w.dueMessages(w.clock.Now().Add(3*time.Minute))) == 0 {
		return false // no transaction to fail
	}
	if w.chance(0.5) {
		d := w.between(time.Second, 3*time.Minute)
		if err := w.invoke(func() error { return timer.Advance(w.ctx, w.clock, w.sweep, d) }); err != nil {
			w.fail("check timers: Advance by %s: %v", d, err)
		}
		w.advanced, w.timerDirty = true, false
		w.note("after %s", d)
	}
	var p *faultPlan
	if fault {
		p = &faultPlan{contain: true, panic: w.chance(0.3)}
		// Aim at a dead letter when the round has one coming: a message
		// to an address that refuses, or on its last attempt to one that
		// is down.
		doomed := slices.ContainsFunc(w.dueMessages(w.clock.Now()), func(m nextup.Message) bool {
			b := w.addrs[supKey{m.BusinessID, m.Channel, nextup.AddressKey(m.Channel, m.To)}]
			return b == addrRefused || b == addrRejected || (b == addrDown && m.Attempts+1 >= relayAttempts) ||
				w.m.suppressed(m.BusinessID, m.Channel, m.To, 0)
		})
		if doomed && w.chance(0.8) {
			p.deadOnly, p.at = true, 1+w.intn(pick(w, []int{3, 12, 40}))
		} else {
			p.skipTx, p.at = w.intn(4), 1+w.intn(pick(w, []int{2, 6}))
		}
		w.fs.arm(p)
	}
	w.sends, w.claimed = nil, 0
	start := w.clock.Now()
	sent, failed, err := w.relay.RunOnce(w.ctx)
	if p != nil {
		w.fs.disarm()
	}
	recs := w.sends
	w.sends = nil
	for _, r := range recs {
		w.note("%s %s %s %s→%s", r.m.ID, r.m.Kind, r.m.Channel, r.behaviour, r.outcome)
		w.st.sends[r.outcome]++
		if r.problem != "" {
			w.fail("check 9 relay: %s", r.problem)
		}
	}
	w.note("%d sent, %d failed", sent, failed)
	faulted := ""
	switch {
	case p != nil && p.fired:
		w.note("fault: %s", p)
		w.st.relayFaults++
		if p.panic {
			w.st.relayPanics++
		}
		if !errors.Is(err, errInjected) {
			w.fail("check fault: a relay round whose transaction failed (%s) returned %v", p, err)
		}
		if p.finishID != "" {
			faulted = p.finishID
			w.checkStillLeased(p)
			if p.deadOnly {
				w.st.deadLetterFaults++
			}
		}
	case p != nil:
		w.note("fault: %s", p)
		w.st.faultsMissed++
		fallthrough
	default:
		if err != nil {
			w.fail("check 9 relay: RunOnce: %v", err)
		}
	}
	w.checkSends(recs, faulted)
	w.checkSuppressions()
	if p == nil || !p.fired {
		w.checkLeasesLapsed(start)
	}
	return true
}

// checkLeasesLapsed: a message a faulted round left leased is claimed
// again by the first round that starts after its lease lapsed and has
// room in its batch, unless its offer ended and cancelled it meanwhile.
func (w *world) checkLeasesLapsed(start time.Time) {
	if w.claimed >= outbox.DefaultBatch {
		return
	}
	for _, id := range sortedKeys(w.leased) {
		if w.leased[id].After(start) {
			continue
		}
		var m nextup.Message
		err := w.fs.Read(w.ctx, func(tx nextup.Tx) error {
			var err error
			m, err = tx.MessageGet(w.ctx, id)
			return err
		})
		if err != nil {
			w.fail("read message %s: %v", id, err)
		}
		if m.State == nextup.MessageQueued || m.State == nextup.MessageFailed {
			w.fail("check 9 relay: message %s, left leased until %s by a faulted round, was not tried again by the round at %s (%d claimed)",
				id, fmtT(w.leased[id]), fmtT(start), w.claimed)
		}
		delete(w.leased, id)
	}
}

// dueMessages are the messages a relay round at t would claim.
func (w *world) dueMessages(t time.Time) []nextup.Message {
	var due []nextup.Message
	err := w.fs.Read(w.ctx, func(tx nextup.Tx) error {
		for _, bid := range w.m.bizIDs {
			for _, st := range []nextup.MessageState{nextup.MessageQueued, nextup.MessageFailed} {
				ms, err := tx.MessageList(w.ctx, nextup.MessageFilter{BusinessID: bid, State: st})
				if err != nil {
					return err
				}
				for _, m := range ms {
					if !m.NotBefore.After(t) && !m.NextAttemptAt.After(t) && (m.ClaimedUntil == nil || !m.ClaimedUntil.After(t)) {
						due = append(due, m)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		w.fail("read due messages: %v", err)
	}
	return due
}

// checkStillLeased: a send whose outcome's transaction failed recorded
// nothing: the message is as claimed, under the lease, and no fallback of
// it exists; it is tried again when the lease lapses.
func (w *world) checkStillLeased(p *faultPlan) {
	var m nextup.Message
	var fbErr error
	err := w.fs.Read(w.ctx, func(tx nextup.Tx) error {
		var err error
		if m, err = tx.MessageGet(w.ctx, p.finishID); err != nil {
			return err
		}
		_, fbErr = tx.MessageGet(w.ctx, p.finishID+"_fb")
		return nil
	})
	if err != nil {
		w.fail("read message %s: %v", p.finishID, err)
	}
	if m.ClaimedUntil == nil || !m.ClaimedUntil.Equal(p.finishLease) || (m.State != nextup.MessageQueued && m.State != nextup.MessageFailed) {
		w.fail("check fault: the outcome of message %s was rolled back (%s) but the message is %s, lease %v (claimed until %s)",
			p.finishID, p, m.State, m.ClaimedUntil, fmtT(p.finishLease))
	}
	if !errors.Is(fbErr, nextup.ErrNotFound) {
		w.fail("check fault: the dead letter of %s was rolled back (%s) but its fallback is there (%v)", p.finishID, p, fbErr)
	}
	w.leased[p.finishID] = p.finishLease
}

// checkSends holds what each send's outcome made of its message against
// the relay's rules: sent; failed and due again after DefaultBackoff; dead
// after relayAttempts attempts or at once when refused. A message whose
// offer ended earlier in the round stays cancelled unless it went out.
// A send whose outcome was rolled back by a fault is checked by
// checkStillLeased. Every address refused for good is opted out (learnt
// by the model).
func (w *world) checkSends(recs []sendRec, faulted string) {
	if len(recs) == 0 {
		return
	}
	got := map[string]nextup.Message{}
	err := w.fs.Read(w.ctx, func(tx nextup.Tx) error {
		for _, r := range recs {
			m, err := tx.MessageGet(w.ctx, r.m.ID)
			if err != nil {
				return err
			}
			got[m.ID] = m
		}
		return nil
	})
	if err != nil {
		w.fail("read sent messages: %v", err)
	}
	now := w.clock.Now()
	for _, r := range recs {
		if r.m.ID == faulted {
			continue
		}
		m := got[r.m.ID]
		attempts := r.m.Attempts + 1
		var want nextup.MessageState
		switch r.outcome {
		case sendOK:
			want = nextup.MessageSent
		case sendTransient:
			want = nextup.MessageFailed
			if attempts >= relayAttempts {
				want = nextup.MessageDead
			}
		default:
			want = nextup.MessageDead
		}
		state := m.State
		if state == nextup.MessageCancelled && want != nextup.MessageSent {
			state = want
		}
		if state != want || m.Attempts != attempts || m.ClaimedUntil != nil {
			w.fail("check 9 relay: message %s (%s, attempt %d) is %s after %d attempts, lease %v; want %s after %d",
				m.ID, r.outcome, attempts, m.State, m.Attempts, m.ClaimedUntil, want, attempts)
		}
		switch want {
		case nextup.MessageSent:
			if m.ProviderID != r.provider || m.SentAt == nil || !m.SentAt.Equal(now) {
				w.fail("check 9 relay: sent message %s has provider id %q, sent at %v; want %q at %s", m.ID, m.ProviderID, m.SentAt, r.provider, fmtT(now))
			}
		case nextup.MessageFailed:
			if next := now.Add(outbox.DefaultBackoff(m.ID, attempts)); !m.NextAttemptAt.Equal(next) {
				w.fail("check 9 relay: failed message %s is next tried at %s, want %s", m.ID, m.NextAttemptAt, next)
			}
		case nextup.MessageDead:
			w.st.deadLetters++
			if r.outcome == sendTransient {
				w.st.deadAfterRetries++
			}
			if m.LastError != r.err.Error() {
				w.fail("check 9 relay: dead message %s says %q, the provider said %q", m.ID, m.LastError, r.err)
			}
		}
		if r.outcome == sendRefused {
			w.learnSuppression(r.m)
		}
	}
}

// learnSuppression: the fallback opts out an address that refused m for
// good, with an audit row on m's entry; the model learns the opt-out and
// the row's id (offers made before it in the same transaction or round
// could still use the address).
func (w *world) learnSuppression(m nextup.Message) {
	k := supKey{m.BusinessID, m.Channel, nextup.AddressKey(m.Channel, m.To)}
	if _, ok := w.m.suppress[k]; ok || m.EntryID == "" {
		return
	}
	var id int64
	for _, r := range w.auditOf(m.BusinessID, nextup.SubjectEntry, m.EntryID) {
		if r.To == string(m.Channel)+"_undeliverable" && r.Detail["address"] == m.To {
			id = r.ID
		}
	}
	if id == 0 {
		w.fail("check 9 opt-out: %s %s refused message %s for good, and entry %s has no %s_undeliverable row for it", m.Channel, m.To, m.ID, m.EntryID, m.Channel)
	}
	w.m.suppress[k] = id
	w.note("opted out %s %s", m.Channel, m.To)
}

// checkSuppressions: the store's opt-outs of every address the model
// knows are exactly the model's — those staff recorded (opSuppress) and
// those refused for good.
func (w *world) checkSuppressions() {
	for _, bid := range w.m.bizIDs {
		var keys []string
		for _, p := range w.m.biz[bid].people {
			if p.email != "" {
				keys = append(keys, nextup.AddressKey(nextup.ChannelEmail, p.email))
			}
			if p.phone != "" {
				keys = append(keys, nextup.AddressKey(nextup.ChannelSMS, p.phone))
			}
		}
		if len(keys) == 0 {
			continue
		}
		var sups []nextup.Suppression
		err := w.fs.Read(w.ctx, func(tx nextup.Tx) error {
			var err error
			sups, err = tx.SuppressionList(w.ctx, bid, keys)
			return err
		})
		if err != nil {
			w.fail("read opt-outs: %v", err)
		}
		have := map[supKey]bool{}
		for _, s := range sups {
			k := supKey{bid, s.Channel, s.Address}
			have[k] = true
			if _, ok := w.m.suppress[k]; !ok {
				w.fail("check 9 opt-out: %s %s is opted out (%s) but never refused a message for good", s.Channel, s.Address, s.Reason)
			}
		}
		for k := range w.m.suppress {
			if k.biz == bid && !have[k] {
				w.fail("check 9 opt-out: %s %s refused a message for good (or was opted out) but is not suppressed", k.channel, k.address)
			}
		}
	}
}

// permanentSMS are the carrier codes the simulation reports that say a
// number can never get a text (unknown, invalid, opted out at the
// carrier); the others may clear.
var permanentSMS = []string{"21211", "30005", "21610"}

// opSMSUndelivered: the carrier reports a text that went out as
// undelivered (or delivered, which changes nothing). The message goes
// dead and its fallback runs in the same transaction; a code that says
// the number can never get a text opts it out. Now and then the report
// comes again for a text already dead.
func (w *world) opSMSUndelivered() bool {
	var cands []nextup.Message
	again := w.chance(0.15)
	err := w.fs.Read(w.ctx, func(tx nextup.Tx) error {
		for _, bid := range w.m.bizIDs {
			st := nextup.MessageSent
			if again {
				st = nextup.MessageDead
			}
			ms, err := tx.MessageList(w.ctx, nextup.MessageFilter{BusinessID: bid, State: st})
			if err != nil {
				return err
			}
			for _, m := range ms {
				if m.Channel == nextup.ChannelSMS {
					cands = append(cands, m)
				}
			}
		}
		return nil
	})
	if err != nil {
		w.fail("read sent texts: %v", err)
	}
	if len(cands) == 0 {
		return false
	}
	slices.SortFunc(cands, func(a, b nextup.Message) int { return strings.Compare(a.ID, b.ID) })
	m := pick(w, cands)
	if w.chance(0.05) {
		// A report for a message nextup never sent (a forged or stale
		// callback): refused, nothing changes.
		id := m.ID + "x"
		err := w.invoke(func() error { return w.svc.SMSDelivery(w.ctx, id, "undelivered", "30003") })
		w.note("unknown message %s", id)
		w.outcome("sms delivery report", err, nextup.CodeNotFound)
		return true
	}
	status := pick(w, []string{"undelivered", "undelivered", "failed", "delivered"})
	code := pick(w, []string{"", "30003", "30008", "21211", "30005", "21610"})
	if status == "delivered" {
		w.unchanged = true
	}
	err = w.invoke(func() error { return w.svc.SMSDelivery(w.ctx, m.ID, status, code) })
	w.note("%s (%s %s, %s) %s code=%q", m.ID, m.Kind, m.To, m.State, status, code)
	if !w.outcome("sms delivery report", err) {
		return true
	}
	w.st.smsReports++
	var after nextup.Message
	err = w.fs.Read(w.ctx, func(tx nextup.Tx) error {
		var err error
		after, err = tx.MessageGet(w.ctx, m.ID)
		return err
	})
	if err != nil {
		w.fail("read message %s: %v", m.ID, err)
	}
	if status == "delivered" {
		if !after.NextAttemptAt.Equal(m.NextAttemptAt) || after.State != m.State || after.LastError != m.LastError {
			w.fail("check 9 relay: a delivered report changed message %s: %s", m.ID, js(after))
		}
		return true
	}
	reason := status
	if code != "" {
		reason += " (carrier error " + code + ")"
	}
	if after.State != nextup.MessageDead || (m.State == nextup.MessageSent && after.LastError != reason) {
		w.fail("check 9 relay: text %s reported %s is %s (%q), want dead (%q)", m.ID, status, after.State, after.LastError, reason)
	}
	if slices.Contains(permanentSMS, code) {
		w.learnSuppression(m)
	}
	w.checkSuppressions()
	return true
}

// ---------------------------------------------------------------- check 9

// checkDeadLetters is check 9 after every step: each dead message of a
// person's offer whose offer is live has, in the same committed state, its
// fallback (the same claim link on the other channel, id <id>_fb), or the
// other channel has the offer already, or an audit row fallback_skipped
// says a passing failure found no other channel; an offer whose message
// was refused for good with no other channel left ended (no_channel, seen
// by checkNoChannel when it ends). A dead confirmation or reminder of a
// booking still booked has its fallback when the other channel is open and
// the slot far enough away. Handled dead letters are remembered: a
// fallback, a row or an end never goes away.
func (w *world) checkDeadLetters(cur *snapshot) {
	for _, bid := range w.m.bizIDs {
		var dead []nextup.Message
		err := w.fs.Read(w.ctx, func(tx nextup.Tx) error {
			var err error
			dead, err = tx.MessageList(w.ctx, nextup.MessageFilter{BusinessID: bid, State: nextup.MessageDead})
			return err
		})
		if err != nil {
			w.fail("read dead messages: %v", err)
		}
		for _, m := range dead {
			if _, ok := w.deadSince[m.ID]; !ok {
				w.deadSince[m.ID] = w.step
			}
		}
		for i := len(dead) - 1; i >= 0; i-- { // oldest first
			m := dead[i]
			if w.deadOK[m.ID] {
				continue
			}
			if w.deadLetterHandled(m, cur) {
				w.deadOK[m.ID] = true
			}
		}
	}
}

// fallbackOf reads the fallback of message id, if any.
func (w *world) fallbackOf(id string) (nextup.Message, bool) {
	var fb nextup.Message
	err := w.fs.Read(w.ctx, func(tx nextup.Tx) error {
		var err error
		fb, err = tx.MessageGet(w.ctx, id+"_fb")
		return err
	})
	if errors.Is(err, nextup.ErrNotFound) {
		return fb, false
	}
	if err != nil {
		w.fail("read the fallback of %s: %v", id, err)
	}
	return fb, true
}

func otherChannel(ch nextup.Channel) nextup.Channel {
	if ch == nextup.ChannelSMS {
		return nextup.ChannelEmail
	}
	return nextup.ChannelSMS
}

func (e *mEntry) address(ch nextup.Channel) string {
	if ch == nextup.ChannelSMS {
		return e.phone
	}
	return e.email
}

// deadLetterHandled reports whether dead message m is settled for good;
// false when it may not be yet (its offer's expiry is due and a faulted
// sweep has not fired it). It fails the run when m went unhandled.
func (w *world) deadLetterHandled(m nextup.Message, cur *snapshot) bool {
	me := w.m.entries[m.EntryID]
	if me == nil {
		w.fail("check 9 dead letter: dead message %s (%s) is for unknown entry %q", m.ID, m.Kind, m.EntryID)
	}
	other := otherChannel(m.Channel)
	otherOpen := me.address(other) != "" && !w.m.suppressed(me.biz, other, me.address(other), 0)
	fb, hasFB := w.fallbackOf(m.ID)
	if hasFB {
		w.checkFallback(m, fb)
	}
	switch m.Kind {
	case nextup.MessageOffer, waitlist.MessageEscalation, waitlist.MessageFallback:
		if m.BookingID != "" {
			return true // a booking's fallback, dead too: it does not fall back again
		}
		o, ok := cur.offers[m.OfferID]
		if !ok {
			w.fail("check 9 dead letter: dead message %s is for unknown offer %q", m.ID, m.OfferID)
		}
		if hasFB {
			w.st.offerFallbacks++
			return true
		}
		if !o.State.Live() {
			return true // ended before the message died, or by its dead letter (checkNoChannel)
		}
		if o.State == nextup.OfferPending {
			w.fail("check 9 dead letter: held-back offer %s has a dead message %s", o.ID, m.ID)
		}
		if !cur.now.Before(o.ExpiresAt) {
			return false // the expiry is due (a faulted sweep left it): the fallback sends nothing for an offer past its deadline
		}
		if m.Kind != waitlist.MessageFallback {
			for _, x := range w.messagesOf(m.BusinessID, o.ID) {
				// It had one that was not dead when m died: x is alive, or
				// died in this step or later than m.
				alive := x.State != nextup.MessageDead || w.deadSince[x.ID] >= w.deadSince[m.ID]
				if x.Channel == other && x.ID != m.ID && x.State != nextup.MessageCancelled && alive {
					w.st.fallbackCovered++
					return true // the other channel has the offer already (its follow-up, say)
				}
			}
		}
		for _, r := range w.auditOf(m.BusinessID, nextup.SubjectOffer, o.ID) {
			if r.Reason == "fallback_skipped:no_other_channel" && r.Detail["message_id"] == m.ID {
				if m.Kind != waitlist.MessageFallback && otherOpen {
					w.fail("check 9 dead letter: offer %s skipped the fallback of %s for want of another channel, but %s %s is open",
						o.ID, m.ID, other, me.address(other))
				}
				w.st.fallbackSkipped++
				return true
			}
		}
		w.fail("check 9 dead letter: message %s (%s, %s %s) of live offer %s is dead with no fallback, no fallback_skipped row, and the offer did not end: %s",
			m.ID, m.Kind, m.Channel, m.To, o.ID, m.LastError)
	case nextup.MessageConfirmation, waitlist.MessageReminder:
		if hasFB {
			w.st.bookingFallbacks++
			return true
		}
		b, ok := cur.bookings[m.BookingID]
		if !ok || m.BookingID == "" {
			return true
		}
		sl := cur.slots[b.SlotID]
		if b.State == nextup.BookingBooked && otherOpen && sl.StartsAt.Sub(cur.now) > 24*time.Hour {
			w.fail("check 9 dead letter: %s %s of booking %s (slot %s at %s) is dead and has no fallback on open %s %s",
				m.Kind, m.ID, b.ID, sl.ID, fmtT(sl.StartsAt), other, me.address(other))
		}
	}
	return true
}

// checkFallback: the fallback of dead message x is on the other channel,
// to the entry's address there, with x's offer, booking and claim link,
// and x itself does not fall back twice (a fallback never falls back).
func (w *world) checkFallback(x, fb nextup.Message) {
	me := w.m.entries[x.EntryID]
	other := otherChannel(x.Channel)
	if x.State != nextup.MessageDead || fb.Kind != waitlist.MessageFallback || fb.Channel != other || fb.To != me.address(other) ||
		fb.OfferID != x.OfferID || fb.BookingID != x.BookingID || fb.EntryID != x.EntryID || fb.BusinessID != x.BusinessID ||
		(x.BookingID == "" && fb.ClaimURL != x.ClaimURL) {
		w.fail("check 9 fallback: %s is not the fallback of %s:\n\t%s\n\t%s", fb.ID, x.ID, js(x), js(fb))
	}
	if strings.HasSuffix(x.ID, "_fb") {
		w.fail("check 9 fallback: fallback %s fell back again (%s)", x.ID, fb.ID)
	}
}

// checkFallbacks is check 9 over the whole outbox: every fallback is the
// one fallback of a dead message (id <id>_fb) and fits it.
func (w *world) checkFallbacks(msgs []nextup.Message) {
	byID := map[string]nextup.Message{}
	for _, m := range msgs {
		byID[m.ID] = m
	}
	for _, m := range msgs {
		isFB := m.Kind == waitlist.MessageFallback
		if isFB != strings.HasSuffix(m.ID, "_fb") {
			w.fail("check 9 fallback (whole outbox): message %s is of kind %s", m.ID, m.Kind)
		}
		if !isFB {
			continue
		}
		x, ok := byID[strings.TrimSuffix(m.ID, "_fb")]
		if !ok {
			w.fail("check 9 fallback (whole outbox): %s is the fallback of no message", m.ID)
		}
		w.checkFallback(x, m)
	}
}

// checkNoChannel: an offer ended no_channel because a message of it was
// refused for good (its address now opted out) and the person had no
// other channel (or the message was already the fallback); the slot then
// rolled on (check 7 and check 4 see to the rest).
func (w *world) checkNoChannel(o nextup.Offer) {
	me := w.m.entries[o.EntryID]
	for _, m := range w.messagesOf(o.BusinessID, o.ID) {
		if m.State != nextup.MessageDead || !w.m.suppressed(o.BusinessID, m.Channel, m.To, 0) {
			continue
		}
		other := otherChannel(m.Channel)
		if m.Kind == waitlist.MessageFallback || me.address(other) == "" || w.m.suppressed(o.BusinessID, other, me.address(other), 0) {
			w.st.noChannel++
			return
		}
	}
	w.fail("check 9 no_channel: offer %s ended no_channel, but no message of it was refused for good with no other channel left", o.ID)
}
