package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

func testBusinessRoundTrip(t *testing.T, b *bundle) {
	variants := []struct {
		name string
		mod  func(*nextup.Business)
	}{
		{"default rules", func(*nextup.Business) {}},
		{"no quiet hours, capped tries", func(biz *nextup.Business) {
			biz.Timezone = "Asia/Kolkata"
			biz.Rules = nextup.Rules{
				Version:                  7,
				ClaimWindow:              2 * time.Hour,
				OrderPolicy:              nextup.OrderFCFSPriority,
				QuietHours:               nil,
				TimeCriticalThroughQuiet: true,
				MinLead:                  0,
				MaxOffersPerPersonPerDay: 0,
				MaxOffersPerSlot:         3,
				DownFit:                  true,
				PositionVisibility:       nextup.PositionHidden,
			}
		}},
		{"quiet hours to midnight", func(biz *nextup.Business) {
			biz.Rules.QuietHours = &nextup.QuietHours{Start: 22*60 + 30, End: 24 * 60}
			biz.Rules.MaxOffersPerSlot = 1
			biz.Rules.PositionVisibility = nextup.PositionBand
			biz.Rules.ClaimWindow = 7 * 24 * time.Hour
			biz.Rules.MinLead = 30 * 24 * time.Hour
		}},
		{"quiet hours from midnight", func(biz *nextup.Business) {
			biz.Rules.QuietHours = &nextup.QuietHours{Start: 0, End: 7*60 + 30}
			biz.Name = "Ünïcødé & 'quotes' \"too\""
			biz.CreatedAt = time.Date(2029, 12, 31, 23, 59, 59, 999999000, time.FixedZone("UTC+0530", 5*3600+30*60))
		}},
	}
	for _, v := range variants {
		biz := b.business(v.mod)
		b.read(func(tx nextup.Tx) error {
			got, err := tx.BusinessGet(b.ctx, biz.ID)
			if wantOK(t, err, "%s: BusinessGet", v.name) {
				checkEqual(t, v.name+": BusinessGet", biz, got)
			}
			got, err = tx.BusinessByAPIKey(b.ctx, biz.APIKeyHash)
			if wantOK(t, err, "%s: BusinessByAPIKey", v.name) {
				checkEqual(t, v.name+": BusinessByAPIKey", biz, got)
			}
			return nil
		})
	}
}

func testBusinessNotFound(t *testing.T, b *bundle) {
	biz := b.business()
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.BusinessGet(b.ctx, "biz_missing")
		wantErr(t, err, nextup.ErrNotFound, "BusinessGet(missing)")
		_, err = tx.BusinessByAPIKey(b.ctx, nextup.HashToken("no such key"))
		wantErr(t, err, nextup.ErrNotFound, "BusinessByAPIKey(unknown)")
		r := biz.Rules
		r.Version++
		wantErr(t, tx.BusinessRulesSet(b.ctx, "biz_missing", r), nextup.ErrNotFound, "BusinessRulesSet(missing)")
		return nil
	})
}

func testBusinessDuplicateID(t *testing.T, b *bundle) {
	biz := b.business()
	dup := biz
	dup.Name = "Impostor"
	dup.APIKeyHash = nextup.HashToken("other")
	err := b.s.InTx(b.ctx, func(tx nextup.Tx) error { return tx.BusinessCreate(b.ctx, dup) })
	if err == nil {
		t.Errorf("BusinessCreate with an existing id: no error")
	}
	b.read(func(tx nextup.Tx) error {
		got, err := tx.BusinessGet(b.ctx, biz.ID)
		if wantOK(t, err, "BusinessGet") {
			checkEqual(t, "business after a refused duplicate", biz, got)
		}
		return nil
	})
}

