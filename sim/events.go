package sim

import (
	"fmt"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
	"github.com/nextup-dev/nextup/waitlist"
)

// Event registrations (waitlist/events): events made with CreateEvent
// and their own settings, registrations confirmed at once or waitlisted,
// cancellations before and after the cutoff, the organiser's override,
// capacity changes, check-ins and no-shows. The model predicts each
// outcome from the rules at the top of events.go; the ordinary checks
// (seats, offers, fair order, audit, timers) then run over what they did.

// ---------------------------------------------------------------- events

func (w *world) opCreateEventRSVP() bool {
	b := w.bizWithRoom()
	if b == nil {
		return false
	}
	now := w.clock.Now()
	start := w.slotStart()
	if w.chance(0.4) {
		start = now.Add(w.between(24*time.Hour, 5*24*time.Hour)).Truncate(15 * time.Minute).Add(15 * time.Minute)
	}
	p := waitlist.NewEventParams()
	p.Title = fmt.Sprintf("RSVP %d", len(b.slotIDs)+1)
	p.StartsAt, p.EndsAt = start, start.Add(2*time.Hour)
	p.Capacity = 1 + w.intn(8)
	p.Settings.MaxGuests = w.intn(3)
	if w.chance(0.3) {
		n := w.intn(4)
		p.Settings.WaitlistLimit = &n
	}
	if w.chance(0.4) {
		p.Settings.PromotionCutoff = time.Duration(1+w.intn(3)) * 24 * time.Hour
	}
	if w.chance(0.3) {
		t := start.Add(-w.between(0, 3*24*time.Hour))
		p.Settings.RegistrationCutoff = &t
	}
	if w.chance(0.3) {
		t := start.Add(-w.between(0, 3*24*time.Hour))
		p.Settings.CancellationCutoff = &t
	}
	if w.chance(0.3) {
		q := pick(w, []nextup.Requeue{{Policy: nextup.RequeueKeep}, {Policy: nextup.RequeueBack}, {Policy: nextup.RequeueDrop, DropAfter: 1},
			{Policy: nextup.RequeueBack, DropAfter: 3}})
		p.Settings.Requeue = &q
	}
	var want []string
	if bad := w.chance(0.03); bad {
		p.Settings.MaxGuests = -1
		want = []string{nextup.CodeValidation}
	}
	var sl nextup.Slot
	err := w.invoke(func() error {
		var err error
		sl, err = w.svc.CreateEvent(w.ctx, b.id, p)
		return err
	})
	w.note("%s cap=%d guests<=%d limit=%s promo=%s reg=%s cancel=%s requeue=%s start=%s", b.id, p.Capacity, p.Settings.MaxGuests, intp(p.Settings.WaitlistLimit),
		p.Settings.PromotionCutoff, timep(p.Settings.RegistrationCutoff), timep(p.Settings.CancellationCutoff), js(p.Settings.Requeue), start.Format(time.RFC3339))
	if !w.outcome("create event", err, want...) {
		return true
	}
	if sl.ID == "" || sl.Kind != nextup.KindEvent || sl.Seating != nextup.SeatingShared || sl.Capacity != p.Capacity || sl.BookedSeats != 0 ||
		!sl.StartsAt.Equal(start) || sl.Event == nil || !sameEvent(*sl.Event, p.Settings) {
		w.fail("check model: created event %s is %s, asked for %s", sl.ID, js(sl), js(p))
	}
	w.m.slots[sl.ID] = &mSlot{id: sl.ID, event: sl.Event, biz: b.id, kind: nextup.KindEvent, start: start, end: p.EndsAt,
		capacity: p.Capacity, seating: nextup.SeatingShared, minParty: 1}
	b.slotIDs = append(b.slotIDs, sl.ID)
	w.note("→ %s", sl.ID)
	return true
}

func sameEvent(a, b nextup.EventSettings) bool {
	return js(a) == js(b)
}

func intp(p *int) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

func timep(p *time.Time) string {
	if p == nil {
		return "-"
	}
	return fmtT(*p)
}

