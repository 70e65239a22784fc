package waitlist_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
)

// requeueBundle is setup without quiet hours, so that every offer goes at
// once and a claim window is simply its length.
func requeueBundle(t *testing.T, rules func(*nextup.Rules)) *bundle {
	t.Helper()
	return setup(t, func(r *nextup.Rules) {
		r.QuietHours = nil
		if rules != nil {
			rules(r)
		}
	})
}

// notices are the messages of kind to entryID, oldest first.
func (b *bundle) notices(t *testing.T, kind, entryID string) []nextup.Message {
	t.Helper()
	var out []nextup.Message
	err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		ms, err := tx.MessageList(b.ctx, nextup.MessageFilter{BusinessID: b.biz.ID})
		for _, m := range ms {
			if m.Kind == kind && m.EntryID == entryID {
				out = append(out, m)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(out) // MessageList is newest first
	return out
}

// entryRow is the audit row of entryID's lapse of offerID.
func (b *bundle) entryRow(t *testing.T, slotID, entryID, offerID string) nextup.AuditEvent {
	t.Helper()
	rows, err := b.svc.SlotAudit(b.ctx, b.biz.ID, slotID)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.SubjectType == nextup.SubjectEntry && r.SubjectID == entryID && r.From == string(nextup.EntryOffered) && r.Detail["offer_id"] == offerID {
			return r
		}
	}
	t.Fatalf("no audit row of entry %s for offer %s", entryID, offerID)
	return nextup.AuditEvent{}
}

// An event's default re-queue rule, on the fake clock: three people wait
// for a full event. The first lets her hold lapse and goes to the back;
// the second declines and goes to the back too; the third lets his lapse;
// so the first is offered the seat again after the others, lets it lapse
// a second time and is taken off the waitlist, told how to join again.
// Positions follow every move; every move is audited with the rule and
// its version.
func TestEventRequeueBackThenDropped(t *testing.T) {
	t.Parallel()
	b := requeueBundle(t, nil)
	slug := "salon"
	if _, err := b.svc.UpdateProfile(b.ctx, b.biz.ID, waitlist.ProfilePatch{Slug: &slug}); err != nil {
		t.Fatal(err)
	}
	p := waitlist.NewEventParams()
	p.Title, p.StartsAt, p.EndsAt, p.Capacity = "Wine tasting", b.at(10, 19, 0), b.at(10, 22, 0), 1
	p.Settings.ClaimWindow = time.Hour
	ev, err := b.svc.CreateEvent(b.ctx, b.biz.ID, p)
	if err != nil {
		t.Fatal(err)
	}
	register := func(name string) waitlist.Registration {
		t.Helper()
		b.clock.Advance(time.Second)
		r, _, err := b.svc.Register(b.ctx, b.biz.ID, ev.ID, waitlist.RegisterParams{Name: name, Email: strings.ToLower(name) + "@example.com"})
		if err != nil {
			t.Fatalf("register %s: %v", name, err)
		}
		return r
	}
	xia := register("Xia") // has the one seat
	ann, bob, cat := register("Ann"), register("Bob"), register("Cat")
	order := func(when string, want ...waitlist.Registration) {
		t.Helper()
		regs, err := b.svc.EventWaitlist(b.ctx, b.biz.ID, ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		var got, wantIDs []string
		for _, r := range regs {
			if r.State == waitlist.RegWaitlisted {
				got = append(got, r.Entry.Name)
			}
		}
		for i, r := range want {
			wantIDs = append(wantIDs, r.Entry.Name)
			if v := b.entry(t, r.Entry.ID); v.Position != i+1 {
				t.Errorf("%s: %s is at position %d, want %d", when, r.Entry.Name, v.Position, i+1)
			}
		}
		if !slices.Equal(got, wantIDs) {
			t.Errorf("%s: the waitlist is %v, want %v", when, got, wantIDs)
		}
	}
	order("at first", ann, bob, cat)
	offerOf := func(r waitlist.Registration) *nextup.Offer {
		t.Helper()
		return b.entry(t, r.Entry.ID).Offer
	}

	// Xia cancels: the seat is held for Ann.
	if _, _, err := b.svc.CancelRegistration(b.ctx, b.biz.ID, ev.ID, xia.Entry.ID, nextup.ActorCustomer); err != nil {
		t.Fatal(err)
	}
	first := offerOf(ann)
	if first == nil {
		t.Fatal("Ann was not offered the freed seat")
	}
	order("while Ann holds the seat", bob, cat)

	// Ann's hour passes: to the back of the line; the seat goes to Bob.
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, time.Hour); err != nil {
		t.Fatal(err)
	}
	if v := b.entry(t, ann.Entry.ID); v.Entry.State != nextup.EntryWaiting || v.Entry.Lapses != 1 || !v.Entry.JoinedAt.Equal(*b.getOffer(t, first.ID).ResolvedAt) {
		t.Fatalf("Ann after her lapse = %+v, want waiting with 1 lapse, joined when it lapsed", v.Entry)
	}
	if offerOf(bob) == nil {
		t.Fatal("the seat did not roll on to Bob")
	}
	order("after Ann's lapse", cat, ann)
	row := b.entryRow(t, ev.ID, ann.Entry.ID, first.ID)
	if row.Reason != "requeued_back" || row.To != string(nextup.EntryWaiting) || row.RuleVersion != b.biz.Rules.Version ||
		row.Detail["lapses"] != float64(1) || row.Detail["offer_reason"] != "claim_window_ended" {
		t.Fatalf("Ann's audit row = %+v, want requeued_back with the count and the rule version", row)
	}
	if rq, _ := row.Detail["requeue"].(map[string]any); rq["policy"] != "back" || rq["drop_after"] != float64(2) {
		t.Fatalf("Ann's audit row names the rule %v, want back, dropped after 2", row.Detail["requeue"])
	}
	told := b.notices(t, waitlist.MessageRequeued, ann.Entry.ID)
	if len(told) != 1 || !strings.Contains(told[0].Body, "at the back of it now") || !strings.Contains(told[0].Body, "ran out") ||
		!strings.Contains(told[0].Body, "If the next one isn't taken up either, you'll be taken off the list.") {
		t.Fatalf("Ann was told %+v, want one message that she is at the back and the next miss takes her off", told)
	}
	if n := len(b.notices(t, waitlist.MessageExpired, ann.Entry.ID)); n != 0 {
		t.Fatalf("Ann also got %d 'you keep your place' notices", n)
	}

	// Bob declines: to the back too (a decline counts as a lapse).
	second := offerOf(bob)
	if _, _, err := b.svc.Decline(b.ctx, b.token(t, second.ID)); err != nil {
		t.Fatal(err)
	}
	order("after Bob's decline", ann, bob)
	if told := b.notices(t, waitlist.MessageRequeued, bob.Entry.ID); len(told) != 1 || !strings.Contains(told[0].Body, "You declined Wine tasting") {
		t.Fatalf("Bob was told %+v, want that he declined and is at the back", told)
	}

	// Cat lets hers lapse: Ann, now first again, is offered the seat.
	third := offerOf(cat)
	if third == nil {
		t.Fatal("the seat did not roll on to Cat")
	}
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, time.Hour); err != nil {
		t.Fatal(err)
	}
	again := offerOf(ann)
	if again == nil || again.ID == first.ID {
		t.Fatalf("Ann was not offered the seat again after the others (offer %+v)", again)
	}
	order("while Ann holds it again", bob, cat)

	// Her second lapse takes her off the waitlist; she is told how to
	// join again, and the seat goes to Bob.
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, time.Hour); err != nil {
		t.Fatal(err)
	}
	if v := b.entry(t, ann.Entry.ID); v.Entry.State != nextup.EntryLeft || v.Entry.Lapses != 2 || v.Position != 0 {
		t.Fatalf("Ann after her second lapse = %+v (position %d), want left with 2 lapses", v.Entry, v.Position)
	}
	if row := b.entryRow(t, ev.ID, ann.Entry.ID, again.ID); row.Reason != "dropped_after_lapses" || row.To != string(nextup.EntryLeft) || row.Detail["lapses"] != float64(2) {
		t.Fatalf("Ann's second audit row = %+v, want dropped_after_lapses into left", row)
	}
	dropped := b.notices(t, waitlist.MessageDropped, ann.Entry.ID)
	if len(dropped) != 1 || !strings.Contains(dropped[0].Body, "That's 2 offers not taken up") ||
		!strings.Contains(dropped[0].Body, "https://nextup.test/e/salon/"+ev.ID) || !strings.Contains(dropped[0].Subject, "no longer on the Wine tasting waitlist") {
		t.Fatalf("Ann was told %+v, want that she is off the list and the event page's link to join again", dropped)
	}
	if offerOf(bob) == nil {
		t.Fatal("the seat did not roll on to Bob after Ann was dropped")
	}
	order("after Ann was dropped", cat)

	// She may register again, at the back.
	back := register("Ann")
	if back.State != waitlist.RegWaitlisted || back.Entry.ID == ann.Entry.ID || back.Position != 2 {
		t.Fatalf("Ann registering again = %+v, want a new waitlisted registration behind Cat", back)
	}
}

