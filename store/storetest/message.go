package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

func messageID(m nextup.Message) string { return m.ID }

// message returns a queued offer email with sensible defaults; create it
// with b.messages.
func (b *bundle) message(businessID string, mods ...func(*nextup.Message)) nextup.Message {
	id := b.id("msg")
	m := nextup.Message{
		ID:         id,
		BusinessID: businessID,
		Kind:       nextup.MessageOffer,
		Channel:    nextup.ChannelEmail,
		To:         id + "@example.com",
		Subject:    "A place is free",
		Body:       "Claim it: https://example.test/c/" + id,
		State:      nextup.MessageQueued,
		CreatedAt:  b.now,
	}
	for _, mod := range mods {
		mod(&m)
	}
	return m
}

func (b *bundle) messages(ms ...nextup.Message) {
	b.t.Helper()
	b.tx(func(tx nextup.Tx) error {
		for _, m := range ms {
			if err := tx.MessageCreate(b.ctx, m); err != nil {
				return fmt.Errorf("MessageCreate(%s): %w", m.ID, err)
			}
		}
		return nil
	})
}

// claimMessages runs MessageClaimDue in its own transaction.
func (b *bundle) claimMessages(now time.Time, lease time.Duration, limit int) []nextup.Message {
	b.t.Helper()
	var got []nextup.Message
	b.tx(func(tx nextup.Tx) error {
		var err error
		got, err = tx.MessageClaimDue(b.ctx, now, lease, limit)
		return err
	})
	return got
}

func sortedIDs[T any](rows []T, id func(T) string) []string {
	out := ids(rows, id)
	slices.Sort(out)
	return out
}

func testMessageRoundTrip(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID, shared(4))
	e := b.entry(biz.ID)
	o, _ := b.offer(s, e)
	bk := nextup.Booking{ID: "bkg_1", BusinessID: biz.ID, SlotID: s.ID, EntryID: e.ID, OfferID: o.ID, Name: e.Name, Seats: 1,
		State: nextup.BookingBooked, TokenHash: nextup.HashToken("cal"), CreatedAt: b.now}
	b.tx(func(tx nextup.Tx) error { return tx.BookingCreate(b.ctx, bk) })
	ms := []nextup.Message{
		b.message(biz.ID, func(m *nextup.Message) {
			m.Channel, m.To, m.Subject = nextup.ChannelSMS, "+447700900123", ""
			m.Body = "Ünïcødé body\nline two — \"quoted\""
			m.ClaimURL = "https://example.test/c/abc?x=1&y=2"
			m.OfferID, m.EntryID = o.ID, e.ID
			m.State, m.Attempts, m.LastError = nextup.MessageFailed, 2, "provider: 503"
			m.NotBefore = b.at(-time.Hour)
			m.NextAttemptAt = b.at(90 * time.Second)
			m.CreatedAt = b.at(-2 * time.Hour)
		}),
		b.message(biz.ID, func(m *nextup.Message) {
			m.Kind, m.Channel = nextup.MessageConfirmation, nextup.ChannelWebhook
			m.EntryID, m.BookingID = e.ID, bk.ID
			m.State, m.Attempts = nextup.MessageSent, 1
			m.SentAt = ptr(b.at(time.Second))
			m.ProviderID = "prov-123"
			m.HTML = "<p>Booked: <b>Cut &amp; colour</b></p>"
			m.Calendar = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n"
			m.UnsubscribeURL = "https://example.test/u/tok"
			m.TemplateVersion = 3
		}),
		b.message(biz.ID, func(m *nextup.Message) { m.Kind, m.Channel = nextup.MessageCancellation, nextup.ChannelCapture }),
	}
	b.messages(ms...)
	b.read(func(tx nextup.Tx) error {
		for _, want := range ms {
			got, err := tx.MessageGet(b.ctx, want.ID)
			if wantOK(t, err, "MessageGet(%s)", want.ID) {
				checkEqual(t, "MessageGet "+want.ID, want, got)
			}
		}
		return nil
	})
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.MessageGet(b.ctx, "msg_missing")
		wantErr(t, err, nextup.ErrNotFound, "MessageGet(missing)")
		_, err = tx.MessageRequeue(b.ctx, "msg_missing", b.now)
		wantErr(t, err, nextup.ErrNotFound, "MessageRequeue(missing)")
		err = tx.MessageFinish(b.ctx, "msg_missing", b.at(time.Minute), nextup.MessageResult{State: nextup.MessageSent, At: b.now})
		if !errors.Is(err, nextup.ErrNotFound) && !errors.Is(err, nextup.ErrConflict) {
			t.Errorf("MessageFinish(missing): got %v, want ErrNotFound or ErrConflict", err)
		}
		return nil
	})
}