// pickEvent draws an event (of either making), a future one most often.
func (w *world) pickEvent() (nextup.Slot, bool) {
	sl, ok := w.pickSlot(func(s nextup.Slot) bool { return s.Kind == nextup.KindEvent && w.future(s) })
	if !ok || w.chance(0.05) {
		return w.pickSlot(func(s nextup.Slot) bool { return s.Kind == nextup.KindEvent })
	}
	return sl, ok
}

// regState is a registration's state by the model's reading of the
// snapshot: its entry's state, and for a booked one its booking's.
func (w *world) regState(e nextup.Entry) string {
	if e.State == nextup.EntryLeft {
		// A registration whose booking ended left with it: a no-show
		// stays one.
		if b, ok := w.bookingOf(e); ok && b.State == nextup.BookingNoShow {
			return waitlist.RegNoShow
		}
	}
	if e.State != nextup.EntryBooked {
		switch e.State {
		case nextup.EntryWaiting:
			return waitlist.RegWaitlisted
		case nextup.EntryOffered:
			return waitlist.RegOffered
		case nextup.EntryExpired:
			return waitlist.RegExpired
		}
		return waitlist.RegCancelled
	}
	b, ok := w.bookingOf(e)
	switch {
	case ok && b.State == nextup.BookingBooked:
		return waitlist.RegConfirmed
	case ok && b.State == nextup.BookingNoShow:
		return waitlist.RegNoShow
	}
	return waitlist.RegCancelled
}

// bookingOf is a booked entry's booking (an entry is booked once).
func (w *world) bookingOf(e nextup.Entry) (nextup.Booking, bool) {
	for _, b := range w.prev.slotBook[e.EventID] {
		if b.EntryID == e.ID {
			return b, true
		}
	}
	return nextup.Booking{}, false
}

// ---------------------------------------------------------------- register

// registerWant is the model's prediction for a registration of a party of
// party by the person with contact key key: the refusal code ("" none),
// and whether it is confirmed at once.
func (w *world) registerWant(sl nextup.Slot, key string, guests int) (code string, confirm bool) {
	now := w.clock.Now()
	party := 1 + guests
	switch {
	case !now.Before(sl.RegistrationClosesAt()):
		return nextup.CodeRegistrationClosed, false
	case guests > sl.Event.MaxGuests || party > sl.Capacity:
		return nextup.CodeValidation, false
	}
	waiting := 0
	for _, id := range sortedKeys(w.prev.entries) {
		e, me := w.prev.entries[id], w.m.entries[id]
		if me.eventID != sl.ID {
			continue
		}
		if me.key() == key {
			if st := w.regState(e); st == waitlist.RegWaitlisted || st == waitlist.RegOffered || st == waitlist.RegConfirmed {
				return nextup.CodeAlreadyRegistered, false
			}
		}
		if e.State == nextup.EntryWaiting {
			waiting++
		}
	}
	free := sl.FreeSeats()
	confirm = free >= party
	if confirm && !sl.PromotionClosed(now) {
		// Nobody waiting who fits the free seats, was never offered the
		// event and could be offered it now (a channel, under the daily
		// cap) may be passed over.
		ms := w.m.slots[sl.ID]
		for _, id := range sortedKeys(w.prev.entries) {
			e, me := w.prev.entries[id], w.m.entries[id]
			if e.State != nextup.EntryWaiting || me.eventID != sl.ID || me.party > free || !w.m.fitsCriteria(ms, me, now) || w.m.keptFrom(w.prev.slotOffer[sl.ID], me) ||
				w.m.channelFor(me) == "" || !w.m.underCap(w.prev, me, now, 0) {
				continue
			}
			confirm = false
			break
		}
	}
	if !confirm && sl.Event.WaitlistLimit != nil && waiting >= *sl.Event.WaitlistLimit {
		return nextup.CodeWaitlistFull, false
	}
	return "", confirm
}

func (w *world) opRegister() bool { return w.register(false) }

// opRegisterPublic is an RSVP through the public event page, as the page
// makes it once the guest has confirmed their contact: from the form,
// with some guests named, and told by message when it goes to the
// waitlist (their place and their status link).
func (w *world) opRegisterPublic() bool { return w.register(true) }