// The business's rule for slots: keep (the default) counts lapses and
// keeps the place; keep with drop_after warns, then drops; drop after 1
// drops at once. An offer staff withdraw counts for nothing.
func TestSlotRequeueRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		rule    nextup.Requeue
		decline bool
		state   nextup.EntryState
		pos     int    // Ann's position after the lapse (0: not waiting)
		kind    string // the notice she gets ("" for none)
		says    string
	}{
		{"keep (default): place kept", nextup.DefaultRules().Requeue, false, nextup.EntryWaiting, 1, waitlist.MessageExpired, "You keep your place"},
		{"keep: a decline is not told", nextup.DefaultRules().Requeue, true, nextup.EntryWaiting, 1, "", ""},
		{"keep, off after 3: warned", nextup.Requeue{Policy: nextup.RequeueKeep, DropAfter: 3}, false, nextup.EntryWaiting, 1,
			waitlist.MessageExpired, "After 2 more that aren't taken up, you'll be taken off the list."},
		{"back: behind Cy", nextup.Requeue{Policy: nextup.RequeueBack}, true, nextup.EntryWaiting, 2, waitlist.MessageRequeued, "at the back of it now"},
		{"drop after 1: off at once", nextup.Requeue{Policy: nextup.RequeueDrop, DropAfter: 1}, false, nextup.EntryLeft, 0,
			waitlist.MessageDropped, "join again: https://nextup.test/b/salon/join"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := requeueBundle(t, func(r *nextup.Rules) { r.Requeue = tt.rule })
			slug := "salon"
			if _, err := b.svc.UpdateProfile(b.ctx, b.biz.ID, waitlist.ProfilePatch{Slug: &slug}); err != nil {
				t.Fatal(err)
			}
			sl := b.slot(t, waitlist.SlotParams{})
			ann := b.join(t, "Ann", waitlist.JoinParams{})
			b.join(t, "Bob", waitlist.JoinParams{}) // offered the slot when Ann lets it go
			b.join(t, "Cy", waitlist.JoinParams{})
			_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, "")
			if err != nil {
				t.Fatal(err)
			}
			o := onlyMove(t, moves, nextup.MoveOffer)
			if tt.decline {
				_, _, err = b.svc.Decline(b.ctx, b.token(t, o.OfferID))
			} else {
				err = timer.Advance(b.ctx, b.clock, b.sweeper, 10*time.Minute)
			}
			if err != nil {
				t.Fatal(err)
			}
			v := b.entry(t, ann.ID)
			if v.Entry.State != tt.state || v.Position != tt.pos || v.Entry.Lapses != 1 {
				t.Fatalf("Ann = %s at %d with %d lapses, want %s at %d with 1", v.Entry.State, v.Position, v.Entry.Lapses, tt.state, tt.pos)
			}
			var got []nextup.Message
			for _, kind := range []string{waitlist.MessageExpired, waitlist.MessageRequeued, waitlist.MessageDropped} {
				got = append(got, b.notices(t, kind, ann.ID)...)
			}
			switch {
			case tt.kind == "" && len(got) != 0:
				t.Fatalf("Ann was told %+v, want nothing", got)
			case tt.kind != "" && (len(got) != 1 || got[0].Kind != tt.kind || !strings.Contains(got[0].Body, tt.says)):
				t.Fatalf("Ann was told %+v, want one %s saying %q", got, tt.kind, tt.says)
			}
		})
	}
}

