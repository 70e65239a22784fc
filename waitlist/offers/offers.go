package offers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
	"github.com/nextup-dev/nextup/waitlist/slots"
)

// Offers are the use cases of an offer: the claim link viewed and
// claimed (and, for a business with a booking system, the saga that books
// the claim there), declined, withdrawn by staff, expired, and sent when
// quiet hours end.
type Offers struct {
	*core.Service
}

// work is one transaction of these use cases: the core's Work, with the
// steps of this package as its methods.
type work struct {
	*core.Work
	s *core.Service
}

func wrap(w *core.Work) *work { return &work{Work: w, s: w.Service()} }

// tx runs fn in a transaction of the core (core.Service.Tx).
func (s *Offers) tx(ctx context.Context, fn func(w *work) error) error {
	return s.Tx(ctx, func(w *core.Work) error { return fn(wrap(w)) })
}

// ClaimInfo is what the claim page and GET /v1/claims/{token} show.
type ClaimInfo struct {
	Offer       nextup.Offer
	Slot        nextup.Slot
	Entry       nextup.Entry
	Business    nextup.Business
	Location    *time.Location
	SecondsLeft int64
	Booking     *nextup.Booking // when claimed
	// Confirming: claimed, and the business's booking system has not
	// answered yet (see booksys.go).
	Confirming bool
}

// ViewClaim returns what a claim link shows and records that the link was
// seen. It never claims: mail scanners open links.
func (s *Offers) ViewClaim(ctx context.Context, token string) (ClaimInfo, error) {
	var info ClaimInfo
	// Most views need no write (the link was seen already, or the offer has
	// ended): answer those from a read snapshot, so a page that is opened
	// again and again never queues behind the writer.
	seen := false
	err := s.Read(ctx, func(tx nextup.Tx) error {
		o, err := tx.OfferByTokenHash(ctx, nextup.HashToken(token))
		if err != nil {
			return fmt.Errorf("claim link: %w", err)
		}
		if o.SeenAt == nil && o.State.Live() {
			return nil
		}
		seen = true
		w := wrap(s.WorkIn(tx))
		info, err = w.claimInfo(ctx, o)
		return err
	})
	if err != nil || seen {
		return info, err
	}
	err = s.tx(ctx, func(w *work) error {
		o, err := w.Tx.OfferByTokenHash(ctx, nextup.HashToken(token))
		if err != nil {
			return fmt.Errorf("claim link: %w", err)
		}
		if o.SeenAt == nil && o.State.Live() {
			if err := w.Tx.OfferSeen(ctx, o.ID, w.Now); err != nil {
				return fmt.Errorf("record offer %s seen: %w", o.ID, err)
			}
			bi, err := w.Business(ctx, o.BusinessID)
			if err != nil {
				return err
			}
			if err := w.Audit(ctx, bi, nextup.AuditEvent{Actor: nextup.ActorCustomer,
				SubjectType: nextup.SubjectOffer, SubjectID: o.ID, SlotID: o.SlotID,
				From: string(o.State), To: string(o.State), Reason: "seen"}); err != nil {
				return err
			}
			t := w.Now
			o.SeenAt = &t
		}
		info, err = w.claimInfo(ctx, o)
		return err
	})
	return info, err
}

func (w *work) claimInfo(ctx context.Context, o nextup.Offer) (ClaimInfo, error) {
	info := ClaimInfo{Offer: o}
	var err error
	if info.Slot, err = w.Tx.SlotGet(ctx, o.SlotID); err != nil {
		return info, err
	}
	if info.Entry, err = w.Tx.EntryGet(ctx, o.EntryID); err != nil {
		return info, err
	}
	bi, err := w.Business(ctx, o.BusinessID)
	if err != nil {
		return info, err
	}
	info.Business, info.Location = bi.Business, bi.Loc
	if o.State == nextup.OfferOffered && o.ExpiresAt.After(w.Now) {
		info.SecondsLeft = int64(o.ExpiresAt.Sub(w.Now) / time.Second)
	}
	if o.State == nextup.OfferClaimed {
		b, err := w.Tx.BookingByOffer(ctx, o.ID)
		if err != nil {
			return info, err
		}
		info.Booking = &b
		if info.Confirming, err = AwaitingBookingSystem(ctx, w.Tx, b.ID); err != nil {
			return info, err
		}
	}
	return info, nil
}