func (w *world) register(public bool) bool {
	sl, ok := w.pickEvent()
	if !ok || w.activeEntries(sl.BusinessID) >= 30 {
		return false
	}
	b := w.m.biz[sl.BusinessID]
	p := w.person(b)
	if w.chance(0.3) {
		// Someone already on this event's list, to meet already_registered
		// and the re-registration of a cancelled or no-show registrant.
		if e, ok := w.pickEntry(func(e nextup.Entry) bool { return e.EventID == sl.ID }); ok {
			p = w.m.entries[e.ID].person
		}
	}
	guests := w.intn(sl.Event.MaxGuests + 1)
	if w.chance(0.1) {
		guests = sl.Event.MaxGuests + 1 + w.intn(2)
	}
	rp := waitlist.RegisterParams{Name: p.name, Email: p.email, Phone: p.phone, Guests: guests, Source: "sim"}
	switch r := w.intn(10); {
	case public: // the page asks for no channel
	case r < 2 && p.email != "":
		rp.Channel = nextup.ChannelEmail
	case r < 4 && p.phone != "":
		rp.Channel = nextup.ChannelSMS
	}
	if public {
		rp.Source, rp.Notify = "form", true
		if guests <= sl.Event.MaxGuests {
			for i := range w.intn(guests + 1) {
				rp.GuestNames = append(rp.GuestNames, pick(w, []string{"", fmt.Sprintf("Guest %d of %s", i+1, p.name), "Zoë Ó'Brien"}))
			}
		}
	}
	key := contactKey(p.email, p.phone)
	code, confirm := w.registerWant(sl, key, guests)
	var want []string
	if code != "" {
		want = []string{code}
	}
	var r waitlist.Registration
	var moves []nextup.Move
	err := w.invoke(func() error {
		var err error
		r, moves, err = w.svc.Register(w.ctx, sl.BusinessID, sl.ID, rp)
		return err
	})
	w.note("%s %s (%s) guests=%d (max %d) free=%d of %d, want %q confirm=%v", sl.ID, p.name, key, guests, sl.Event.MaxGuests, sl.FreeSeats(), sl.Capacity, code, confirm)
	if !w.outcome("register", err, want...) {
		return true
	}
	e := r.Entry
	if e.ID == "" || e.Seq <= 0 || e.EventID != sl.ID || e.PartySize != 1+guests || !e.JoinedAt.Equal(w.clock.Now()) || e.Priority {
		w.fail("check model: registration is %s, asked for %s", js(e), js(rp))
	}
	switch {
	case confirm && (r.State != waitlist.RegConfirmed || r.Booking == nil || r.Booking.OfferID != "" || r.Booking.Seats != 1+guests ||
		r.Booking.EntryID != e.ID || r.Booking.State != nextup.BookingBooked):
		w.fail("check register: a party of %d for %d free seats with nobody ahead must be confirmed; it is %s (booking %s)", 1+guests, sl.FreeSeats(), r.State, js(r.Booking))
	case !confirm && r.State != waitlist.RegWaitlisted && r.State != waitlist.RegOffered:
		w.fail("check register: a party of %d for %d free seats (someone ahead, or no room) must be waitlisted; it is %s", 1+guests, sl.FreeSeats(), r.State)
	}
	if e.Source != rp.Source || len(r.GuestList) != guests {
		w.fail("check register: registration %s has source %q and %d guests, asked for %q and %d", e.ID, e.Source, len(r.GuestList), rp.Source, guests)
	}
	for i, g := range r.GuestList {
		want := ""
		if i < len(rp.GuestNames) {
			want = rp.GuestNames[i]
		}
		if g.Name != want || g.Index != i+1 {
			w.fail("check register: guest %d of %s is %s, asked for the names %q", i+1, e.ID, js(g), rp.GuestNames)
		}
	}
	w.m.entries[e.ID] = &mEntry{id: e.ID, biz: b.id, person: p, email: p.email, phone: p.phone, channel: rp.Channel, eventID: sl.ID,
		party: 1 + guests, joinedAt: e.JoinedAt, seq: e.Seq, statusTok: r.StatusToken}
	if public {
		w.checkWaitTold(e, r)
	}
	b.entryIDs = append(b.entryIDs, e.ID)
	w.touched[e.ID] = true
	if r.Booking != nil {
		w.m.direct[r.Booking.ID] = e.ID
		w.checkDirectConfirmation(*r.Booking, w.m.entries[e.ID])
	}
	w.note("→ %s seq=%d %s; %s", e.ID, e.Seq, r.State, moveNotes(moves))
	return true
}