// A withdrawal by staff is not the person's lapse: nothing is counted
// and the place is kept whatever the rule.
func TestWithdrawnOfferIsNoLapse(t *testing.T) {
	t.Parallel()
	b := requeueBundle(t, func(r *nextup.Rules) { r.Requeue = nextup.Requeue{Policy: nextup.RequeueDrop, DropAfter: 1} })
	sl := b.slot(t, waitlist.SlotParams{})
	ann := b.join(t, "Ann", waitlist.JoinParams{})
	_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.svc.Withdraw(b.ctx, b.biz.ID, onlyMove(t, moves, nextup.MoveOffer).OfferID); err != nil {
		t.Fatal(err)
	}
	if v := b.entry(t, ann.ID); v.Entry.State != nextup.EntryWaiting || v.Entry.Lapses != 0 || v.Position != 1 {
		t.Fatalf("Ann after a withdrawal = %+v at %d, want waiting, first, no lapse", v.Entry, v.Position)
	}
}

// The rule's validation: a bad policy, a negative drop_after, drop with
// nothing to drop after, or an unknown field is refused and changes
// nothing; a patch of part of the rule keeps the rest; one that changes
// nothing keeps the version.
func TestRequeueRulesPatch(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	for _, patch := range []string{
		`{"requeue":{"policy":"shuffle"}}`,
		`{"requeue":{"policy":"back","drop_after":-1}}`,
		`{"requeue":{"policy":"drop"}}`,
		`{"requeue":{"policy":"back","after":2}}`,
		`{"requeue":"back"}`,
	} {
		if _, err := b.svc.UpdateRules(b.ctx, b.biz.ID, []byte(patch)); !errors.Is(err, nextup.ErrInvalid) || nextup.ErrorCode(err) != nextup.CodeValidation {
			t.Errorf("patch %s: err = %v, want validation_failed", patch, err)
		}
	}
	if got, _ := b.svc.GetBusiness(b.ctx, b.biz.ID); got.Rules.Version != 1 || got.Rules.Requeue != (nextup.Requeue{Policy: nextup.RequeueKeep}) {
		t.Fatalf("after refused patches the rules are v%d %+v, want v1 keep", got.Rules.Version, got.Rules.Requeue)
	}
	r, err := b.svc.UpdateRules(b.ctx, b.biz.ID, []byte(`{"requeue":{"policy":"back","drop_after":3}}`))
	if err != nil || r.Version != 2 || r.Requeue != (nextup.Requeue{Policy: nextup.RequeueBack, DropAfter: 3}) {
		t.Fatalf("patch = %+v, %v; want v2 back after 3", r, err)
	}
	r, err = b.svc.UpdateRules(b.ctx, b.biz.ID, []byte(`{"requeue":{"policy":"drop"}}`))
	if err != nil || r.Version != 3 || r.Requeue != (nextup.Requeue{Policy: nextup.RequeueDrop, DropAfter: 3}) {
		t.Fatalf("patch of the policy alone = %+v, %v; want v3 drop after 3 (drop_after kept)", r, err)
	}
	for _, same := range []string{`{"requeue":{"policy":"drop","drop_after":3}}`, `{"requeue":{}}`, `{}`} {
		if r, err := b.svc.UpdateRules(b.ctx, b.biz.ID, []byte(same)); err != nil || r.Version != 3 {
			t.Errorf("patch %s that changes nothing: v%d, %v; want v3 kept", same, r.Version, err)
		}
	}
}

