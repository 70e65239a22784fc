package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

// A person's entries are found by email (any case, any state) and by
// phone number however it was written, also when the entry has an email
// too (its contact key is then the email); never another person's or
// another business's, and an empty contact finds nobody.
func testPersonEntryListByContact(t *testing.T, b *bundle) {
	biz, other := b.business(), b.business()
	ev := b.slot(biz.ID, event(&nextup.EventSettings{}))
	byMail := b.entry(biz.ID, func(e *nextup.Entry) {
		e.Email, e.JoinedAt = " Ann@Example.COM", b.at(-5*time.Hour)
	})
	both := b.entry(biz.ID, func(e *nextup.Entry) {
		e.Email, e.Phone, e.Service, e.JoinedAt = "ann.work@example.com", "+44 7700-900 (123)", "color", b.at(-4*time.Hour)
	})
	byPhone := b.entry(biz.ID, func(e *nextup.Entry) {
		e.Email, e.Phone, e.EventID, e.Service, e.JoinedAt, e.State = "", "+447700900123", ev.ID, "", b.at(-3*time.Hour), nextup.EntryBooked
	})
	left := b.entry(biz.ID, func(e *nextup.Entry) {
		e.Email, e.Service, e.JoinedAt, e.State = "ann@example.com", "perm", b.at(-2*time.Hour), nextup.EntryLeft
	})
	b.entry(biz.ID, func(e *nextup.Entry) { e.Email, e.Phone = "bob@example.com", "+447700900124" })
	b.entry(biz.ID, func(e *nextup.Entry) { e.Email, e.Phone = "", "+4477009001" }) // a prefix of Ann's number
	elsewhere := b.entry(other.ID, func(e *nextup.Entry) { e.Email, e.Phone = "ann@example.com", "+447700900123" })

	check := func(tx nextup.Tx, step, businessID string, c nextup.Contact, want ...nextup.Entry) {
		t.Helper()
		got, err := tx.EntryListByContact(b.ctx, businessID, c)
		if !wantOK(t, err, "EntryListByContact(%s)", step) {
			return
		}
		if gotIDs, wantIDs := ids(got, entryID), ids(want, entryID); !sameStrings(gotIDs, wantIDs) {
			t.Errorf("EntryListByContact(%s):\n\tgot  %v\n\twant %v", step, gotIDs, wantIDs)
			return
		}
		for i := range want {
			checkEqual(t, fmt.Sprintf("EntryListByContact(%s)[%d]", step, i), want[i], got[i])
		}
	}
	b.read(func(tx nextup.Tx) error {
		check(tx, "email", biz.ID, nextup.ContactOf("ANN@example.com", ""), byMail, left)
		check(tx, "phone", biz.ID, nextup.ContactOf("", "+447700900123"), both, byPhone)
		check(tx, "both", biz.ID, nextup.ContactOf("ann@example.com", "+447700900123"), byMail, both, byPhone, left)
		check(tx, "other business", other.ID, nextup.ContactOf("ann@example.com", ""), elsewhere)
		check(tx, "nobody", biz.ID, nextup.ContactOf("nobody@example.com", "+15550000000"))
		check(tx, "empty", biz.ID, nextup.Contact{})
		return nil
	})
}

// A person's offers are listed by the contact key they were made under,
// oldest first, in any state; another person's and another business's
// are not.
func testPersonOfferListByContact(t *testing.T, b *bundle) {
	biz, other := b.business(), b.business()
	ann := b.entry(biz.ID, func(e *nextup.Entry) { e.Email = "ann@example.com" })
	bob := b.entry(biz.ID)
	s1, s2, s3 := b.slot(biz.ID), b.slot(biz.ID), b.slot(biz.ID)
	first, _ := b.offer(s1, ann, func(o *nextup.Offer) {
		o.State, o.CreatedAt, o.ResolvedAt, o.Reason = nextup.OfferExpired, b.at(-2*time.Hour), ptr(b.at(-time.Hour)), "expired"
	})
	second, _ := b.offer(s2, ann)
	b.offer(s3, bob)
	os := b.slot(other.ID)
	oe := b.entry(other.ID, func(e *nextup.Entry) { e.Email = "ann@example.com" })
	b.offer(os, oe)
	b.read(func(tx nextup.Tx) error {
		got, err := tx.OfferListByContact(b.ctx, biz.ID, ann.ContactKey())
		if wantOK(t, err, "OfferListByContact") {
			if !sameStrings(ids(got, offerID), []string{first.ID, second.ID}) {
				t.Errorf("OfferListByContact = %v, want %v", ids(got, offerID), []string{first.ID, second.ID})
			} else {
				checkEqual(t, "OfferListByContact[0]", first, got[0])
				checkEqual(t, "OfferListByContact[1]", second, got[1])
			}
		}
		got, err = tx.OfferListByContact(b.ctx, biz.ID, "email:nobody@example.com")
		if wantOK(t, err, "OfferListByContact(nobody)") && len(got) != 0 {
			t.Errorf("OfferListByContact(nobody) = %v, want none", ids(got, offerID))
		}
		return nil
	})
}