// ClaimResult is the outcome of a successful claim.
type ClaimResult struct {
	Booking nextup.Booking
	// CalendarToken is the secret for the booking's calendar link; it is
	// only known to the request that made the booking (a repeat gets "").
	CalendarToken string
	Repeat        bool // the offer was already claimed: this is the same booking again
}

// Claim is the claim: one conditional write moves the offer from offered to
// claimed only if the token matches, it is still offered and the deadline
// has not passed. In the same transaction the held seats become a booking,
// the entry becomes booked, the timers are cancelled, and the audit rows
// and the confirmation message are written. Repeating a successful claim
// returns the same booking.
//
// For a business with a booking system the confirmation waits for it:
// after the commit the booking is booked there, and the claim ends with
// its answer (the saga of booksys.go) — the booking, or a slot_taken
// conflict, or booking_system_unavailable.
func (s *Offers) Claim(ctx context.Context, token string) (ClaimResult, error) {
	return s.claimByHash(ctx, nextup.HashToken(token), nil)
}

// paymentMark is the payment a paid event's claim records in its
// transaction.
type paymentMark struct {
	p      nextup.Payment
	intent string
}

// claimPaid is the claim a completed payment makes: the same conditional
// write, with the payment recorded as paid in the same transaction.
func (s *Offers) claimPaid(ctx context.Context, hash string, p nextup.Payment, intent string) (ClaimResult, error) {
	return s.claimByHash(ctx, hash, &paymentMark{p: p, intent: intent})
}