// An event's own rule overrides the events' default, through the event's
// settings; a bad one is refused.
func TestEventRequeueSetting(t *testing.T) {
	t.Parallel()
	b := requeueBundle(t, nil)
	p := waitlist.NewEventParams()
	p.Title, p.StartsAt, p.EndsAt, p.Capacity = "Talk", b.at(10, 19, 0), b.at(10, 20, 0), 1
	bad := p
	bad.Settings.Requeue = &nextup.Requeue{Policy: nextup.RequeueDrop}
	if _, err := b.svc.CreateEvent(b.ctx, b.biz.ID, bad); nextup.ErrorCode(err) != nextup.CodeValidation {
		t.Fatalf("an event dropping after 0: err = %v, want validation_failed", err)
	}
	p.Settings.Requeue = &nextup.Requeue{Policy: nextup.RequeueKeep}
	ev, err := b.svc.CreateEvent(b.ctx, b.biz.ID, p)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Event.Requeue == nil || *ev.Event.Requeue != *p.Settings.Requeue {
		t.Fatalf("the event's rule = %+v, want keep", ev.Event.Requeue)
	}
	for _, name := range []string{"Xia", "Ann", "Bob"} {
		if _, _, err := b.svc.Register(b.ctx, b.biz.ID, ev.ID, waitlist.RegisterParams{Name: name, Email: strings.ToLower(name) + "@example.com"}); err != nil {
			t.Fatal(err)
		}
	}
	regs, err := b.svc.EventWaitlist(b.ctx, b.biz.ID, ev.ID)
	if err != nil || len(regs) != 2 {
		t.Fatalf("waitlist = %+v, %v", regs, err)
	}
	ann := regs[0]
	up := waitlist.EventParamsOf(ev)
	up.Capacity = 2 // a second seat: Ann is offered it
	if _, _, err := b.svc.UpdateEvent(b.ctx, b.biz.ID, ev.ID, up); err != nil {
		t.Fatal(err)
	}
	o := b.entry(t, ann.Entry.ID).Offer
	if o == nil {
		t.Fatal("Ann was not offered the new seat")
	}
	if _, _, err := b.svc.Decline(b.ctx, b.token(t, o.ID)); err != nil {
		t.Fatal(err)
	}
	if v := b.entry(t, ann.Entry.ID); v.Entry.State == nextup.EntryLeft || v.Entry.Lapses != 1 || !v.Entry.JoinedAt.Equal(ann.Entry.JoinedAt) {
		t.Fatalf("Ann after declining under keep = %+v, want her place kept", v.Entry)
	}
}