func testMessageList(t *testing.T, b *bundle) {
	a, other := b.business(), b.business()
	s := b.slot(a.ID, shared(4))
	o, _ := b.offer(s, b.entry(a.ID))
	var ms []nextup.Message
	for i := range 6 {
		ms = append(ms, b.message(a.ID, func(m *nextup.Message) {
			m.CreatedAt = b.at(time.Duration(i) * time.Minute)
			m.To = []string{"ann@example.com", "bob@example.com"}[i%2]
			if i%3 == 0 {
				m.OfferID = o.ID
			}
			if i >= 4 {
				m.State, m.SentAt = nextup.MessageSent, ptr(b.now)
			}
		}))
	}
	ms = append(ms, b.message(other.ID, func(m *nextup.Message) { m.To = "ann@example.com" }))
	b.messages(ms...)
	cases := []struct {
		name string
		f    nextup.MessageFilter
		want []int // newest first
	}{
		{"business", nextup.MessageFilter{BusinessID: a.ID}, []int{5, 4, 3, 2, 1, 0}},
		{"to ann", nextup.MessageFilter{BusinessID: a.ID, To: "ann@example.com"}, []int{4, 2, 0}},
		{"queued", nextup.MessageFilter{BusinessID: a.ID, State: nextup.MessageQueued}, []int{3, 2, 1, 0}},
		{"sent to bob", nextup.MessageFilter{BusinessID: a.ID, State: nextup.MessageSent, To: "bob@example.com"}, []int{5}},
		{"offer", nextup.MessageFilter{BusinessID: a.ID, OfferID: o.ID}, []int{3, 0}},
		{"limit 2", nextup.MessageFilter{BusinessID: a.ID, Limit: 2}, []int{5, 4}},
		{"other business", nextup.MessageFilter{BusinessID: other.ID}, []int{6}},
		{"dead", nextup.MessageFilter{BusinessID: a.ID, State: nextup.MessageDead}, nil},
		{"minutes 1 to 4", nextup.MessageFilter{BusinessID: a.ID, Since: b.at(time.Minute), Until: b.at(4 * time.Minute)}, []int{3, 2, 1}},
		{"since minute 4", nextup.MessageFilter{BusinessID: a.ID, Since: b.at(4 * time.Minute)}, []int{5, 4}},
		{"to ann until minute 4", nextup.MessageFilter{BusinessID: a.ID, To: "ann@example.com", Until: b.at(4 * time.Minute)}, []int{2, 0}},
		{"sent since minute 5", nextup.MessageFilter{BusinessID: a.ID, State: nextup.MessageSent, Since: b.at(5 * time.Minute)}, []int{5}},
		{"empty range", nextup.MessageFilter{BusinessID: a.ID, Since: b.at(2 * time.Minute), Until: b.at(2 * time.Minute)}, nil},
	}
	b.read(func(tx nextup.Tx) error {
		for _, c := range cases {
			got, err := tx.MessageList(b.ctx, c.f)
			if !wantOK(t, err, "MessageList(%s)", c.name) {
				continue
			}
			var want []nextup.Message
			for _, i := range c.want {
				want = append(want, ms[i])
			}
			if gotIDs, wantIDs := ids(got, messageID), ids(want, messageID); !sameStrings(gotIDs, wantIDs) {
				t.Errorf("MessageList(%s): got %v, want %v (newest first)", c.name, gotIDs, wantIDs)
			} else {
				checkEqual(t, "MessageList("+c.name+")", want, got)
			}
		}
		return nil
	})
}

