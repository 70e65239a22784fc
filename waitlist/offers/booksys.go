package offers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
	"github.com/nextup-dev/nextup/waitlist/slots"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

// The booking-system saga. A business whose own booking system holds the
// truth about its slots (Profile.BookingURL, with Service.BookingSystem
// wired) has every claim booked there as well. A remote call cannot join a
// store transaction, so the claim is a saga of local transactions around
// it, with a durable timer standing for the part still to do:
//
//  1. The claim transaction is the usual one — the offer is claimed, its
//     held seats become a booking, the entry is booked — except that the
//     customer's confirmation is not queued yet and a booking_sync timer is
//     scheduled a few minutes ahead. While that timer is pending, the
//     booking awaits the booking system.
//  2. After the commit the claim asks the booking system, with the booking
//     id as the Idempotency-Key, up to BookingAttempts times in a row while
//     it gives no answer (5xx, a timeout).
//  3. One transaction applies the answer, only while the timer is still
//     pending (checked under the slot's lock), so an answer is applied once
//     however many requests or timers got one:
//     - confirmed (2xx): the timer is cancelled, the confirmation (with the
//     booking system's reference) audited and the customer's confirmation
//     queued;
//     - slot taken there (409): the booking is cancelled and the offer ends
//     as slot_taken, the entry is waiting again with its place kept, the
//     customer is told politely, and the engine decides the slot and the
//     entry again; the seats stay booked — they are taken there;
//     - no answer after every attempt, or refused for good (another 4xx):
//     the booking is cancelled and the offer ends as
//     booking_system_unavailable (or booking_system_refused), the entry is
//     waiting again with its place kept, the slot is handed back to staff
//     with a note and the owner told by email, and the customer is told
//     the business will confirm with them; the seats stay booked until
//     staff release them, since the booking system may hold the booking.
//  4. If the process dies between 1 and 3 (or the answer could not be
//     stored), the timer fires: it asks once more with the same key and
//     applies the answer; while there is still no answer it asks again
//     later, backing off, a bounded number of times and never past the
//     slot's start, then gives up as in 3.
//
// A claimed offer is thus provisional for such a business until its
// booking system answers: the compensation in 3 ends it a second time, as
// cancelled, exactly once (a conditional write from claimed).

// Audit reasons of the saga (the offer's end, the booking's changes).
const (
	ReasonSlotTaken                = "slot_taken"
	ReasonBookingSystemConfirmed   = "booking_system_confirmed"
	ReasonBookingSystemRetry       = "booking_system_retry"
	ReasonBookingSystemUnavailable = "booking_system_unavailable"
	ReasonBookingSystemRefused     = "booking_system_refused"
	// ReasonBookingSystemRemoved: the business dropped its booking URL
	// while a claim awaited an answer; nextup's own booking stands.
	ReasonBookingSystemRemoved = "booking_system_removed"
)

// Message kinds of the saga.
const (
	// MessageBookingFailed tells a customer that their claim could not be
	// booked in the business's booking system.
	MessageBookingFailed = "booking_failed"
	// MessageStaffNotice tells the business's owner something needs them.
	MessageStaffNotice = "staff_notice"
)

const (
	// bookingSyncFirst is when the timer of step 4 first fires after a
	// claim: well after the claim's own attempts have ended.
	bookingSyncFirst = 2 * time.Minute
	// bookingSyncTries bounds the timer's tries (after 2, 4, 8, 16 and 32
	// more minutes: about an hour in all).
	bookingSyncTries = 5
	// defaultBookingAttempts is BookingAttempts when it is zero.
	defaultBookingAttempts = 3
)

// usesBookingSystem reports whether claims of b are booked in its booking system.
func usesBookingSystem(s *core.Service, b nextup.Business) bool {
	return s.BookingSystem != nil && b.Profile.BookingURL != ""
}