func (b *bundle) getOffer(t *testing.T, id string) nextup.Offer {
	t.Helper()
	o, err := b.svc.GetOffer(b.ctx, b.biz.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestClaimWindowLadder: a rules PATCH sets a ladder (10 minutes under 2
// hours, an hour under a day) over a 3-hour window: a slot in 90 minutes
// is offered for 10 minutes, one tomorrow morning for an hour, one next
// week for 3 hours; the ladder is in what customers are told; and a PATCH
// that says it again changes nothing and makes no new version.
func TestClaimWindowLadder(t *testing.T) {
	t.Parallel()
	b := setup(t, func(r *nextup.Rules) { r.QuietHours = nil; r.ClaimWindow = 3 * time.Hour })
	patch := []byte(`{"claim_window_ladder":[{"lead_under_seconds":86400,"window_seconds":3600},{"lead_under_seconds":7200,"window_seconds":600}]}`)
	rules, err := b.svc.UpdateRules(b.ctx, b.biz.ID, patch)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules.ClaimWindowLadder) != 2 || rules.ClaimWindowLadder[0].LeadUnder != 2*time.Hour {
		t.Fatalf("ladder = %+v, want it in order of lead", rules.ClaimWindowLadder)
	}
	if again, err := b.svc.UpdateRules(b.ctx, b.biz.ID, patch); err != nil || again.Version != rules.Version {
		t.Errorf("the same ladder again: version %d → %d (%v)", rules.Version, again.Version, err)
	}
	for _, tc := range []struct {
		service string
		start   time.Time
		window  time.Duration
	}{
		{"haircut", b.clock.Now().Add(90 * time.Minute), 10 * time.Minute},
		{"colour", b.clock.Now().Add(20 * time.Hour), time.Hour},
		{"massage", b.clock.Now().Add(7 * 24 * time.Hour), 3 * time.Hour},
	} {
		b.join(t, "P-"+tc.service, waitlist.JoinParams{Service: tc.service})
		sl := b.slot(t, waitlist.SlotParams{Service: tc.service, StartsAt: tc.start})
		_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, "cancellation")
		if err != nil || len(moves) != 1 {
			t.Fatalf("%s: %+v %v", tc.service, moves, err)
		}
		o := b.getOffer(t, moves[0].OfferID)
		if got := o.ExpiresAt.Sub(o.SendAt); got != tc.window {
			t.Errorf("%s starting in %v: window %v, want %v", tc.service, tc.start.Sub(b.clock.Now()), got, tc.window)
		}
	}
	how := strings.Join(waitlist.HowTheOrderWorks(rules), " ")
	if !strings.Contains(how, "10 minutes for a slot starting in less than 2 hours; 1 hour for a slot starting in less than 24 hours; otherwise 3 hours") {
		t.Errorf("how the order works: %s", how)
	}
	_, err = b.svc.UpdateRules(b.ctx, b.biz.ID, []byte(`{"claim_window_ladder":[{"lead_under_seconds":7200,"window_seconds":10},{"lead_under_seconds":7200,"window_seconds":600}],"follow_up":{"after_share":1.5}}`))
	var fields []string
	var ne *nextup.Error
	if errors.As(err, &ne) {
		for _, f := range ne.Fields {
			fields = append(fields, f.Field)
		}
	}
	if !slices.Contains(fields, "claim_window_ladder[0].window_seconds") || !slices.Contains(fields, "claim_window_ladder[1].lead_under_seconds") || !slices.Contains(fields, "follow_up.after_share") {
		t.Errorf("bad ladder: %v (%v)", fields, err)
	}
}