func testMessageClaimDue(t *testing.T, b *bundle) {
	biz, other := b.business(), b.business()
	at := func(d time.Duration) func(*nextup.Message) {
		return func(m *nextup.Message) { m.CreatedAt = b.at(-time.Hour + d) }
	}
	due := []nextup.Message{
		b.message(biz.ID, at(1)),
		b.message(biz.ID, at(2), func(m *nextup.Message) { m.NotBefore = b.at(-time.Minute) }),
		b.message(biz.ID, at(3), func(m *nextup.Message) { m.NotBefore = b.now }),
		b.message(biz.ID, at(4), func(m *nextup.Message) {
			m.State, m.Attempts, m.NextAttemptAt = nextup.MessageFailed, 1, b.at(-time.Second)
		}),
		b.message(other.ID, at(5)),
	}
	retryLater := b.message(biz.ID, at(6), func(m *nextup.Message) {
		m.State, m.Attempts, m.NextAttemptAt = nextup.MessageFailed, 1, b.at(5*time.Minute)
	})
	notYet := b.message(biz.ID, at(7), func(m *nextup.Message) { m.NotBefore = b.at(time.Hour) })
	done := []nextup.Message{
		b.message(biz.ID, at(8), func(m *nextup.Message) { m.State, m.SentAt = nextup.MessageSent, ptr(b.now) }),
		b.message(biz.ID, at(9), func(m *nextup.Message) { m.State, m.Attempts = nextup.MessageDead, 5 }),
		b.message(biz.ID, at(10), func(m *nextup.Message) { m.State = nextup.MessageCancelled }),
	}
	b.messages(append(append(due, retryLater, notYet), done...)...)

	lease := time.Minute
	got := b.claimMessages(b.now, lease, 20)
	if gotIDs, wantIDs := sortedIDs(got, messageID), sortedIDs(due, messageID); !sameStrings(gotIDs, wantIDs) {
		t.Fatalf("MessageClaimDue(now): got %v, want %v (queued or failed, NotBefore and NextAttemptAt <= now)", gotIDs, wantIDs)
	}
	until := b.now.Add(lease)
	for _, m := range got {
		if m.ClaimedUntil == nil || !m.ClaimedUntil.Equal(until) {
			t.Errorf("claimed message %s: ClaimedUntil %s, want now+lease %s", m.ID, fmtTimePtr(m.ClaimedUntil), until.Format(time.RFC3339Nano))
		}
		stored := b.getMessage(m.ID)
		checkEqual(t, "claimed message as returned vs as stored", stored, m)
	}
	if again := b.claimMessages(b.at(30*time.Second), lease, 20); len(again) != 0 {
		t.Errorf("MessageClaimDue while the leases hold: got %v, want none", ids(again, messageID))
	}
	// The leases lapse (the relay died): the messages are due again.
	later := until.Add(time.Microsecond)
	got = b.claimMessages(later, lease, 20)
	if gotIDs, wantIDs := sortedIDs(got, messageID), sortedIDs(due, messageID); !sameStrings(gotIDs, wantIDs) {
		t.Errorf("MessageClaimDue after the leases lapsed: got %v, want %v", gotIDs, wantIDs)
	}
	// Limit: two batches, no message in both.
	ten := b.at(10 * time.Minute)
	first := b.claimMessages(ten, lease, 2)
	second := b.claimMessages(ten, lease, 20)
	all := append(append([]nextup.Message{}, first...), second...)
	want := append(append([]nextup.Message{}, due...), retryLater)
	if len(first) != 2 {
		t.Errorf("MessageClaimDue(limit 2) returned %d messages", len(first))
	}
	if gotIDs, wantIDs := sortedIDs(all, messageID), sortedIDs(want, messageID); !sameStrings(gotIDs, wantIDs) {
		t.Errorf("MessageClaimDue(limit 2) then (limit 20): got %v, want %v once each", gotIDs, wantIDs)
	}
}