// AwaitingBookingSystem reports whether a booking still awaits its
// booking system's answer: its booking_sync timer is pending.
func AwaitingBookingSystem(ctx context.Context, tx nextup.Tx, bookingID string) (bool, error) {
	ts, err := tx.TimerList(ctx, nextup.TimerFilter{Kind: nextup.TimerBookingSync, SubjectID: bookingID, PendingOnly: true, Limit: 1})
	if err != nil {
		return false, fmt.Errorf("booking_sync timer of booking %s: %w", bookingID, err)
	}
	return len(ts) > 0, nil
}

// customerTold marks a claim error whose explanation is already in the
// customer's outbox, so a texted YES needs no second reply.
type customerTold struct{ error }

func (e customerTold) Unwrap() error { return e.error }

func slotTakenThere(bi *core.Biz) error {
	return customerTold{nextup.Errorf(nextup.ErrConflict, nextup.CodeSlotTaken,
		"sorry, this slot was just taken at %s; you keep your place on the waitlist", bi.Name)}
}

func notConfirmed(bi *core.Biz) error {
	return customerTold{nextup.Errorf(nextup.ErrUnavailable, nextup.CodeBookingSystemUnavailable,
		"%s could not confirm this booking just now and will confirm it with you directly; you keep your place on the waitlist", bi.Name)}
}

// bookingAsk is what asking the booking system about a booking needs.
type bookingAsk struct {
	awaiting bool
	url      string
	req      nextup.BookRequest
}

// readBookingAsk reads, in one snapshot, whether a booking awaits its
// booking system and what to send it.
func (s *Offers) readBookingAsk(ctx context.Context, bookingID string) (bookingAsk, error) {
	var a bookingAsk
	err := s.Read(ctx, func(tx nextup.Tx) error {
		a = bookingAsk{}
		b, err := tx.BookingGet(ctx, bookingID)
		if err != nil {
			return fmt.Errorf("booking %s: %w", bookingID, err)
		}
		if a.awaiting, err = AwaitingBookingSystem(ctx, tx, b.ID); err != nil || !a.awaiting {
			return err
		}
		biz, err := tx.BusinessGet(ctx, b.BusinessID)
		if err != nil {
			return err
		}
		sl, err := tx.SlotGet(ctx, b.SlotID)
		if err != nil {
			return err
		}
		e, err := tx.EntryGet(ctx, b.EntryID)
		if err != nil {
			return err
		}
		o, err := tx.OfferGet(ctx, b.OfferID)
		if err != nil {
			return err
		}
		a.url = biz.Profile.BookingURL
		a.req = nextup.BookRequest{BusinessID: b.BusinessID, BookingID: b.ID, SlotID: sl.ID, Service: templates.SlotService(sl),
			Staff: sl.Staff, StartsAt: sl.StartsAt, EndsAt: sl.EndsAt, Seats: b.Seats, PartySize: o.PartySize,
			Name: e.Name, Email: e.Email, Phone: e.Phone, EntryID: e.ID, OfferID: o.ID}
		return nil
	})
	return a, err
}

// ask asks the booking system about a booking up to attempts times in a
// row while it gives no answer, and returns its last reply and how many
// requests were made. Without a booking system (the business dropped its
// URL meanwhile) nextup's own booking stands.
func (s *Offers) ask(ctx context.Context, a bookingAsk, attempts int) (nextup.BookReply, int) {
	if s.BookingSystem == nil || a.url == "" {
		return nextup.BookReply{Outcome: nextup.BookConfirmed, Detail: "no booking system any more"}, 0
	}
	var r nextup.BookReply
	n := 0
	for n < attempts {
		n++
		r = s.BookingSystem.Book(ctx, a.url, a.req)
		if r.Outcome != nextup.BookUnavailable {
			break
		}
		s.Log().WarnContext(ctx, "booking system gave no answer", "business_id", a.req.BusinessID,
			"booking_id", a.req.BookingID, "attempt", n, "detail", r.Detail)
	}
	return r, n
}