// personRows is one person's rows of every kind an erasure rewrites.
type personRows struct {
	entry    nextup.Entry
	offer    nextup.Offer
	booking  nextup.Booking
	guest    nextup.Guest
	sent     nextup.Message
	queued   nextup.Message
	audit    nextup.AuditEvent
	proposal nextup.Proposal
	handBack nextup.HandBack
}

// personRows writes a booked registration of an event with one guest, an
// expired offer, two messages, an audit row, a proposal and a hand-back.
func (b *bundle) personRows(businessID, email string) personRows {
	b.t.Helper()
	var r personRows
	ev := b.slot(businessID, event(&nextup.EventSettings{}))
	r.entry = b.entry(businessID, func(e *nextup.Entry) {
		e.Name, e.Email, e.Phone, e.Channel = "Ann Example", email, "+44 7700 900123", nextup.ChannelSMS
		e.Service, e.EventID, e.PartySize, e.State = "", ev.ID, 2, nextup.EntryBooked
	})
	sl := b.slot(businessID)
	r.offer, _ = b.offer(sl, r.entry, func(o *nextup.Offer) {
		o.State, o.ResolvedAt, o.Reason = nextup.OfferExpired, ptr(b.now), "expired"
	})
	r.booking = nextup.Booking{ID: b.id("bkg"), BusinessID: businessID, SlotID: ev.ID, EntryID: r.entry.ID, Name: "Ann Example",
		Seats: 2, State: nextup.BookingBooked, TokenHash: nextup.HashToken(b.id("cal")), CreatedAt: b.now}
	r.guest = nextup.Guest{BusinessID: businessID, SlotID: ev.ID, EntryID: r.entry.ID, Index: 1, Name: "Bea Example"}
	r.sent = b.message(businessID, func(m *nextup.Message) {
		m.To, m.EntryID, m.OfferID, m.State = email, r.entry.ID, r.offer.ID, nextup.MessageSent
		m.HTML, m.Calendar, m.UnsubscribeURL, m.ClaimURL = "<p>Hi Ann</p>", "BEGIN:VCALENDAR", "https://example.test/u/1", "https://example.test/c/1"
		m.SentAt, m.ProviderID = ptr(b.now), "prov-1"
	})
	r.queued = b.message(businessID, func(m *nextup.Message) {
		m.Channel, m.To, m.EntryID, m.Body, m.Subject = nextup.ChannelSMS, "+447700900123", r.entry.ID, "Hi Ann, a reminder", ""
		m.LastError, m.State, m.Attempts = "503", nextup.MessageFailed, 1
	})
	b.messages(r.sent, r.queued)
	r.proposal = b.proposal(businessID, func(p *nextup.Proposal) { p.Fields.Email = email })
	r.handBack = nextup.HandBack{ID: b.id("hb"), BusinessID: businessID, SlotID: sl.ID, Reason: nextup.HandBackListExhausted,
		Note: "Handed back (list exhausted) after trying 1: Ann Example (expired).", State: nextup.HandBackOpen, CreatedAt: b.now}
	b.tx(func(tx nextup.Tx) error {
		if err := tx.BookingCreate(b.ctx, r.booking); err != nil {
			return err
		}
		if err := tx.GuestsCreate(b.ctx, []nextup.Guest{r.guest}); err != nil {
			return err
		}
		if err := tx.HandBackCreate(b.ctx, r.handBack); err != nil {
			return err
		}
		return tx.AuditAppend(b.ctx, nextup.AuditEvent{BusinessID: businessID, At: b.now, Actor: nextup.ActorCustomer,
			SubjectType: nextup.SubjectEntry, SubjectID: r.entry.ID, From: "waiting", To: "booked", Reason: "claimed",
			RuleVersion: 3, Detail: map[string]any{"email": email, "seats": 2.0}})
	})
	b.read(func(tx nextup.Tx) error {
		evs, err := tx.AuditList(b.ctx, nextup.AuditFilter{SubjectType: nextup.SubjectEntry, SubjectID: r.entry.ID})
		if err != nil || len(evs) != 1 {
			return fmt.Errorf("audit of the fixture: %v, %w", evs, err)
		}
		r.audit = evs[0]
		return nil
	})
	return r
}