// claimByHash is Claim by the hash of the offer's token: the link's token
// hashed, or the hash an offer row keeps (a YES texted back). A paid
// event's offer is claimed only by its payment (pay set): anything else
// is told payment_required.
func (s *Offers) claimByHash(ctx context.Context, hash string, pay *paymentMark) (ClaimResult, error) {
	var res ClaimResult
	awaiting := false // the booking awaits the business's booking system
	err := s.tx(ctx, func(w *work) error {
		awaiting = false
		w.Actor = nextup.ActorCustomer
		o, err := w.Tx.OfferClaim(ctx, hash, w.Now)
		if err != nil {
			if !errors.Is(err, nextup.ErrConflict) {
				return fmt.Errorf("claim: %w", err)
			}
			return w.explainFailedClaim(ctx, hash, &res, &awaiting)
		}
		bi, err := w.Business(ctx, o.BusinessID)
		if err != nil {
			return err
		}
		slot, err := w.Tx.SlotSeats(ctx, o.SlotID, nextup.SeatDelta{Held: -o.Seats, Booked: o.Seats})
		if err != nil {
			return fmt.Errorf("book %d held seats of slot %s: %w", o.Seats, o.SlotID, err)
		}
		if pay == nil && slot.Event.Paid() {
			// A paid event's seats are confirmed by their payment, not
			// by the claim link's button or a YES by text: the claim is
			// undone with the transaction, and the person sent to pay.
			return &nextup.Error{Kind: nextup.ErrConflict, Code: nextup.CodePaymentRequired,
				Message: "these seats are confirmed when they are paid for", Data: map[string]any{"offer_id": o.ID}}
		}
		if err := w.Tx.EntrySetState(ctx, o.EntryID, []nextup.EntryState{nextup.EntryOffered}, nextup.EntryBooked, w.Now); err != nil {
			return fmt.Errorf("entry %s to booked: %w", o.EntryID, err)
		}
		entry, err := w.Tx.EntryGet(ctx, o.EntryID)
		if err != nil {
			return err
		}
		calToken, calHash := w.s.Random.Token()
		b := nextup.Booking{
			ID: w.s.Random.ID("bkg"), BusinessID: o.BusinessID, SlotID: o.SlotID, EntryID: o.EntryID,
			OfferID: o.ID, Name: entry.Name, Seats: o.Seats, State: nextup.BookingBooked,
			TokenHash: calHash, CreatedAt: w.Now,
		}
		if err := w.Tx.BookingCreate(ctx, b); err != nil {
			return fmt.Errorf("create booking: %w", err)
		}
		for _, key := range []string{core.ExpireKey(o.ID), core.ReleaseKey(o.ID), core.EscalateKey(o.ID)} {
			if err := w.Tx.TimerCancel(ctx, key); err != nil {
				return fmt.Errorf("cancel timer %s: %w", key, err)
			}
		}
		// An event's registrations are nextup's own: the business's
		// booking system (for its appointments) is not asked about them.
		awaiting = usesBookingSystem(w.s, bi.Business) && slot.Kind != nextup.KindEvent
		bookingDetail := map[string]any{"offer_id": o.ID, "seats": b.Seats}
		if awaiting {
			bookingDetail["awaiting_booking_system"] = true
		}
		for _, ev := range []nextup.AuditEvent{
			{SubjectType: nextup.SubjectOffer, SubjectID: o.ID, From: string(nextup.OfferOffered), To: string(nextup.OfferClaimed)},
			{SubjectType: nextup.SubjectEntry, SubjectID: entry.ID, From: string(nextup.EntryOffered), To: string(nextup.EntryBooked), Detail: map[string]any{"offer_id": o.ID}},
			{SubjectType: nextup.SubjectBooking, SubjectID: b.ID, To: string(nextup.BookingBooked), Detail: bookingDetail},
		} {
			ev.SlotID = o.SlotID
			ev.Reason = "claim"
			if err := w.Audit(ctx, bi, ev); err != nil {
				return err
			}
		}
		// A row of the business's Google Sheet is marked booked by a
		// timer of its own, after the commit (the claim never waits for
		// Google, nor fails with it).
		if err := w.MarkSheetRow(ctx, bi, entry, b); err != nil {
			return err
		}
		if awaiting {
			// The confirmation waits for the booking system; this timer
			// asks it again should the answer never be stored.
			if err := w.Schedule(ctx, nextup.Timer{BusinessID: o.BusinessID, Kind: nextup.TimerBookingSync, SubjectID: b.ID,
				Key: core.BookingSyncKey(b.ID), DueAt: w.Now.Add(bookingSyncFirst)}); err != nil {
				return err
			}
		} else if err := w.Queue(ctx, core.ConfirmationMessage(w.s, bi, slot, entry, o.Channel, o, b, calToken)); err != nil {
			return err
		}
		if err := slots.ScheduleReminders(ctx, w.Work, bi, slot, b); err != nil {
			return err
		}
		// The person's other entries this booking makes pointless
		// (the rules' dedupe) are withdrawn in the same transaction.
		if err := w.Dedupe(ctx, bi, entry, slot); err != nil {
			return err
		}
		if pay != nil {
			if err := w.markPaid(ctx, bi, o, pay); err != nil {
				return err
			}
		}
		res = ClaimResult{Booking: b, CalendarToken: calToken}
		if slot.Seating == nextup.SeatingShared && slot.FreeSeats() > 0 {
			// A booking is not a try: the claim may bring the slot back
			// under its try cap with seats still free, so decide it again.
			return w.DecideSlot(ctx, slot.ID)
		}
		return nil
	})
	if res.Repeat && res.CalendarToken == "" {
		// A resumed run of the request that made the booking (it split
		// at the booking system's call) answers with its calendar link.
		res.CalendarToken = s.Stashed(ctx, calendarNote(res.Booking.ID))
	}
	if err != nil || !awaiting {
		return res, err
	}
	return s.bookThere(ctx, res)
}