// claimMessage runs MessageClaim in its own transaction.
func (b *bundle) claimMessage(id string, now time.Time, lease time.Duration) (nextup.Message, error) {
	var m nextup.Message
	err := b.s.InTx(b.ctx, func(tx nextup.Tx) error {
		var err error
		m, err = tx.MessageClaim(b.ctx, id, now, lease)
		return err
	})
	return m, err
}

func testMessageClaim(t *testing.T, b *bundle) {
	biz := b.business()
	queued := b.message(biz.ID)
	retry := b.message(biz.ID, func(m *nextup.Message) {
		m.State, m.Attempts, m.LastError, m.NextAttemptAt = nextup.MessageFailed, 2, "timeout", b.at(-time.Second)
	})
	b.messages(queued, retry)
	lease := time.Minute
	until := b.now.Add(lease)
	for _, want := range []nextup.Message{queued, retry} {
		got, err := b.claimMessage(want.ID, b.now, lease)
		if !wantOK(t, err, "MessageClaim(%s %s)", want.State, want.ID) {
			continue
		}
		want.ClaimedUntil = &until // and nothing else: a claim counts no attempt
		checkEqual(t, "MessageClaim("+string(want.State)+") as returned", want, got)
		checkEqual(t, "MessageClaim("+string(want.State)+") as stored", want, b.getMessage(want.ID))
	}
	if c := b.claimMessages(b.at(30*time.Second), lease, 10); len(c) != 0 {
		t.Errorf("MessageClaimDue while MessageClaim's leases hold: got %v, want none", ids(c, messageID))
	}
	before := b.getMessage(queued.ID)
	_, err := b.claimMessage(queued.ID, b.at(30*time.Second), lease)
	if wantErr(t, err, nextup.ErrConflict, "MessageClaim of a leased message") && !strings.Contains(err.Error(), "leased") {
		t.Errorf("MessageClaim of a leased message: %q does not say it is leased", err)
	}
	checkEqual(t, "message after a refused claim", before, b.getMessage(queued.ID))

	// The lease lapses (the sender died): the message may be claimed
	// again, and only the new lease finishes it.
	got, err := b.claimMessage(queued.ID, until, lease)
	if !wantOK(t, err, "MessageClaim when the lease lapsed") {
		return
	}
	if until2 := until.Add(lease); got.ClaimedUntil == nil || !got.ClaimedUntil.Equal(until2) {
		t.Errorf("claimed again: ClaimedUntil %s, want %s", fmtTimePtr(got.ClaimedUntil), until2.Format(time.RFC3339Nano))
	}
	finish := func(claimedUntil time.Time) error {
		return b.s.InTx(b.ctx, func(tx nextup.Tx) error {
			return tx.MessageFinish(b.ctx, queued.ID, claimedUntil, nextup.MessageResult{State: nextup.MessageSent, At: until})
		})
	}
	wantErr(t, finish(until), nextup.ErrConflict, "MessageFinish under the lapsed lease")
	wantOK(t, finish(*got.ClaimedUntil), "MessageFinish under the lease of the second claim")
	if got := b.getMessage(queued.ID); got.State != nextup.MessageSent || got.Attempts != 1 {
		t.Errorf("after two claims and one send: %s after %d attempts, want sent after 1", got.State, got.Attempts)
	}
	_, err = b.claimMessage(queued.ID, b.at(time.Hour), lease)
	wantErr(t, err, nextup.ErrConflict, "MessageClaim of the message once sent")
}