// bookThere is steps 2 and 3 of the saga for a claim that awaits the
// booking system (just made, or repeated while still awaiting): res, the
// claim's result, when the booking is confirmed, or the polite error the
// customer has also been sent.
func (s *Offers) bookThere(ctx context.Context, res ClaimResult) (ClaimResult, error) {
	// A customer who gives up waiting must not leave the saga half done:
	// the answer is applied and they are told by message either way.
	ctx = context.WithoutCancel(ctx)
	// The claim's phase commits before the call (with the calendar
	// link's token kept for a resumed run of the same request).
	if res.CalendarToken != "" {
		s.StashNote(ctx, calendarNote(res.Booking.ID), res.CalendarToken)
	}
	if err := s.BeforeRemote(ctx); err != nil {
		return ClaimResult{}, err
	}
	a, err := s.readBookingAsk(ctx, res.Booking.ID)
	if err != nil {
		return ClaimResult{}, err
	}
	var reply nextup.BookReply
	n := 0
	if a.awaiting {
		reply, n = s.ask(ctx, a, cmp.Or(s.BookingAttempts, defaultBookingAttempts))
	}
	told, err := s.settleBooking(ctx, res.Booking.ID, reply, n, res.CalendarToken, nil)
	if err != nil {
		return ClaimResult{}, err
	}
	if told != nil {
		return ClaimResult{}, told
	}
	return res, nil
}

// calendarNote names the note that keeps a booking's calendar token for
// a resumed run of the request that made it.
func calendarNote(bookingID string) string { return "calendar:" + bookingID }

// retryBookingSystem is the booking_sync timer: step 4 of the saga. One
// request, outside any transaction, then its answer applied (or another
// try scheduled) together with finishing the timer.
func (s *Offers) retryBookingSystem(ctx context.Context, t nextup.Timer) error {
	a, err := s.readBookingAsk(ctx, t.SubjectID)
	if err != nil {
		return fmt.Errorf("timer %s: %w", t.Key, err)
	}
	if !a.awaiting {
		return nil // answered meanwhile: the answer cancelled this timer
	}
	reply, n := s.ask(ctx, a, 1)
	if _, err := s.settleBooking(ctx, t.SubjectID, reply, n, "", &t); err != nil {
		return fmt.Errorf("timer %s: %w", t.Key, err)
	}
	return nil
}

// settleBooking is step 3 of the saga: it applies the booking system's
// reply about a booking in one transaction, only while the booking still
// awaits it. The timer t, when the reply came through it, is finished in
// the same transaction (under its claim), and a reply of no answer then
// schedules another try while tries are left. told is the error the
// customer's claim ends with (nil: the booking stands); a booking that was
// settled already gives the answer it was settled with.
func (s *Offers) settleBooking(ctx context.Context, bookingID string, reply nextup.BookReply, attempts int, calToken string, t *nextup.Timer) (told error, err error) {
	err = s.tx(ctx, func(w *work) error {
		told = nil
		w.Actor = nextup.ActorSystem
		if t != nil {
			w.Actor = nextup.ActorTimer
		}
		b, err := w.Tx.BookingGet(ctx, bookingID)
		if err != nil {
			return fmt.Errorf("booking %s: %w", bookingID, err)
		}
		// The slot's lock serialises the answers about its bookings: of
		// two that both saw the booking awaiting, the second finds it
		// settled here.
		slot, err := w.Tx.SlotGet(ctx, b.SlotID)
		if err != nil {
			return err
		}
		pending, err := AwaitingBookingSystem(ctx, w.Tx, b.ID)
		if err != nil {
			return err
		}
		if t != nil {
			if !pending {
				return nil // settled by a claim meanwhile, which removed this timer
			}
			if err := w.Tx.TimerDone(ctx, t.ID, *t.ClaimedUntil, w.Now); err != nil {
				return fmt.Errorf("finish timer %s: %w", t.Key, err)
			}
		}
		o, err := w.Tx.OfferGet(ctx, b.OfferID)
		if err != nil {
			return err
		}
		bi, err := w.Business(ctx, b.BusinessID)
		if err != nil {
			return err
		}
		if !pending || reply.Outcome == "" {
			told = settledAs(bi, o)
			return nil
		}
		entry, err := w.Tx.EntryGet(ctx, b.EntryID)
		if err != nil {
			return err
		}
		c := sagaClaim{bi: bi, booking: b, offer: o, slot: slot, entry: entry, reply: reply, attempts: attempts}
		switch reply.Outcome {
		case nextup.BookConfirmed:
			return w.bookingConfirmed(ctx, c, calToken)
		case nextup.BookSlotTaken:
			told = slotTakenThere(bi)
			return w.bookingUndone(ctx, c, ReasonSlotTaken)
		case nextup.BookRefused:
			told = notConfirmed(bi)
			return w.bookingUndone(ctx, c, ReasonBookingSystemRefused)
		case nextup.BookUnavailable:
			if t != nil {
				retried, tries, err := w.tryAgainLater(ctx, c)
				if err != nil || retried {
					return err
				}
				c.attempts = tries // the timer's tries, this one included
			}
			told = notConfirmed(bi)
			return w.bookingUndone(ctx, c, ReasonBookingSystemUnavailable)
		}
		return fmt.Errorf("booking system answered %q", reply.Outcome)
	})
	return told, err
}

