package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/aws/store/dynamo"
	"github.com/nextup-dev/nextup/store/sqlite"
	"github.com/nextup-dev/nextup/waitlist"
)

// TestCopyToDynamoDB moves the demo tour's history from the embedded
// store to DynamoDB with `nextup-aws copy`, which verifies every kind of
// record by count and checksum; then every lookup by a unique key (a
// slug, an API key, a token, a staff email, …) finds the same record in
// both stores, the business carries on in DynamoDB (a new joiner queues
// after everyone copied), and copying again is refused.
func TestCopyToDynamoDB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "demo.db")
	if out, err := nextupAWS("demo", "--tour", "--db", file).CombinedOutput(); err != nil {
		t.Fatalf("demo --tour: %v\n%s", err, out)
	}
	src, err := sqlite.Open(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	addTheRest(t, src)
	to := dynamoURL(t)
	b, err := nextupAWS("copy", "--from", file, "--to", to).CombinedOutput()
	out := string(b)
	if err != nil {
		t.Fatalf("copy: %v\n%s", err, out)
	}
	for _, kind := range []string{"business", "slots", "offers", "bookings", "payments", "handbacks", "entries", "audit",
		"messages", "timers", "staff", "proposals", "sheet_versions"} {
		if !regexp.MustCompile(`(?m)\s` + kind + `\s+[1-9]\d*\s+[0-9a-f]{16}\s+ok$`).MatchString(out) {
			t.Errorf("copy did not verify %s:\n%s", kind, out)
		}
	}
	if strings.Contains(out, "MISMATCH") {
		t.Fatalf("copy reported a mismatch:\n%s", out)
	}

	dst, err := dynamo.Open(ctx, to)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	bid := demoBusiness(t, src)

	// Lookups by unique keys (markers and token indexes, which the
	// checksums do not read) find the same records in both stores.
	var lookups []func(tx nextup.Tx) (any, error)
	look := func(f func(tx nextup.Tx) (any, error)) { lookups = append(lookups, f) }
	var maxSeq int64
	if err := src.Read(ctx, func(tx nextup.Tx) error {
		b, err := tx.BusinessGet(ctx, bid)
		if err != nil {
			return err
		}
		look(func(tx nextup.Tx) (any, error) { return tx.BusinessByAPIKey(ctx, b.APIKeyHash) })
		if b.Profile.Slug != "" {
			look(func(tx nextup.Tx) (any, error) { return tx.BusinessBySlug(ctx, b.Profile.Slug) })
		}
		for _, st := range []nextup.EntryState{"", nextup.EntryBooked, nextup.EntryLeft, nextup.EntryExpired} {
			es, err := tx.EntryList(ctx, nextup.EntryFilter{BusinessID: bid, State: st})
			if err != nil {
				return err
			}
			for _, e := range es {
				maxSeq = max(maxSeq, e.Seq)
				if e.StatusHash != "" {
					look(func(tx nextup.Tx) (any, error) { return tx.EntryByStatusHash(ctx, e.StatusHash) })
				}
				look(func(tx nextup.Tx) (any, error) {
					o, err := tx.OfferLiveByEntry(ctx, e.ID)
					if errors.Is(err, nextup.ErrNotFound) {
						return "none", nil
					}
					return o, err
				})
			}
		}
		slots, err := tx.SlotList(ctx, nextup.SlotFilter{BusinessID: bid})
		if err != nil {
			return err
		}
		for _, s := range slots {
			offers, err := tx.OfferListBySlot(ctx, s.ID)
			if err != nil {
				return err
			}
			for _, o := range offers {
				if o.TokenHash != "" {
					look(func(tx nextup.Tx) (any, error) { return tx.OfferByTokenHash(ctx, o.TokenHash) })
				}
				look(func(tx nextup.Tx) (any, error) {
					bk, err := tx.BookingByOffer(ctx, o.ID)
					if errors.Is(err, nextup.ErrNotFound) {
						return "none", nil
					}
					return bk, err
				})
				pays, err := tx.PaymentListByOffer(ctx, o.ID)
				if err != nil {
					return err
				}
				for _, p := range pays {
					look(func(tx nextup.Tx) (any, error) { return tx.PaymentBySession(ctx, p.SessionID) })
				}
			}
		}
		staff, err := tx.StaffList(ctx, bid)
		if err != nil {
			return err
		}
		for _, s := range staff {
			look(func(tx nextup.Tx) (any, error) { return tx.StaffByEmail(ctx, s.Email) })
			// Sessions and resets are not listed (nor digested): the
			// ones addTheRest made.
			look(func(tx nextup.Tx) (any, error) { return tx.SessionGet(ctx, nextup.HashToken("ses-"+s.ID)) })
		}
		look(func(tx nextup.Tx) (any, error) {
			return tx.SuppressionList(ctx, bid, []string{"gone@example.com"})
		})
		props, err := tx.ProposalList(ctx, bid, "")
		if err != nil {
			return err
		}
		for _, p := range props {
			if p.ActionHash != "" {
				look(func(tx nextup.Tx) (any, error) { return tx.ProposalByActionHash(ctx, p.ActionHash) })
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if maxSeq == 0 {
		t.Fatal("the demo has no entries")
	}
	results := func(st nextup.Store) []string {
		var out []string
		if err := st.Read(ctx, func(tx nextup.Tx) error {
			for _, f := range lookups {
				v, err := f(tx)
				if err != nil {
					return err
				}
				b, err := json.Marshal(v)
				if err != nil {
					return err
				}
				out = append(out, string(b))
			}
			return nil
		}); err != nil {
			t.Fatalf("lookups in %T: %v", st, err)
		}
		return out
	}
	want, got := results(src), results(dst)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("lookup %d in DynamoDB:\n got %s\nwant %s", i, got[i], want[i])
		}
	}

	// The business carries on in DynamoDB: a new joiner queues after
	// everyone copied (the counter moved past the copied numbers).
	svc := waitlist.New(dst, nextup.RealClock{}, "")
	res, err := svc.Join(ctx, bid, waitlist.JoinParams{Name: "New", Email: "new@example.com", Service: "colour"})
	if err != nil || res.Entry.Seq <= maxSeq {
		t.Fatalf("join after copy: seq %d (copied max %d), %v", res.Entry.Seq, maxSeq, err)
	}

	// Copying again is refused and changes nothing.
	if b, err := nextupAWS("copy", "--from", file, "--to", to).CombinedOutput(); err == nil ||
		!strings.Contains(string(b), "nothing was written") || !strings.Contains(string(b), "exists already") {
		t.Fatalf("second copy: %v\n%s", err, b)
	}
	if err := dst.Read(ctx, func(tx nextup.Tx) error {
		_, err := tx.EntryGet(ctx, res.Entry.ID)
		return err
	}); err != nil {
		t.Errorf("the entry joined after the copy, after a refused second copy: %v", err)
	}
}

// demoBusiness is the id of the demo's one business.
func demoBusiness(t *testing.T, src *sqlite.DB) string {
	t.Helper()
	ids, err := src.BusinessIDs(context.Background())
	if err != nil || len(ids) != 1 {
		t.Fatalf("the demo's businesses: %v, %v", ids, err)
	}
	return ids[0]
}

// addTheRest gives the demo's business what its tour leaves out, so that
// the copy carries every kind: a staff member with a session and a
// password reset, a proposal, a sheet version, a hand-back, a payment and
// a suppression.
func addTheRest(t *testing.T, src *sqlite.DB) {
	t.Helper()
	ctx := context.Background()
	bid := demoBusiness(t, src)
	now := time.Date(2031, 3, 10, 9, 0, 0, 123456000, time.UTC)
	if err := src.InTx(ctx, func(tx nextup.Tx) error {
		slots, err := tx.SlotList(ctx, nextup.SlotFilter{BusinessID: bid})
		if err != nil || len(slots) == 0 {
			return fmt.Errorf("the demo's slots: %d, %w", len(slots), err)
		}
		offers, err := tx.OfferListBySlot(ctx, slots[0].ID)
		if err != nil || len(offers) == 0 {
			return fmt.Errorf("offers of the demo's first slot: %d, %w", len(offers), err)
		}
		o := offers[0]
		s := nextup.Staff{ID: "stf_copy", BusinessID: bid, Email: "copy@example.com", Name: "Copy", PasswordHash: "h", CreatedAt: now}
		for _, step := range []func() error{
			func() error { return tx.StaffCreate(ctx, s) },
			func() error {
				return tx.SessionCreate(ctx, nextup.Session{IDHash: nextup.HashToken("ses-" + s.ID), StaffID: s.ID, BusinessID: bid,
					CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour)})
			},
			func() error {
				return tx.PasswordResetCreate(ctx, nextup.PasswordReset{TokenHash: nextup.HashToken("rst-" + s.ID), StaffID: s.ID,
					CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
			},
			func() error {
				return tx.ProposalCreate(ctx, nextup.Proposal{ID: "prp_copy", BusinessID: bid, Source: nextup.ProposalFromEmail,
					SourceRef: "<copy@x>", ReceivedAt: now, Excerpt: "a cut on Tuesday?",
					Fields:     nextup.ProposalFields{Name: "Ann", Service: "haircut", Earliest: now.Add(24 * time.Hour)},
					Confidence: map[string]float64{"name": 0.8}, Problems: []string{"no contact"}, State: nextup.ProposalOpen,
					ActionHash: nextup.HashToken("act-copy"), ActionExpiresAt: now.Add(72 * time.Hour), CreatedAt: now})
			},
			func() error {
				return tx.SheetVersionAdd(ctx, nextup.SheetVersion{ID: "shv_copy", BusinessID: bid, Source: "sheet!A:F",
					FetchedAt: now, Hash: "abc", Rows: 3, Imported: 2, Rejected: 1})
			},
			func() error {
				return tx.HandBackCreate(ctx, nextup.HandBack{ID: "hb_copy", BusinessID: bid, SlotID: slots[0].ID,
					Reason: "list_exhausted", State: nextup.HandBackOpen, CreatedAt: now})
			},
			func() error {
				return tx.PaymentCreate(ctx, nextup.Payment{ID: "pay_copy", BusinessID: bid, SlotID: o.SlotID, OfferID: o.ID,
					EntryID: o.EntryID, Provider: "stripe", SessionID: "cs_copy", URL: "https://pay.example/cs_copy",
					AmountCents: 2500, Currency: "eur", State: nextup.PaymentOpen, ExpiresAt: now.Add(time.Hour),
					CreatedAt: now, UpdatedAt: now})
			},
			func() error {
				return tx.SuppressionAdd(ctx, nextup.Suppression{BusinessID: bid, Channel: nextup.ChannelEmail,
					Address: "gone@example.com", Reason: "unsubscribed", At: now})
			},
		} {
			if err := step(); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