// checkWaitTold: a public RSVP that went to the waitlist has one
// waitlist confirmation, to its address, with its status link; one
// confirmed or holding seats has none.
func (w *world) checkWaitTold(e nextup.Entry, r waitlist.Registration) {
	var told []nextup.Message
	err := w.fs.Read(w.ctx, func(tx nextup.Tx) error {
		ms, err := tx.MessageList(w.ctx, nextup.MessageFilter{BusinessID: e.BusinessID})
		for _, m := range ms {
			if m.Kind == waitlist.MessageWaitlisted && m.EntryID == e.ID {
				told = append(told, m)
			}
		}
		return err
	})
	if err != nil {
		w.fail("read messages of %s: %v", e.ID, err)
	}
	if r.State != waitlist.RegWaitlisted {
		if len(told) > 0 {
			w.fail("check 6 messages: registration %s (%s) has waitlist confirmations %s", e.ID, r.State, js(told))
		}
		return
	}
	w.m.waitTold[e.ID] = true
	if len(told) != 1 || (told[0].To != e.Email && told[0].To != e.Phone) || told[0].OfferID != "" || told[0].BookingID != "" ||
		!strings.Contains(told[0].Body, w.svc.StatusURL(r.StatusToken)) {
		w.fail("check 6 messages: waitlisted registration %s from the page has waitlist confirmations %s", e.ID, js(told))
	}
}

// checkDirectConfirmation: a registration confirmed at once has its
// booking's audit row and, when the person can be reached, one
// confirmation by the model's channel.
func (w *world) checkDirectConfirmation(bk nextup.Booking, me *mEntry) {
	rows := w.auditOf(bk.BusinessID, nextup.SubjectBooking, bk.ID)
	if len(rows) != 1 || rows[0].To != string(nextup.BookingBooked) || rows[0].Reason != "registered" {
		w.fail("check 5 audit: directly confirmed booking %s has audit rows %s", bk.ID, rowsString(rows))
	}
	var confirms []nextup.Message
	err := w.fs.Read(w.ctx, func(tx nextup.Tx) error {
		ms, err := tx.MessageList(w.ctx, nextup.MessageFilter{BusinessID: bk.BusinessID})
		for _, m := range ms {
			if m.Kind == nextup.MessageConfirmation && m.EntryID == me.id {
				confirms = append(confirms, m)
			}
		}
		return err
	})
	if err != nil {
		w.fail("read messages of %s: %v", me.id, err)
	}
	ch := w.m.channelFor(me)
	if (ch == "") != (len(confirms) == 0) || len(confirms) > 1 || (len(confirms) == 1 && (confirms[0].Channel != ch || confirms[0].BookingID != bk.ID || confirms[0].OfferID != "")) {
		w.fail("check 6 messages: directly confirmed booking %s (channel %q) has confirmations %s", bk.ID, ch, js(confirms))
	}
}

// ---------------------------------------------------------------- cancel

// pickRegistration draws an entry of an event, one in a state keep likes
// most often.
func (w *world) pickRegistration(keep func(nextup.Entry) bool) (nextup.Entry, bool) {
	e, ok := w.pickEntry(func(e nextup.Entry) bool { return e.EventID != "" && keep(e) })
	if !ok || w.chance(0.1) {
		return w.pickEntry(func(e nextup.Entry) bool { return e.EventID != "" })
	}
	return e, ok
}