// settledAs is the answer to a claim whose booking was settled already.
func settledAs(bi *core.Biz, o nextup.Offer) error {
	switch {
	case o.State == nextup.OfferClaimed:
		return nil
	case o.Reason == ReasonSlotTaken:
		return slotTakenThere(bi)
	case strings.HasPrefix(o.Reason, "booking_system_"):
		return notConfirmed(bi)
	}
	return nextup.Errorf(nextup.ErrConflict, nextup.CodeOfferWithdrawn, "this offer was withdrawn")
}

// sagaClaim is a claim awaiting its booking system, read and locked in
// the transaction that settles it, with the reply to apply.
type sagaClaim struct {
	bi       *core.Biz
	booking  nextup.Booking
	offer    nextup.Offer
	slot     nextup.Slot
	entry    nextup.Entry
	reply    nextup.BookReply
	attempts int
}

func (c sagaClaim) detail() map[string]any {
	d := map[string]any{"answer": c.reply.Detail, "attempts": c.attempts}
	if c.reply.Reference != "" {
		d["reference"] = c.reply.Reference
	}
	return d
}

// bookingConfirmed applies a 2xx: the booking stands; it is audited with
// the booking system's reference and the customer's confirmation queued.
func (w *work) bookingConfirmed(ctx context.Context, c sagaClaim, calToken string) error {
	if err := w.Tx.TimerCancel(ctx, core.BookingSyncKey(c.booking.ID)); err != nil {
		return fmt.Errorf("cancel timer %s: %w", core.BookingSyncKey(c.booking.ID), err)
	}
	reason := ReasonBookingSystemConfirmed
	if !usesBookingSystem(w.s, c.bi.Business) {
		reason = ReasonBookingSystemRemoved
	}
	if err := w.Audit(ctx, c.bi, nextup.AuditEvent{SubjectType: nextup.SubjectBooking, SubjectID: c.booking.ID, SlotID: c.slot.ID,
		From: string(nextup.BookingBooked), To: string(nextup.BookingBooked), Reason: reason, Detail: c.detail()}); err != nil {
		return err
	}
	return w.Queue(ctx, core.ConfirmationMessage(w.s, c.bi, c.slot, c.entry, c.offer.Channel, c.offer, c.booking, calToken))
}

// tryAgainLater schedules the timer's next try when tries are left and it
// would come before the slot starts, and audits the try that failed. It
// returns whether it did and how many tries the timer has made.
func (w *work) tryAgainLater(ctx context.Context, c sagaClaim) (bool, int, error) {
	evs, err := w.Tx.AuditList(ctx, nextup.AuditFilter{BusinessID: c.bi.ID, SubjectType: nextup.SubjectBooking, SubjectID: c.booking.ID})
	if err != nil {
		return false, 0, err
	}
	tries := 1 // this one
	for _, ev := range evs {
		if ev.Reason == ReasonBookingSystemRetry {
			tries++
		}
	}
	next := w.Now.Add(bookingSyncFirst << tries)
	if tries >= bookingSyncTries || !next.Before(c.slot.StartsAt) {
		return false, tries, nil
	}
	if err := w.Schedule(ctx, nextup.Timer{BusinessID: c.bi.ID, Kind: nextup.TimerBookingSync, SubjectID: c.booking.ID,
		Key: core.BookingSyncKey(c.booking.ID), DueAt: next}); err != nil {
		return false, tries, err
	}
	d := c.detail()
	d["try"], d["next_at"] = tries, next
	return true, tries, w.Audit(ctx, c.bi, nextup.AuditEvent{SubjectType: nextup.SubjectBooking, SubjectID: c.booking.ID, SlotID: c.slot.ID,
		From: string(nextup.BookingBooked), To: string(nextup.BookingBooked), Reason: ReasonBookingSystemRetry, Detail: d})
}