// testMessageClaimRefused: what MessageClaimDue would not lease,
// MessageClaim refuses, saying why, and changes nothing; the refusals
// leave the transaction usable.
func testMessageClaimRefused(t *testing.T, b *bundle) {
	biz := b.business()
	cases := []struct {
		m   nextup.Message
		why string    // in the error's text
		due time.Time // when it may be claimed after all (zero: never)
	}{
		{b.message(biz.ID, func(m *nextup.Message) { m.State, m.Attempts, m.SentAt = nextup.MessageSent, 1, ptr(b.now) }), "sent", time.Time{}},
		{b.message(biz.ID, func(m *nextup.Message) { m.State, m.Attempts = nextup.MessageDead, 8 }), "dead", time.Time{}},
		{b.message(biz.ID, func(m *nextup.Message) { m.State = nextup.MessageCancelled }), "cancelled", time.Time{}},
		{b.message(biz.ID, func(m *nextup.Message) { m.NotBefore = b.at(time.Microsecond) }), "due", b.at(time.Microsecond)},
		{b.message(biz.ID, func(m *nextup.Message) {
			m.State, m.Attempts, m.NextAttemptAt = nextup.MessageFailed, 1, b.at(time.Minute)
		}), "due", b.at(time.Minute)},
		{b.message(biz.ID, func(m *nextup.Message) { m.ClaimedUntil = ptr(b.at(time.Second)) }), "leased", b.at(time.Second)},
	}
	due := b.message(biz.ID)
	for _, c := range cases {
		b.messages(c.m)
	}
	b.messages(due)
	b.tx(func(tx nextup.Tx) error {
		for _, c := range cases {
			_, err := tx.MessageClaim(b.ctx, c.m.ID, b.now, time.Minute)
			if wantErr(t, err, nextup.ErrConflict, "MessageClaim(%s)", c.m.ID) && !strings.Contains(err.Error(), c.why) {
				t.Errorf("MessageClaim(%s): %q does not say %q", c.m.ID, err, c.why)
			}
		}
		_, err := tx.MessageClaim(b.ctx, "msg_missing", b.now, time.Minute)
		wantErr(t, err, nextup.ErrNotFound, "MessageClaim(missing)")
		_, err = tx.MessageClaim(b.ctx, due.ID, b.now, time.Minute)
		wantOK(t, err, "MessageClaim(due) after refused claims in the same transaction")
		return nil
	})
	for _, c := range cases {
		checkEqual(t, "message after a refused claim", c.m, b.getMessage(c.m.ID))
	}
	if got := b.getMessage(due.ID); got.ClaimedUntil == nil {
		t.Errorf("the claim after refused ones in one transaction did not commit")
	}
	// Due once NotBefore, NextAttemptAt and the lease are past: exactly
	// when MessageClaimDue would lease them.
	for _, c := range cases {
		if c.due.IsZero() {
			continue
		}
		_, err := b.claimMessage(c.m.ID, c.due.Add(-time.Microsecond), time.Minute)
		wantErr(t, err, nextup.ErrConflict, "MessageClaim(%s) a microsecond before it is due", c.m.ID)
		_, err = b.claimMessage(c.m.ID, c.due, time.Minute)
		wantOK(t, err, "MessageClaim(%s) when it is due", c.m.ID)
	}
}