func testBusinessRulesSetVersion(t *testing.T, b *bundle) {
	biz := b.business()
	get := func() nextup.Rules {
		t.Helper()
		var r nextup.Rules
		b.read(func(tx nextup.Tx) error {
			got, err := tx.BusinessGet(b.ctx, biz.ID)
			r = got.Rules
			return err
		})
		return r
	}
	v2 := biz.Rules
	v2.Version = 2
	v2.QuietHours = nil
	v2.MaxOffersPerSlot = 4
	v2.ClaimWindow = 15 * time.Minute
	b.tx(func(tx nextup.Tx) error { return tx.BusinessRulesSet(b.ctx, biz.ID, v2) })
	checkEqual(t, "rules after setting version 2", v2, get())

	for _, version := range []int{1, 2, 4} {
		r := v2
		r.Version = version
		r.DownFit = true
		b.tx(func(tx nextup.Tx) error {
			wantErr(t, tx.BusinessRulesSet(b.ctx, biz.ID, r), nextup.ErrConflict, "BusinessRulesSet(version %d) over version 2", version)
			return nil
		})
	}
	checkEqual(t, "rules after refused sets", v2, get())

	// Two staff saving at once: one wins, the other must reload.
	v3 := v2
	v3.Version = 3
	v3.QuietHours = &nextup.QuietHours{Start: 20 * 60, End: 9 * 60}
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			errs[i] = b.s.InTx(b.ctx, func(tx nextup.Tx) error {
				return tx.BusinessRulesSet(b.ctx, biz.ID, v3)
			})
		})
	}
	wg.Wait()
	wins := 0
	for i, err := range errs {
		switch {
		case err == nil:
			wins++
		case errors.Is(err, nextup.ErrConflict):
		default:
			t.Errorf("concurrent BusinessRulesSet %d: %v (want nil or ErrConflict)", i, err)
		}
	}
	if wins != 1 {
		t.Errorf("%d of %d concurrent BusinessRulesSet(version 3) succeeded, want exactly 1", wins, n)
	}
	checkEqual(t, "rules after concurrent sets", v3, get())
}

func testBusinessProfile(t *testing.T, b *bundle) {
	withSlug := b.business(func(biz *nextup.Business) { biz.Profile = nextup.Profile{Slug: "corner-cuts-" + biz.ID} })
	other := b.business()
	prof := nextup.Profile{
		Slug: "salon-" + other.ID, OwnerEmail: "owner@example.com", Country: "GB",
		InboundSenders: []string{"bookings@example.com"},
		Services: []nextup.Service{{Name: "haircut", Synonyms: []string{"cut", "trim"}, DurationMinutes: 45, PriceCents: 3500},
			{Name: "colour", DurationMinutes: 90}},
		Staff: []string{"Ana", "Ben"},
	}
	b.tx(func(tx nextup.Tx) error {
		got, err := tx.BusinessBySlug(b.ctx, withSlug.Profile.Slug)
		if wantOK(t, err, "BusinessBySlug(created with a slug)") {
			checkEqual(t, "BusinessBySlug", withSlug, got)
		}
		wantOK(t, tx.BusinessProfileSet(b.ctx, other.ID, prof), "BusinessProfileSet")
		taken := prof
		taken.Slug = withSlug.Profile.Slug
		wantErr(t, tx.BusinessProfileSet(b.ctx, other.ID, taken), nextup.ErrConflict, "BusinessProfileSet(a slug another business has)")
		wantErr(t, tx.BusinessProfileSet(b.ctx, "biz_missing", prof), nextup.ErrNotFound, "BusinessProfileSet(missing)")
		_, err = tx.BusinessBySlug(b.ctx, "no-such-slug")
		wantErr(t, err, nextup.ErrNotFound, "BusinessBySlug(unknown)")
		_, err = tx.BusinessBySlug(b.ctx, "")
		wantErr(t, err, nextup.ErrNotFound, "BusinessBySlug(empty)")
		return nil
	})
	b.read(func(tx nextup.Tx) error {
		want := other
		want.Profile = prof
		got, err := tx.BusinessGet(b.ctx, other.ID)
		if wantOK(t, err, "BusinessGet after BusinessProfileSet") {
			checkEqual(t, "business with profile", want, got)
		}
		got, err = tx.BusinessBySlug(b.ctx, prof.Slug)
		if wantOK(t, err, "BusinessBySlug(new slug)") && got.ID != other.ID {
			t.Errorf("BusinessBySlug(%s) = %s", prof.Slug, got.ID)
		}
		return nil
	})
}