// explainFailedClaim turns a failed conditional claim into the answer the
// person should get: the same booking for a repeat (which, while the
// booking awaits the business's booking system, asks it again), or why not.
func (w *work) explainFailedClaim(ctx context.Context, hash string, res *ClaimResult, awaiting *bool) error {
	o, err := w.Tx.OfferByTokenHash(ctx, hash)
	if err != nil {
		return fmt.Errorf("claim: %w", err)
	}
	switch o.State {
	case nextup.OfferClaimed:
		b, err := w.Tx.BookingByOffer(ctx, o.ID)
		if err != nil {
			return fmt.Errorf("booking of claimed offer %s: %w", o.ID, err)
		}
		*res = ClaimResult{Booking: b, Repeat: true}
		*awaiting, err = AwaitingBookingSystem(ctx, w.Tx, b.ID)
		return err
	case nextup.OfferDeclined:
		return nextup.Errorf(nextup.ErrConflict, nextup.CodeOfferDeclined, "this offer was declined")
	case nextup.OfferPending:
		return nextup.Errorf(nextup.ErrConflict, nextup.CodeOfferPending, "this offer has not been sent yet")
	case nextup.OfferCancelled:
		if o.Reason == ReasonSlotTaken || strings.HasPrefix(o.Reason, "booking_system_") {
			// Claimed, then undone by the business's booking system.
			bi, err := w.Business(ctx, o.BusinessID)
			if err != nil {
				return err
			}
			return settledAs(bi, o)
		}
	}
	// Expired, withdrawn, or offered past its deadline: if somebody has
	// booked the seats since, say politely that the slot was just filled; a
	// link whose offer rolled on to someone still deciding is told it
	// expired (or was withdrawn).
	slot, err := w.Tx.SlotGet(ctx, o.SlotID)
	if err != nil {
		return err
	}
	if slot.Capacity-slot.BookedSeats < o.Seats {
		return nextup.Errorf(nextup.ErrConflict, nextup.CodeSlotTaken, "sorry, this slot was just filled")
	}
	if o.State == nextup.OfferCancelled {
		return nextup.Errorf(nextup.ErrConflict, nextup.CodeOfferWithdrawn, "this offer was withdrawn")
	}
	return nextup.Errorf(nextup.ErrConflict, nextup.CodeOfferExpired, "this offer expired at %s", o.ExpiresAt.Format(time.RFC3339))
}

// Decline ends an offer at the person's request; the slot rolls on at once
// and the re-queue rule says whether the person keeps their place, goes to
// the back of the line or leaves it (and then they are told).
func (s *Offers) Decline(ctx context.Context, token string) (nextup.Offer, []nextup.Move, error) {
	return s.declineByHash(ctx, nextup.HashToken(token))
}

// liveOffer is the live offer of the entry whose status link this is.
func (s *Offers) liveOffer(ctx context.Context, statusToken string) (nextup.Offer, error) {
	var o nextup.Offer
	err := s.Read(ctx, func(tx nextup.Tx) error {
		e, err := tx.EntryByStatusHash(ctx, nextup.HashToken(statusToken))
		if err != nil {
			return core.NotFound("status link", "", err)
		}
		o, err = tx.OfferLiveByEntry(ctx, e.ID)
		if errors.Is(err, nextup.ErrNotFound) {
			return nextup.Errorf(nextup.ErrConflict, nextup.CodeOfferExpired, "there is no offer to answer now")
		}
		return err
	})
	return o, err
}

// ClaimByStatus claims the live offer of the entry whose status link this
// is: the status page is a second door to the offer beside its message,
// through the same one conditional write.
func (s *Offers) ClaimByStatus(ctx context.Context, statusToken string) (ClaimResult, error) {
	o, err := s.liveOffer(ctx, statusToken)
	if err != nil {
		return ClaimResult{}, err
	}
	return s.claimByHash(ctx, o.TokenHash, nil)
}

// DeclineByStatus declines the live offer of the entry whose status link
// this is. An offer held back by quiet hours has not been sent, so there
// is nothing to answer yet (offer_pending): the person may leave instead.
func (s *Offers) DeclineByStatus(ctx context.Context, statusToken string) (nextup.Offer, []nextup.Move, error) {
	o, err := s.liveOffer(ctx, statusToken)
	if err != nil {
		return nextup.Offer{}, nil, err
	}
	if o.State == nextup.OfferPending {
		return nextup.Offer{}, nil, nextup.Errorf(nextup.ErrConflict, nextup.CodeOfferPending, "this offer is sent when quiet hours end; it cannot be answered before")
	}
	return s.declineByHash(ctx, o.TokenHash)
}