func testMessageFinish(t *testing.T, b *bundle) {
	biz := b.business()
	sent := b.message(biz.ID)
	retried := b.message(biz.ID)
	stale := b.message(biz.ID)
	b.messages(sent, retried, stale)
	lease := time.Minute
	claimed := b.claimMessages(b.now, lease, 10)
	if len(claimed) != 3 {
		t.Fatalf("MessageClaimDue: %d messages, want 3", len(claimed))
	}
	cu := b.now.Add(lease)
	finish := func(id string, claimedUntil time.Time, r nextup.MessageResult) error {
		return b.s.InTx(b.ctx, func(tx nextup.Tx) error { return tx.MessageFinish(b.ctx, id, claimedUntil, r) })
	}

	// Sent.
	wantOK(t, finish(sent.ID, cu, nextup.MessageResult{State: nextup.MessageSent, At: b.at(time.Second), ProviderID: "p-1"}), "MessageFinish(sent)")
	got := b.getMessage(sent.ID)
	if got.State != nextup.MessageSent || got.SentAt == nil || !got.SentAt.Equal(b.at(time.Second)) || got.ProviderID != "p-1" || got.Attempts != 1 {
		t.Errorf("after MessageFinish(sent): state=%s sentAt=%s provider=%q attempts=%d; want sent, now+1s, p-1, 1",
			got.State, fmtTimePtr(got.SentAt), got.ProviderID, got.Attempts)
	}

	// Failed, retried later, then dead.
	next := b.at(5 * time.Minute)
	wantOK(t, finish(retried.ID, cu, nextup.MessageResult{State: nextup.MessageFailed, At: b.at(time.Second), NextAttemptAt: next, Error: "timeout"}), "MessageFinish(failed)")
	got = b.getMessage(retried.ID)
	if got.State != nextup.MessageFailed || !got.NextAttemptAt.Equal(next) || got.LastError != "timeout" || got.Attempts != 1 {
		t.Errorf("after MessageFinish(failed): state=%s nextAttemptAt=%s lastError=%q attempts=%d; want failed, now+5m, timeout, 1",
			got.State, got.NextAttemptAt.Format(time.RFC3339Nano), got.LastError, got.Attempts)
	}
	if c := b.claimMessages(b.at(2*time.Minute), lease, 10); slices.ContainsFunc(c, func(m nextup.Message) bool { return m.ID == retried.ID }) {
		t.Errorf("a failed message was claimed before its NextAttemptAt")
	}
	// (stale's lease lapsed at now+1m; it was claimed again just now.)
	c := b.claimMessages(next, lease, 10)
	var cu2 time.Time
	for _, m := range c {
		if m.ID == retried.ID {
			cu2 = *m.ClaimedUntil
		}
	}
	if cu2.IsZero() {
		t.Fatalf("a failed message was not claimed at its NextAttemptAt; claimed %v", ids(c, messageID))
	}
	before := b.getMessage(retried.ID)
	wantErr(t, finish(retried.ID, cu, nextup.MessageResult{State: nextup.MessageSent, At: next}), nextup.ErrConflict,
		"MessageFinish under a lease that was superseded")
	checkEqual(t, "message after a refused MessageFinish", before, b.getMessage(retried.ID))
	wantOK(t, finish(retried.ID, cu2, nextup.MessageResult{State: nextup.MessageDead, At: next.Add(time.Second), Error: "bounced"}), "MessageFinish(dead)")
	got = b.getMessage(retried.ID)
	if got.State != nextup.MessageDead || got.LastError != "bounced" || got.Attempts != 2 {
		t.Errorf("after MessageFinish(dead): state=%s lastError=%q attempts=%d; want dead, bounced, 2", got.State, got.LastError, got.Attempts)
	}
	if c := b.claimMessages(b.at(24*time.Hour), lease, 10); slices.ContainsFunc(c, func(m nextup.Message) bool { return m.ID != stale.ID }) {
		t.Errorf("sent or dead messages were claimed again: %v", ids(c, messageID))
	}

	// stale: its lease lapsed and it was claimed again several times; only
	// the latest lease finishes it.
	before = b.getMessage(stale.ID)
	if before.ClaimedUntil == nil {
		t.Fatalf("message %s was claimed but has no ClaimedUntil", stale.ID)
	}
	wantErr(t, finish(stale.ID, cu, nextup.MessageResult{State: nextup.MessageSent, At: b.now}), nextup.ErrConflict,
		"MessageFinish under the first of three leases")
	checkEqual(t, "message after a refused MessageFinish", before, b.getMessage(stale.ID))
	wantOK(t, finish(stale.ID, *before.ClaimedUntil, nextup.MessageResult{State: nextup.MessageSent, At: b.now, ProviderID: "p-3"}),
		"MessageFinish under the latest lease")
	if got := b.getMessage(stale.ID); got.State != nextup.MessageSent {
		t.Errorf("message %s: state %s, want sent", stale.ID, got.State)
	}
}