// bookingUndone is the compensation: the booking system did not take the
// booking (reason says why). The booking is cancelled and the offer ends
// as cancelled with the reason; the entry waits again with its place kept
// and is told. The seats stay booked: taken in the booking system, or in
// doubt there until staff, handed the slot, decide.
func (w *work) bookingUndone(ctx context.Context, c sagaClaim, reason string) error {
	o, b, e := c.offer, c.booking, c.entry
	if err := w.Tx.TimerCancel(ctx, core.BookingSyncKey(b.ID)); err != nil {
		return fmt.Errorf("cancel timer %s: %w", core.BookingSyncKey(b.ID), err)
	}
	if _, err := w.Tx.OfferSetState(ctx, o.ID, []nextup.OfferState{nextup.OfferClaimed}, nextup.OfferCancelled, w.Now, reason); err != nil {
		return fmt.Errorf("offer %s to cancelled: %w", o.ID, err)
	}
	if _, err := slots.SetBookingEnded(ctx, w.Work, b.ID, nextup.BookingCancelled); err != nil {
		return err
	}
	if err := w.Tx.EntrySetState(ctx, e.ID, []nextup.EntryState{nextup.EntryBooked}, nextup.EntryWaiting, w.Now); err != nil {
		return fmt.Errorf("entry %s to waiting: %w", e.ID, err)
	}
	d := c.detail()
	d["seats_kept"] = b.Seats
	for _, ev := range []nextup.AuditEvent{
		{SubjectType: nextup.SubjectBooking, SubjectID: b.ID, From: string(nextup.BookingBooked), To: string(nextup.BookingCancelled), Detail: d},
		{SubjectType: nextup.SubjectOffer, SubjectID: o.ID, From: string(nextup.OfferClaimed), To: string(nextup.OfferCancelled)},
		{SubjectType: nextup.SubjectEntry, SubjectID: e.ID, From: string(nextup.EntryBooked), To: string(nextup.EntryWaiting), Detail: map[string]any{"offer_id": o.ID}},
	} {
		ev.SlotID, ev.Reason = c.slot.ID, reason
		if err := w.Audit(ctx, c.bi, ev); err != nil {
			return err
		}
	}
	if m := bookingFailedMessage(c, reason); m.To != "" {
		if err := w.Queue(ctx, m); err != nil {
			return err
		}
	}
	if reason == ReasonSlotTaken {
		// The engine decides the slot again (a shared slot may have seats
		// left for others) ...
		if err := w.DecideSlot(ctx, c.slot.ID); err != nil {
			return err
		}
	} else if err := w.handBackUnconfirmed(ctx, c, reason); err != nil {
		return err
	}
	// ... and the person, waiting again, is matched like anyone whose
	// offer ended unclaimed.
	return w.MatchEntry(ctx, e.ID)
}