func (w *world) opCancelRegistration() bool {
	e, ok := w.pickRegistration(func(e nextup.Entry) bool { return e.Active() || w.regState(e) == waitlist.RegConfirmed })
	if !ok {
		return false
	}
	sl := w.prev.slots[e.EventID]
	st := w.regState(e)
	now := w.clock.Now()
	var want []string
	switch st {
	case waitlist.RegConfirmed:
		if !now.Before(sl.CancellationClosesAt()) {
			want = []string{nextup.CodeCancellationClosed}
		}
	case waitlist.RegWaitlisted, waitlist.RegOffered:
	default:
		w.unchanged = true // nothing left to cancel
	}
	w.touched[e.ID] = true
	actor := pick(w, []string{nextup.ActorStaff, nextup.ActorCustomer})
	var r waitlist.Registration
	var moves []nextup.Move
	// The person cancels by the API's door or from their status page
	// (the same rules, through the same steps).
	byStatus := actor == nextup.ActorCustomer && w.m.entries[e.ID].statusTok != "" && w.chance(0.5)
	err := w.invoke(func() error {
		var err error
		if byStatus {
			r, err = w.svc.CancelByStatus(w.ctx, w.m.entries[e.ID].statusTok)
			return err
		}
		r, moves, err = w.svc.CancelRegistration(w.ctx, e.BusinessID, e.EventID, e.ID, actor)
		return err
	})
	w.note("%s of %s (%s) cancellation closes %s; by status page=%v", e.ID, e.EventID, st, fmtT(sl.CancellationClosesAt()), byStatus)
	if !w.outcome("cancel registration", err, want...) {
		return true
	}
	wantState := waitlist.RegCancelled
	switch st {
	case waitlist.RegNoShow, waitlist.RegExpired:
		wantState = st
	case waitlist.RegConfirmed:
		w.freed[sl.ID] = true
	}
	if r.State != wantState || r.Entry.ID != e.ID {
		w.fail("check model: cancelled registration %s (%s) is %s, want %s", e.ID, st, r.State, wantState)
	}
	w.note("%s", moveNotes(moves))
	return true
}

// ---------------------------------------------------------------- promote

func (w *world) opPromote() bool {
	e, ok := w.pickRegistration(func(e nextup.Entry) bool { return e.State == nextup.EntryWaiting })
	if !ok {
		return false
	}
	sl, ms, me := w.prev.slots[e.EventID], w.m.slots[e.EventID], w.m.entries[e.ID]
	b := w.m.biz[ms.biz]
	now := w.clock.Now()
	reason := pick(w, []string{"board member", "speaker's guest", "asked nicely"})
	if w.chance(0.05) {
		reason = " "
	}
	var want []string
	offer := false
	switch {
	case reason == " ":
		want = []string{nextup.CodeValidation}
	case e.State != nextup.EntryWaiting:
		want = []string{"not_waitlisted"}
	case sl.FreeSeats() >= e.PartySize && now.Before(sl.StartsAt):
		if w.m.channelFor(me) == "" {
			want = []string{nextup.CodeValidation}
		} else if _, _, _, ok := engine.OfferWindow(now, ms.start, b.rulesFor(ms), b.loc); !ok {
			want = []string{nextup.CodeRegistrationClosed}
		} else {
			offer = true
		}
	}
	w.touched[e.ID] = true
	var r waitlist.Registration
	var moves []nextup.Move
	err := w.invoke(func() error {
		var err error
		r, moves, err = w.svc.Promote(w.ctx, e.BusinessID, e.EventID, e.ID, "staff", reason)
		return err
	})
	w.note("%s of %s (%s, party %d) free=%d reason=%q", e.ID, e.EventID, e.State, e.PartySize, sl.FreeSeats(), reason)
	if !w.outcome("promote", err, want...) {
		return true
	}
	if offer {
		if r.State != waitlist.RegOffered || r.Offer == nil || r.Offer.Seats != e.PartySize {
			w.fail("check promote: %s had %d free seats for a party of %d and is %s (offer %s), want offered", e.ID, sl.FreeSeats(), e.PartySize, r.State, js(r.Offer))
		}
	} else {
		if r.State != waitlist.RegWaitlisted || !r.Entry.Priority {
			w.fail("check promote: %s (no seats for it now) is %s with priority %v, want waitlisted first in line", e.ID, r.State, r.Entry.Priority)
		}
		me.priority = true
	}
	rows := w.auditOf(e.BusinessID, nextup.SubjectEntry, e.ID)
	if last := rows[len(rows)-1]; last.Reason != "override" || last.SlotID != sl.ID {
		w.fail("check 5 audit: promotion of %s wrote no override row: %s", e.ID, rowsString(rows))
	}
	w.note("→ %s; %s", r.State, moveNotes(moves))
	return true
}

