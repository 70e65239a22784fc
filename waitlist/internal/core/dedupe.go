package core

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

// MessageDeduped is the kind of the message telling a person a booking
// took them off another list.
const MessageDeduped = "deduped"

// ReasonDeduped is the audit reason of an entry a booking withdrew.
const ReasonDeduped = "deduped"

// Dedupe withdraws the other active entries of the person behind booked,
// who has just booked slot sl, that the booking makes pointless under the
// business's rules (Rules.Dedupe): with same_service, their entries for
// the same service whose dates take in the slot's day; with all, every
// other entry of theirs. A waiting entry leaves the list; one holding an
// offer has it withdrawn (the slot rolls on). Each is audited with the
// booking that made it pointless, and the person is told, outside quiet
// hours.
//
// On a bounded store (DynamoDB's 100 items a transaction) a person with
// many lists could need more writes than the booking's transaction has
// room for: Dedupe withdraws what fits and leaves the rest to a dedupe
// timer, due at once, that runs it again in a transaction of its own
// (DedupeTimer); what was withdrawn already is no longer active, so each
// entry goes once.
func (w *Work) Dedupe(ctx context.Context, bi *Biz, booked nextup.Entry, sl nextup.Slot) error {
	mode := bi.Rules.Dedupe
	if mode != nextup.DedupeSameService && mode != nextup.DedupeAll {
		return nil
	}
	others, err := w.Tx.EntryActiveListByContact(ctx, booked.BusinessID, booked.ContactKey(), 0)
	if err != nil {
		return fmt.Errorf("entries of %s: %w", booked.ContactKey(), err)
	}
	for _, x := range others {
		if x.ID == booked.ID || (mode == nextup.DedupeSameService && !Pointless(x, sl, bi)) {
			continue
		}
		if w.Room(dedupeWrites) == 0 {
			return w.Schedule(ctx, nextup.Timer{BusinessID: bi.ID, Kind: nextup.TimerDedupe, SubjectID: dedupeSubject(booked, sl),
				Key: nextup.TimerDedupe + ":" + sl.ID + ":" + booked.ContactKey(), DueAt: w.Now})
		}
		detail := map[string]any{"booked_entry_id": booked.ID, "booked_slot_id": sl.ID, "dedupe": mode}
		switch x.State {
		case nextup.EntryOffered:
			o, err := w.Tx.OfferLiveByEntry(ctx, x.ID)
			if err != nil {
				return fmt.Errorf("live offer of entry %s: %w", x.ID, err)
			}
			// Its entry row says deduped; the offer's slot rolls on.
			if _, err := w.EndOffer(ctx, o, nextup.OfferCancelled, ReasonDeduped, nextup.EntryLeft); err != nil {
				return err
			}
		case nextup.EntryWaiting:
			if err := w.Tx.EntrySetState(ctx, x.ID, []nextup.EntryState{nextup.EntryWaiting}, nextup.EntryLeft, w.Now); err != nil {
				return fmt.Errorf("withdraw entry %s: %w", x.ID, err)
			}
			if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectEntry, SubjectID: x.ID, SlotID: sl.ID,
				From: string(nextup.EntryWaiting), To: string(nextup.EntryLeft), Reason: ReasonDeduped, Detail: detail}); err != nil {
				return err
			}
		default:
			continue
		}
		if err := w.queueDeduped(ctx, bi, x, sl); err != nil {
			return err
		}
	}
	return nil
}

// dedupeWrites bounds what withdrawing one entry writes: for an entry
// holding an offer, the offer, its seats, three timers, its messages, the
// entry, two audit rows and the slot's roll-on (a new offer with its
// message, timers and audit rows), with the person's notice.
const dedupeWrites = 25

// dedupeSubject names, in a dedupe timer, the booking's slot and the
// person behind it (the entry booked, if any, and their addresses).
func dedupeSubject(booked nextup.Entry, sl nextup.Slot) string {
	return url.Values{"slot": {sl.ID}, "entry": {booked.ID}, "email": {booked.Email}, "phone": {booked.Phone}}.Encode()
}

// DedupeTimer withdraws, in w, the rest of what a booking made pointless
// (a dedupe timer's subject): Dedupe again, which leaves the rest to
// another timer if there is still more than w takes.
func (w *Work) DedupeTimer(ctx context.Context, subject string) error {
	v, err := url.ParseQuery(subject)
	if err != nil {
		return fmt.Errorf("dedupe timer subject %q: %w", subject, err)
	}
	sl, err := w.Tx.SlotGet(ctx, v.Get("slot"))
	if err != nil {
		return fmt.Errorf("slot of dedupe timer: %w", err)
	}
	bi, err := w.Business(ctx, sl.BusinessID)
	if err != nil {
		return err
	}
	return w.Dedupe(ctx, bi, nextup.Entry{ID: v.Get("entry"), BusinessID: sl.BusinessID, Email: v.Get("email"), Phone: v.Get("phone")}, sl)
}

// Pointless reports whether booking slot sl makes entry x pointless under
// same_service: x waits for sl's service (not an event), and its dates,
// if it has any, take in sl's day in the business's timezone.
func Pointless(x nextup.Entry, sl nextup.Slot, bi *Biz) bool {
	if x.EventID != "" || sl.Kind == nextup.KindEvent || x.Service != sl.Service {
		return false
	}
	day := engine.DayStart(sl.StartsAt, bi.Loc)
	next := engine.DayStart(day.Add(36*time.Hour), bi.Loc) // the next local midnight, across a clock change
	return (x.Earliest.IsZero() || x.Earliest.Before(next)) && (x.Latest.IsZero() || !x.Latest.Before(day))
}

func (w *Work) queueDeduped(ctx context.Context, bi *Biz, x nextup.Entry, sl nextup.Slot) error {
	ch, err := w.ChannelFor(ctx, x)
	if err != nil || ch == "" {
		return err
	}
	m := nextup.Message{BusinessID: bi.ID, Kind: MessageDeduped, Channel: ch, To: templates.AddressOf(x, ch), EntryID: x.ID, NotBefore: w.NotBefore(bi)}
	if m.To == "" {
		return nil
	}
	d := templates.SlotData(bi.Loc, sl, x, x.PartySize)
	d.Other = x.Service
	if x.EventID != "" {
		if ev, err := w.Tx.SlotGet(ctx, x.EventID); err == nil {
			d.Other = templates.SlotService(ev)
		}
	}
	w.s.Stoppable(bi.Business, &m)
	templates.Compose(bi.Business, templates.TemplateDeduped, d, &m)
	return w.Queue(ctx, m)
}