func testMessageRequeue(t *testing.T, b *bundle) {
	biz := b.business()
	dead := b.message(biz.ID, func(m *nextup.Message) {
		m.State, m.Attempts, m.LastError, m.NextAttemptAt = nextup.MessageDead, 5, "bounced", b.at(-time.Hour)
	})
	queued := b.message(biz.ID, func(m *nextup.Message) { m.NotBefore = b.at(time.Hour) })
	sent := b.message(biz.ID, func(m *nextup.Message) { m.State, m.SentAt = nextup.MessageSent, ptr(b.now) })
	b.messages(dead, queued, sent)
	now := b.at(time.Minute)
	b.tx(func(tx nextup.Tx) error {
		got, err := tx.MessageRequeue(b.ctx, dead.ID, now)
		if wantOK(t, err, "MessageRequeue(dead)") && got.State != nextup.MessageQueued {
			t.Errorf("MessageRequeue returned state %s, want queued", got.State)
		}
		for _, m := range []nextup.Message{queued, sent} {
			_, err := tx.MessageRequeue(b.ctx, m.ID, now)
			wantErr(t, err, nextup.ErrConflict, "MessageRequeue of a %s message", m.State)
		}
		return nil
	})
	checkEqual(t, "queued message after a refused requeue", queued, b.getMessage(queued.ID))
	checkEqual(t, "sent message after a refused requeue", sent, b.getMessage(sent.ID))
	got := b.claimMessages(now, time.Minute, 10)
	if gotIDs := ids(got, messageID); !sameStrings(gotIDs, []string{dead.ID}) {
		t.Errorf("MessageClaimDue after requeue: got %v, want [%s]", gotIDs, dead.ID)
	}
}

func testMessageUndelivered(t *testing.T, b *bundle) {
	biz := b.business()
	sent := b.message(biz.ID, func(m *nextup.Message) { m.State, m.SentAt = nextup.MessageSent, ptr(b.now) })
	queued := b.message(biz.ID)
	b.messages(sent, queued)
	b.tx(func(tx nextup.Tx) error {
		got, err := tx.MessageUndelivered(b.ctx, sent.ID, "undelivered: 30003 unreachable handset")
		if wantOK(t, err, "MessageUndelivered(sent)") && (got.State != nextup.MessageDead || got.LastError != "undelivered: 30003 unreachable handset") {
			t.Errorf("MessageUndelivered returned %s %q", got.State, got.LastError)
		}
		_, err = tx.MessageUndelivered(b.ctx, queued.ID, "late report")
		wantErr(t, err, nextup.ErrConflict, "MessageUndelivered of a queued message")
		_, err = tx.MessageUndelivered(b.ctx, sent.ID, "again")
		wantErr(t, err, nextup.ErrConflict, "MessageUndelivered of a dead message")
		_, err = tx.MessageUndelivered(b.ctx, "msg_missing", "x")
		wantErr(t, err, nextup.ErrNotFound, "MessageUndelivered of a missing message")
		return nil
	})
	checkEqual(t, "queued message after a refused report", queued, b.getMessage(queued.ID))
	// Dead after all: staff can requeue it.
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.MessageRequeue(b.ctx, sent.ID, b.at(time.Minute))
		wantOK(t, err, "MessageRequeue of an undelivered message")
		return nil
	})
}