// erasure is the erasure of every row of r.
func (r personRows) erasure(pseudonym string) nextup.Erasure {
	g := r.guest
	g.Name = ""
	a := r.audit
	a.Detail = map[string]any{"email": pseudonym, "seats": 2.0}
	p := r.proposal
	p.Fields = nextup.ProposalFields{Name: pseudonym, Service: "cut", PartySize: 1}
	p.Excerpt = ""
	h := r.handBack
	h.Note = "Handed back (list exhausted) after trying 1: " + pseudonym + " (expired)."
	return nextup.Erasure{
		BusinessID: r.entry.BusinessID, Pseudonym: pseudonym,
		Entries: []string{r.entry.ID}, Offers: []string{r.offer.ID}, Bookings: []string{r.booking.ID},
		Guests: []nextup.Guest{g}, Messages: []string{r.sent.ID, r.queued.ID}, Audit: []nextup.AuditEvent{a},
		Proposals: []nextup.Proposal{p}, HandBacks: []nextup.HandBack{h},
	}
}

// PersonErase rewrites exactly the fields an Erasure names, on every kind
// of row, and leaves ids, states, times and counts, and every other
// person's and business's rows, as they were. A row that is missing, of
// another business, or still active refuses the whole erasure.
func testPersonErase(t *testing.T, b *bundle) {
	biz, other := b.business(), b.business()
	ann := b.personRows(biz.ID, "ann@example.com")
	bob := b.personRows(biz.ID, "bob@example.com")
	theirs := b.personRows(other.ID, "ann@example.com")
	waiting := b.entry(biz.ID)
	live, _ := b.offer(b.slot(biz.ID), b.entry(biz.ID))

	type snapshot struct {
		entry    nextup.Entry
		offer    nextup.Offer
		booking  nextup.Booking
		guests   []nextup.Guest
		sent     nextup.Message
		queued   nextup.Message
		audit    []nextup.AuditEvent
		proposal nextup.Proposal
		handBack nextup.HandBack
	}
	snap := func(r personRows) snapshot {
		t.Helper()
		var s snapshot
		b.read(func(tx nextup.Tx) error {
			var err error
			if s.entry, err = tx.EntryGet(b.ctx, r.entry.ID); err != nil {
				return err
			}
			if s.offer, err = tx.OfferGet(b.ctx, r.offer.ID); err != nil {
				return err
			}
			if s.booking, err = tx.BookingGet(b.ctx, r.booking.ID); err != nil {
				return err
			}
			if s.guests, err = tx.GuestListByEntry(b.ctx, r.entry.ID); err != nil {
				return err
			}
			if s.sent, err = tx.MessageGet(b.ctx, r.sent.ID); err != nil {
				return err
			}
			if s.queued, err = tx.MessageGet(b.ctx, r.queued.ID); err != nil {
				return err
			}
			if s.audit, err = tx.AuditList(b.ctx, nextup.AuditFilter{SubjectType: nextup.SubjectEntry, SubjectID: r.entry.ID}); err != nil {
				return err
			}
			if s.proposal, err = tx.ProposalGet(b.ctx, r.proposal.ID); err != nil {
				return err
			}
			s.handBack, err = tx.HandBackGet(b.ctx, r.handBack.ID)
			return err
		})
		return s
	}
	annBefore, bobBefore, theirsBefore := snap(ann), snap(bob), snap(theirs)

	// Refused erasures change nothing, not even the rows before the one
	// refused.
	refused := []struct {
		name string
		kind error
		mod  func(*nextup.Erasure)
	}{
		{"missing entry", nextup.ErrNotFound, func(e *nextup.Erasure) { e.Entries = append(e.Entries, "ent_missing") }},
		{"another business's entry", nextup.ErrNotFound, func(e *nextup.Erasure) { e.Entries = append(e.Entries, theirs.entry.ID) }},
		{"waiting entry", nextup.ErrConflict, func(e *nextup.Erasure) { e.Entries = append(e.Entries, waiting.ID) }},
		{"live offer", nextup.ErrConflict, func(e *nextup.Erasure) { e.Offers = append(e.Offers, live.ID) }},
		{"another business's message", nextup.ErrNotFound, func(e *nextup.Erasure) { e.Messages = append(e.Messages, theirs.sent.ID) }},
		{"missing audit row", nextup.ErrNotFound, func(e *nextup.Erasure) {
			e.Audit = append(e.Audit, nextup.AuditEvent{ID: theirs.audit.ID})
		}},
		{"missing hand-back", nextup.ErrNotFound, func(e *nextup.Erasure) {
			e.HandBacks = append(e.HandBacks, nextup.HandBack{ID: "hb_missing"})
		}},
	}
	for _, c := range refused {
		e := ann.erasure("erased-0001")
		c.mod(&e)
		err := b.s.InTx(b.ctx, func(tx nextup.Tx) error { return tx.PersonErase(b.ctx, e) })
		wantErr(t, err, c.kind, "PersonErase(%s)", c.name)
		checkEqual(t, "after the refused erasure ("+c.name+")", annBefore, snap(ann))
	}

	b.tx(func(tx nextup.Tx) error { return tx.PersonErase(b.ctx, ann.erasure("erased-0001")) })
	got := snap(ann)
	want := annBefore
	want.entry.Name, want.entry.Email, want.entry.Phone, want.entry.Channel, want.entry.StatusHash = "erased-0001", "", "", "", ""
	want.offer.ContactKey = nextup.Entry{}.ContactKey()
	want.booking.Name = "erased-0001"
	want.guests[0].Name = ""
	want.sent.To, want.sent.Subject, want.sent.Body, want.sent.HTML, want.sent.Calendar = "erased-0001", "", "", "", ""
	want.sent.UnsubscribeURL, want.sent.ClaimURL = "", ""
	want.queued.To, want.queued.Body, want.queued.LastError, want.queued.State = "erased-0001", "", "", nextup.MessageCancelled
	want.audit[0].Detail = map[string]any{"email": "erased-0001", "seats": 2.0}
	want.proposal.Fields, want.proposal.Excerpt = nextup.ProposalFields{Name: "erased-0001", Service: "cut", PartySize: 1}, ""
	want.handBack.Note = "Handed back (list exhausted) after trying 1: erased-0001 (expired)."
	checkEqual(t, "after the erasure", want, got)
	checkEqual(t, "another person after the erasure", bobBefore, snap(bob))
	checkEqual(t, "another business after the erasure", theirsBefore, snap(theirs))

	b.read(func(tx nextup.Tx) error {
		if _, err := tx.EntryByStatusHash(b.ctx, annBefore.entry.StatusHash); !wantErr(t, err, nextup.ErrNotFound, "the erased entry's status link") {
			return nil
		}
		es, err := tx.EntryListByContact(b.ctx, biz.ID, nextup.ContactOf("ann@example.com", "+447700900123"))
		if wantOK(t, err, "EntryListByContact after the erasure") {
			// Bob's fixture has Ann's number too (personRows): only his
			// entry is left.
			if !sameStrings(ids(es, entryID), []string{bob.entry.ID}) {
				t.Errorf("EntryListByContact after the erasure = %v, want only %s", ids(es, entryID), bob.entry.ID)
			}
		}
		os, err := tx.OfferListByContact(b.ctx, biz.ID, annBefore.entry.ContactKey())
		if wantOK(t, err, "OfferListByContact after the erasure") && len(os) != 0 {
			t.Errorf("OfferListByContact after the erasure = %v, want none", ids(os, offerID))
		}
		ms, err := tx.MessageList(b.ctx, nextup.MessageFilter{BusinessID: biz.ID, To: "ann@example.com"})
		if wantOK(t, err, "MessageList after the erasure") && len(ms) != 0 {
			t.Errorf("MessageList(to Ann) after the erasure = %v, want none", ids(ms, messageID))
		}
		return nil
	})

	// Erasing again writes the same values: nothing changes.
	b.tx(func(tx nextup.Tx) error { return tx.PersonErase(b.ctx, ann.erasure("erased-0001")) })
	checkEqual(t, "after erasing again", got, snap(ann))
}