// handBackUnconfirmed gives the slot of an unconfirmed claim to staff
// with a note saying what happened, and tells the owner by email.
func (w *work) handBackUnconfirmed(ctx context.Context, c sagaClaim, reason string) error {
	what := "did not answer"
	if reason == ReasonBookingSystemRefused {
		what = "refused it"
	}
	tries := "1 attempt"
	if c.attempts != 1 {
		tries = fmt.Sprintf("%d attempts", c.attempts)
	}
	note := fmt.Sprintf("%s claimed it, but your booking system %s (%s, %s), so it is not confirmed. "+
		"%s was told you will confirm with them. The seats stay taken in nextup until you release the slot.",
		c.entry.Name, what, c.reply.Detail, tries, c.entry.Name)
	h := nextup.HandBack{ID: w.s.Random.ID("hb"), BusinessID: c.bi.ID, SlotID: c.slot.ID, Reason: reason, Note: note,
		State: nextup.HandBackOpen, CreatedAt: w.Now}
	if err := w.Tx.HandBackCreate(ctx, h); err != nil {
		return fmt.Errorf("hand back slot %s: %w", c.slot.ID, err)
	}
	if err := w.Tx.SlotSetHandedBack(ctx, c.slot.ID, true); err != nil {
		return fmt.Errorf("hand back slot %s: %w", c.slot.ID, err)
	}
	owner := c.bi.Profile.OwnerEmail
	if err := w.Audit(ctx, c.bi, nextup.AuditEvent{SubjectType: nextup.SubjectSlot, SubjectID: c.slot.ID, SlotID: c.slot.ID,
		From: string(c.slot.State(w.Now)), To: string(nextup.SlotHandedBack), Reason: reason,
		Detail: map[string]any{"handback_id": h.ID, "note": note, "owner_told": owner != ""}}); err != nil {
		return err
	}
	if owner == "" {
		return nil // the hand-back on the dashboard is all staff get
	}
	return w.Queue(ctx, ownerNoticeMessage(c, what, owner))
}

// bookingFailedMessage tells the customer, on the channel of their offer,
// that their claim was not booked: the slot was taken, or the business
// will confirm with them.
func bookingFailedMessage(c sagaClaim, reason string) nextup.Message {
	kind := templates.TemplateUnconfirmed
	if reason == ReasonSlotTaken {
		kind = templates.TemplateFilled
	}
	m := nextup.Message{BusinessID: c.bi.ID, Kind: MessageBookingFailed, Channel: c.offer.Channel,
		To: templates.AddressOf(c.entry, c.offer.Channel), OfferID: c.offer.ID, EntryID: c.entry.ID, BookingID: c.booking.ID}
	templates.Compose(c.bi.Business, kind, templates.SlotData(c.bi.Loc, c.slot, c.entry, c.offer.PartySize), &m)
	return m
}

// ownerNoticeMessage tells the owner that a claim needs confirming by
// hand: the hand-back template, with a note saying what happened.
func ownerNoticeMessage(c sagaClaim, what, owner string) nextup.Message {
	contact := strings.TrimSpace(c.entry.Email + " " + c.entry.Phone)
	if contact != "" {
		contact = " (" + contact + ")"
	}
	note := fmt.Sprintf("%s claimed the %s slot on %s, but your booking system %s (%s), so the booking is not confirmed. "+
		"nextup has handed the slot back to you and told %s you will confirm with them directly%s.\n\n"+
		"Please check your booking system: if the booking is there, or you can make it, confirm with %s; if the slot is free "+
		"and you would rather offer it to the waitlist, release it in nextup. Its seats stay taken in nextup until you do.",
		c.entry.Name, templates.SlotService(c.slot), templates.FormatWhen(c.slot.StartsAt, c.bi.Loc), what, c.reply.Detail, c.entry.Name, contact, c.entry.Name)
	m := nextup.Message{BusinessID: c.bi.ID, Kind: MessageStaffNotice, Channel: nextup.ChannelEmail, To: owner, BookingID: c.booking.ID}
	templates.Compose(c.bi.Business, templates.TemplateHandback, templates.TemplateData{Service: templates.SlotService(c.slot), Staff: c.slot.Staff,
		When: templates.FormatWhen(c.slot.StartsAt, c.bi.Loc), Note: note}, &m)
	return m
}

// CustomerTold reports whether err is a claim error the customer has
// already been sent a message about.
func CustomerTold(err error) bool {
	var t customerTold
	return errors.As(err, &t)
}

// RetryBookingSystem runs the booking_sync timer t (see
// retryBookingSystem); waitlist's timer handler calls it.
func RetryBookingSystem(ctx context.Context, s *Offers, t nextup.Timer) error {
	return s.retryBookingSystem(ctx, t)
}