func testMessageCancelByOffer(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID, shared(4))
	o1, _ := b.offer(s, b.entry(biz.ID), func(o *nextup.Offer) { o.State, o.SentAt = nextup.OfferPending, nil })
	o2, _ := b.offer(s, b.entry(biz.ID), func(o *nextup.Offer) { o.State, o.SentAt = nextup.OfferPending, nil })
	q1 := b.message(biz.ID, func(m *nextup.Message) { m.OfferID, m.NotBefore = o1.ID, b.at(time.Hour) })
	s1 := b.message(biz.ID, func(m *nextup.Message) { m.OfferID, m.State, m.SentAt = o1.ID, nextup.MessageSent, ptr(b.now) })
	q2 := b.message(biz.ID, func(m *nextup.Message) { m.OfferID, m.NotBefore = o2.ID, b.at(time.Hour) })
	b.messages(q1, s1, q2)
	b.tx(func(tx nextup.Tx) error { return tx.MessageCancelByOffer(b.ctx, o1.ID) })
	b.tx(func(tx nextup.Tx) error { return tx.MessageCancelByOffer(b.ctx, "off_without_messages") })
	if got := b.getMessage(q1.ID); got.State != nextup.MessageCancelled {
		t.Errorf("queued message of the offer: state %s, want cancelled", got.State)
	}
	checkEqual(t, "sent message of the offer (untouched)", s1, b.getMessage(s1.ID))
	checkEqual(t, "queued message of another offer (untouched)", q2, b.getMessage(q2.ID))
	got := b.claimMessages(b.at(2*time.Hour), time.Minute, 10)
	if gotIDs := ids(got, messageID); !sameStrings(gotIDs, []string{q2.ID}) {
		t.Errorf("MessageClaimDue after cancelling: got %v, want [%s]", gotIDs, q2.ID)
	}
}

func testMessageCounts(t *testing.T, b *bundle) {
	a, other := b.business(), b.business()
	type counts = map[nextup.Channel]map[nextup.MessageState]int
	var ms []nextup.Message
	for i := range 5 {
		ms = append(ms, b.message(a.ID, func(m *nextup.Message) {
			if i >= 3 {
				m.State, m.SentAt = nextup.MessageSent, ptr(b.now)
			}
		}))
	}
	ms = append(ms, b.message(a.ID, func(m *nextup.Message) { m.Channel, m.To = nextup.ChannelSMS, "+447700900123" }))
	ms = append(ms, b.message(other.ID, func(m *nextup.Message) { m.State = nextup.MessageDead }))
	b.messages(ms...)
	b.read(func(tx nextup.Tx) error {
		for _, c := range []struct {
			bid  string
			want counts
		}{
			{a.ID, counts{
				nextup.ChannelEmail: {nextup.MessageQueued: 3, nextup.MessageSent: 2},
				nextup.ChannelSMS:   {nextup.MessageQueued: 1},
			}},
			{other.ID, counts{nextup.ChannelEmail: {nextup.MessageDead: 1}}},
			{"", nil}, // the whole store: at least these (other tests share no store, but a backend may)
		} {
			got, err := tx.MessageCounts(b.ctx, c.bid)
			if !wantOK(t, err, "MessageCounts(%q)", c.bid) {
				continue
			}
			if c.want == nil {
				if email := got[nextup.ChannelEmail]; email[nextup.MessageQueued] < 3 || email[nextup.MessageSent] < 2 || email[nextup.MessageDead] < 1 || got[nextup.ChannelSMS][nextup.MessageQueued] < 1 {
					t.Errorf("MessageCounts(all) = %v", got)
				}
				continue
			}
			if len(got) != len(c.want) {
				t.Errorf("MessageCounts(%s) = %v, want %v", c.bid, got, c.want)
			}
			for ch, want := range c.want {
				if len(got[ch]) != len(want) {
					t.Errorf("MessageCounts(%s)[%s] = %v, want %v", c.bid, ch, got[ch], want)
				}
				for st, n := range want {
					if got[ch][st] != n {
						t.Errorf("MessageCounts(%s)[%s][%s] = %d, want %d", c.bid, ch, st, got[ch][st], n)
					}
				}
			}
		}
		return nil
	})
}