func (s *Offers) declineByHash(ctx context.Context, hash string) (nextup.Offer, []nextup.Move, error) {
	var out nextup.Offer
	var moves []nextup.Move
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorCustomer
		o, err := w.Tx.OfferByTokenHash(ctx, hash)
		if err != nil {
			return fmt.Errorf("decline: %w", err)
		}
		switch o.State {
		case nextup.OfferDeclined:
			out = o // a repeat: nothing more to do
			return nil
		case nextup.OfferClaimed:
			return nextup.Errorf(nextup.ErrConflict, nextup.CodeOfferClaimed, "this offer was already claimed")
		case nextup.OfferCancelled:
			return nextup.Errorf(nextup.ErrConflict, nextup.CodeOfferWithdrawn, "this offer was withdrawn")
		case nextup.OfferExpired:
			return nextup.Errorf(nextup.ErrConflict, nextup.CodeOfferExpired, "this offer expired")
		}
		var move engine.RequeueMove
		out, move, err = w.LapseOffer(ctx, o, nextup.OfferDeclined, "declined")
		moves = w.Moves
		if err != nil {
			return err
		}
		bi, err := w.Business(ctx, o.BusinessID)
		if err != nil {
			return err
		}
		return w.queueLapsed(ctx, bi, out, move)
	})
	return out, moves, err
}

// Withdraw is staff taking an offer back: it is cancelled, the person goes
// back to waiting (never offered this slot again) and the slot rolls on.
func (s *Offers) Withdraw(ctx context.Context, businessID, offerID string) (nextup.Offer, []nextup.Move, error) {
	var out nextup.Offer
	var moves []nextup.Move
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorStaff
		o, err := w.Tx.OfferGet(ctx, offerID)
		if err != nil || (businessID != "" && o.BusinessID != businessID) {
			return core.NotFound("offer", offerID, err)
		}
		if !o.State.Live() {
			return nextup.Errorf(nextup.ErrConflict, nextup.CodeOfferNotLive, "offer is %s", o.State)
		}
		out, err = w.EndOffer(ctx, o, nextup.OfferCancelled, "withdrawn", nextup.EntryWaiting)
		moves = w.Moves
		return err
	})
	return out, moves, err
}

// GetOffer returns an offer of a business.
func (s *Offers) GetOffer(ctx context.Context, businessID, offerID string) (nextup.Offer, error) {
	var o nextup.Offer
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		o, err = tx.OfferGet(ctx, offerID)
		if err != nil || (businessID != "" && o.BusinessID != businessID) {
			return core.NotFound("offer", offerID, err)
		}
		return nil
	})
	return o, err
}

// markPaid records, in the claim's transaction, that its payment arrived.
func (w *work) markPaid(ctx context.Context, bi *core.Biz, o nextup.Offer, pay *paymentMark) error {
	p, err := w.Tx.PaymentSetState(ctx, pay.p.ID, nextup.PaymentChange{From: []nextup.PaymentState{nextup.PaymentOpen, nextup.PaymentExpired},
		To: nextup.PaymentPaid, PaymentIntent: pay.intent, At: w.Now})
	if err != nil {
		return fmt.Errorf("record payment %s: %w", pay.p.ID, err)
	}
	return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectOffer, SubjectID: o.ID, SlotID: o.SlotID,
		From: string(nextup.OfferClaimed), To: string(nextup.OfferClaimed), Reason: "paid",
		Detail: map[string]any{"payment_id": p.ID, "payment_intent": pay.intent, "amount_cents": p.AmountCents, "currency": p.Currency}})
}

// ClaimByHash is Claim by the hash of the offer's token, as an offer row
// keeps it: a YES texted back claims so (package messages).
func ClaimByHash(ctx context.Context, s *Offers, hash string) (ClaimResult, error) {
	return s.claimByHash(ctx, hash, nil)
}

// ClaimPaid is the claim a completed payment makes (package payments):
// the same conditional write, with the payment recorded as paid in the
// same transaction.
func ClaimPaid(ctx context.Context, s *Offers, hash string, p nextup.Payment, intent string) (ClaimResult, error) {
	return s.claimPaid(ctx, hash, p, intent)
}