// ---------------------------------------------------------------- resize

func (w *world) opResizeEvent() bool {
	sl, ok := w.pickSlot(func(s nextup.Slot) bool { return s.Kind == nextup.KindEvent && w.future(s) })
	if !ok {
		return false
	}
	c := sl.Capacity + 1 + w.intn(3)
	if w.chance(0.5) {
		c = max(1, sl.Capacity-1-w.intn(3))
		if c == sl.Capacity {
			c++
		}
	}
	var want []string
	if c < sl.BookedSeats+sl.HeldSeats {
		want = []string{nextup.CodeCapacityBelowTaken}
	}
	p := waitlist.EventParamsOf(sl)
	p.Capacity = c
	var out nextup.Slot
	var moves []nextup.Move
	err := w.invoke(func() error {
		var err error
		out, moves, err = w.svc.UpdateEvent(w.ctx, sl.BusinessID, sl.ID, p)
		return err
	})
	w.note("%s cap %d→%d booked=%d held=%d", sl.ID, sl.Capacity, c, sl.BookedSeats, sl.HeldSeats)
	if !w.outcome("update event", err, want...) {
		return true
	}
	if out.Capacity != c {
		w.fail("check model: updated event %s has capacity %d, want %d", sl.ID, out.Capacity, c)
	}
	w.m.slots[sl.ID].capacity = c
	if c > sl.Capacity {
		w.freed[sl.ID] = true
	}
	w.note("%s", moveNotes(moves))
	return true
}

// ---------------------------------------------------------------- at the door

func (w *world) opCheckIn() bool {
	e, ok := w.pickRegistration(func(e nextup.Entry) bool { return w.regState(e) == waitlist.RegConfirmed })
	if !ok {
		return false
	}
	st := w.regState(e)
	var want []string
	if st != waitlist.RegConfirmed {
		want = []string{"not_confirmed"}
	}
	bk, _ := w.bookingOf(e)
	undo := bk.CheckedInAt != nil && w.chance(0.5)
	var r waitlist.Registration
	err := w.invoke(func() error {
		var err error
		r, err = w.svc.CheckIn(w.ctx, e.BusinessID, e.EventID, e.ID, undo)
		return err
	})
	w.note("%s of %s (%s) undo=%v", e.ID, e.EventID, st, undo)
	w.rebook[e.EventID] = true
	if !w.outcome("check in", err, want...) {
		return true
	}
	if r.Booking == nil || r.Booking.ID != bk.ID || r.Booking.State != nextup.BookingBooked || (r.Booking.CheckedInAt == nil) != undo ||
		(!undo && !r.Booking.CheckedInAt.Equal(w.clock.Now())) {
		w.fail("check model: checked in (undo=%v) registration %s has booking %s", undo, e.ID, js(r.Booking))
	}
	return true
}

func (w *world) opEventNoShow() bool {
	e, ok := w.pickRegistration(func(e nextup.Entry) bool { return w.regState(e) == waitlist.RegConfirmed })
	if !ok {
		return false
	}
	st := w.regState(e)
	var want []string
	if st != waitlist.RegConfirmed {
		want = []string{"not_confirmed"}
	}
	var r waitlist.Registration
	var moves []nextup.Move
	err := w.invoke(func() error {
		var err error
		r, moves, err = w.svc.MarkNoShow(w.ctx, e.BusinessID, e.EventID, e.ID)
		return err
	})
	w.note("%s of %s (%s)", e.ID, e.EventID, st)
	if !w.outcome("mark no-show", err, want...) {
		return true
	}
	if r.State != waitlist.RegNoShow || r.Booking == nil || r.Booking.State != nextup.BookingNoShow {
		w.fail("check model: registration %s marked a no-show is %s (booking %s)", e.ID, r.State, js(r.Booking))
	}
	w.freed[e.EventID] = true
	w.note("%s", moveNotes(moves))
	return true
}
