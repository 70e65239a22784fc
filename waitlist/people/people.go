package people

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"unicode"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/intake/csvrows"
	"github.com/nextup-dev/nextup/waitlist/entries"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
	"github.com/nextup-dev/nextup/waitlist/slots"
)

// People are the use cases of a person's data: export, erasure and
// retention.
type People struct {
	*core.Service
}

// Reasons and audit rows of this package.
const (
	// AuditExported is the To of the audit row of an export.
	AuditExported = "person_exported"
	// AuditErased is the To of the audit row of an erasure asked for.
	AuditErased = "person_erased"
	// AuditRetention is the To of the audit row of a retention sweep
	// that erased someone.
	AuditRetention = "retention_erased"
	// ReasonErased is the reason of the withdrawals and cancellations an
	// erasure makes first.
	ReasonErased = "person_erased"
)

// ParseContact reads what staff typed to name a person: an email address,
// or else a phone number (E.164, or national in the business's country).
// Anything else is a validation error on the field "contact".
func ParseContact(b nextup.Business, raw string) (nextup.Contact, error) {
	raw = strings.TrimSpace(raw)
	bad := func(msg string) error {
		return core.Invalid(nextup.FieldError{Field: "contact", Message: msg})
	}
	switch {
	case raw == "":
		return nextup.Contact{}, bad("is required: an email address or a phone number in E.164 (+447700900123)")
	case len(raw) > 254:
		return nextup.Contact{}, bad("is too long to be an email address or a phone number")
	case strings.Contains(raw, "@"):
		a, err := mail.ParseAddress(raw)
		if err != nil || a.Address != raw {
			return nextup.Contact{}, bad("is not an email address")
		}
		return nextup.ContactOf(raw, ""), nil
	}
	p, err := csvrows.NormalizePhone(raw, b.Profile.Country)
	if err != nil || p == "" {
		return nextup.Contact{}, bad("is not an email address or a phone number (write it in E.164: +447700900123)")
	}
	return nextup.ContactOf("", p), nil
}

// held is what a business holds about one person, as a transaction read
// it.
type held struct {
	entries      []nextup.Entry
	offers       []nextup.Offer
	bookings     []nextup.Booking
	slots        map[string]nextup.Slot // of the bookings and offers
	guests       []nextup.Guest
	messages     []nextup.Message
	audit        []nextup.AuditEvent
	proposals    []nextup.Proposal
	handBacks    []nextup.HandBack
	suppressions []nextup.Suppression
	// names and addresses are the person's as their rows give them:
	// what an erasure looks for in free text.
	names, addresses []string
}

// find reads everything a business holds about c.
func find(ctx context.Context, tx nextup.Tx, bid string, c nextup.Contact) (held, error) {
	var h held
	h.slots = map[string]nextup.Slot{}
	var err error
	if h.entries, err = tx.EntryListByContact(ctx, bid, c); err != nil {
		return h, fmt.Errorf("entries: %w", err)
	}
	entryIDs := map[string]bool{}
	addresses := []string{c.Email, c.Phone}
	var keys, names []string
	for _, e := range h.entries {
		entryIDs[e.ID] = true
		keys = append(keys, e.ContactKey())
		names = append(names, e.Name)
		addresses = append(addresses, strings.TrimSpace(e.Email), strings.ToLower(strings.TrimSpace(e.Email)), e.Phone, nextup.PhoneDigits(e.Phone))
	}
	h.addresses = distinct(addresses)

	// Offers, through the contact keys they were made under.
	for _, k := range distinct(keys) {
		os, err := tx.OfferListByContact(ctx, bid, k)
		if err != nil {
			return h, fmt.Errorf("offers: %w", err)
		}
		for _, o := range os {
			if entryIDs[o.EntryID] {
				h.offers = append(h.offers, o)
			}
		}
	}
	// Bookings: a claimed offer's, and an event registration's.
	seen := map[string]bool{}
	addBooking := func(b nextup.Booking) {
		if !seen[b.ID] && b.BusinessID == bid {
			seen[b.ID] = true
			h.bookings = append(h.bookings, b)
			names = append(names, b.Name)
		}
	}
	for _, o := range h.offers {
		if o.State != nextup.OfferClaimed {
			continue
		}
		b, err := tx.BookingByOffer(ctx, o.ID)
		switch {
		case errors.Is(err, nextup.ErrNotFound):
		case err != nil:
			return h, fmt.Errorf("booking of offer %s: %w", o.ID, err)
		default:
			addBooking(b)
		}
	}
	events := map[string]bool{}
	for _, e := range h.entries {
		if e.EventID != "" {
			events[e.EventID] = true
		}
	}
	for _, ev := range sortedKeys(events) {
		bs, err := tx.BookingListBySlot(ctx, ev)
		if err != nil {
			return h, fmt.Errorf("bookings of event %s: %w", ev, err)
		}
		for _, b := range bs {
			if entryIDs[b.EntryID] {
				addBooking(b)
			}
		}
	}
	for _, e := range h.entries {
		if e.EventID == "" {
			continue
		}
		gs, err := tx.GuestListByEntry(ctx, e.ID)
		if err != nil {
			return h, fmt.Errorf("guests of entry %s: %w", e.ID, err)
		}
		h.guests = append(h.guests, gs...)
	}
	slotIDs := map[string]bool{}
	for _, o := range h.offers {
		slotIDs[o.SlotID] = true
	}
	for _, b := range h.bookings {
		slotIDs[b.SlotID] = true
	}
	for _, id := range sortedKeys(slotIDs) {
		sl, err := tx.SlotGet(ctx, id)
		if err != nil {
			return h, fmt.Errorf("slot %s: %w", id, err)
		}
		h.slots[id] = sl
	}
	h.names = distinct(names)

	// Messages, by the addresses they went to.
	seen = map[string]bool{}
	for _, a := range h.addresses {
		ms, err := tx.MessageList(ctx, nextup.MessageFilter{BusinessID: bid, To: a})
		if err != nil {
			return h, fmt.Errorf("messages: %w", err)
		}
		for _, m := range ms {
			if !seen[m.ID] {
				seen[m.ID] = true
				h.messages = append(h.messages, m)
			}
		}
	}
	slices.SortFunc(h.messages, func(a, b nextup.Message) int { return a.CreatedAt.Compare(b.CreatedAt) })

	// Audit rows: of their entries, offers, bookings and messages; the
	// business's rows that name them (an opt-out); a slot's hand-back
	// that names them.
	sc := scrubber{exact: h.addresses, names: h.names}
	seenAudit := map[int64]bool{}
	addAudit := func(f nextup.AuditFilter, keep func(nextup.AuditEvent) bool) error {
		f.BusinessID = bid
		evs, err := tx.AuditList(ctx, f)
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		for _, ev := range evs {
			if !seenAudit[ev.ID] && (keep == nil || keep(ev)) {
				seenAudit[ev.ID] = true
				h.audit = append(h.audit, ev)
			}
		}
		return nil
	}
	for _, e := range h.entries {
		if err := addAudit(nextup.AuditFilter{SubjectType: nextup.SubjectEntry, SubjectID: e.ID}, nil); err != nil {
			return h, err
		}
	}
	for _, o := range h.offers {
		if err := addAudit(nextup.AuditFilter{SubjectType: nextup.SubjectOffer, SubjectID: o.ID}, nil); err != nil {
			return h, err
		}
	}
	for _, b := range h.bookings {
		if err := addAudit(nextup.AuditFilter{SubjectType: nextup.SubjectBooking, SubjectID: b.ID}, nil); err != nil {
			return h, err
		}
	}
	for _, m := range h.messages {
		if err := addAudit(nextup.AuditFilter{SubjectType: nextup.SubjectMessage, SubjectID: m.ID}, nil); err != nil {
			return h, err
		}
	}
	// What their own rows' details say they were once called or
	// reached at (an entry's edit records the name, email or phone it
	// replaced) names them too.
	for _, ev := range h.audit {
		for _, k := range []string{"name", "email", "phone"} {
			for _, v := range detailStrings(ev.Detail[k]) {
				if k == "name" {
					h.names = distinct(append(h.names, v))
				} else {
					h.addresses = distinct(append(h.addresses, v, strings.ToLower(v)))
				}
			}
		}
	}
	sc = scrubber{exact: h.addresses, names: h.names}
	mentions := func(ev nextup.AuditEvent) bool { _, changed := sc.detail(ev.Detail, "x"); return changed }
	if err := addAudit(nextup.AuditFilter{SubjectType: nextup.SubjectBusiness, SubjectID: bid}, mentions); err != nil {
		return h, err
	}
	for _, id := range sortedKeys(slotIDs) {
		if err := addAudit(nextup.AuditFilter{SlotID: id}, mentions); err != nil {
			return h, err
		}
	}
	slices.SortFunc(h.audit, func(a, b nextup.AuditEvent) int { return cmpInt(a.ID, b.ID) })

	// Proposals: by any address of the person's they name, or the entry
	// they made.
	ps, err := tx.ProposalList(ctx, bid, "")
	if err != nil {
		return h, fmt.Errorf("proposals: %w", err)
	}
	for _, p := range ps {
		if entryIDs[p.EntryID] || sc.isAddress(p.Fields.Email) || sc.isAddress(p.Fields.Phone) {
			h.proposals = append(h.proposals, p)
		}
	}
	// Hand-backs of their slots whose note names them.
	for _, st := range []nextup.HandBackState{nextup.HandBackOpen, nextup.HandBackResolved} {
		hbs, err := tx.HandBackList(ctx, bid, st)
		if err != nil {
			return h, fmt.Errorf("hand-backs: %w", err)
		}
		for _, hb := range hbs {
			if _, changed := sc.text(hb.Note, "x"); slotIDs[hb.SlotID] && changed {
				h.handBacks = append(h.handBacks, hb)
			}
		}
	}
	if h.suppressions, err = tx.SuppressionList(ctx, bid, h.addresses); err != nil {
		return h, fmt.Errorf("suppressions: %w", err)
	}
	return h, nil
}

// Pseudonym is what an erasure writes in place of a person's name:
// "erased-" and a short hash of the business and of the person's first
// entry (a random id, so the pseudonym says nothing of the contact), or
// of the contact's key when they have no entry. One erasure writes one
// pseudonym everywhere, also when it goes in parts (the first part's); an
// erasure stopped halfway and asked for again finishes under the
// pseudonym of what is left.
func pseudonym(bid string, c nextup.Contact, es []nextup.Entry) string {
	seed := "contact:" + c.Email + "|" + c.Phone
	if len(es) > 0 {
		seed = "entry:" + es[0].ID
	}
	sum := sha256.Sum256([]byte("nextup-erasure\x00" + bid + "\x00" + seed))
	return "erased-" + hex.EncodeToString(sum[:])[:10]
}

// scrubber rewrites free text and audit details that name a person: a
// value that is one of their addresses (compared lower-cased, and a
// number by its digits) becomes the pseudonym; a name inside text (as a
// whole word) becomes the pseudonym too.
type scrubber struct {
	exact []string
	names []string
}

func (s scrubber) isAddress(v string) bool {
	l := strings.ToLower(strings.TrimSpace(v))
	if l == "" {
		return false
	}
	d := nextup.PhoneDigits(v)
	for _, a := range s.exact {
		if a == "" {
			continue
		}
		if strings.ToLower(a) == l || (len(d) >= 6 && len(d)*2 >= len(l) && nextup.PhoneDigits(a) == d) {
			return true
		}
	}
	return false
}

// text is v with the person's addresses and names replaced by p, and
// whether anything was.
func (s scrubber) text(v, p string) (string, bool) {
	if v == "" || v == p {
		return v, false
	}
	if s.isAddress(v) {
		return p, true
	}
	out := v
	for _, n := range s.names {
		if len([]rune(n)) >= 3 && !strings.HasPrefix(n, "erased-") {
			out = replaceWord(out, n, p)
		}
	}
	for _, a := range s.exact {
		if len(a) >= 6 {
			out = replaceWord(out, a, p)
		}
	}
	return out, out != v
}

// detail is an audit row's detail with text rewritten (text), and
// whether anything was.
func (s scrubber) detail(d map[string]any, p string) (map[string]any, bool) {
	if d == nil {
		return nil, false
	}
	v, changed := s.value(d, p)
	return v.(map[string]any), changed
}

func (s scrubber) value(v any, p string) (any, bool) {
	switch x := v.(type) {
	case string:
		return s.text(x, p)
	case map[string]any:
		out, any_ := make(map[string]any, len(x)), false
		for k, e := range x {
			n, c := s.value(e, p)
			out[k], any_ = n, any_ || c
		}
		return out, any_
	case []any:
		out, any_ := make([]any, len(x)), false
		for i, e := range x {
			n, c := s.value(e, p)
			out[i], any_ = n, any_ || c
		}
		return out, any_
	}
	return v, false
}

// replaceWord replaces old in s where it stands as a whole word (not
// inside a longer one: "Ann" in "Anne" stays), case-insensitively for
// its letters.
func replaceWord(s, old, repl string) string {
	if old == "" {
		return s
	}
	ls, lo := strings.ToLower(s), strings.ToLower(old)
	if len(ls) != len(s) || len(lo) != len(old) {
		// A case change that changes the length (rare scripts): match
		// exactly instead.
		ls, lo = s, old
	}
	var b strings.Builder
	i := 0
	for {
		j := strings.Index(ls[i:], lo)
		if j < 0 {
			b.WriteString(s[i:])
			return b.String()
		}
		j += i
		end := j + len(lo)
		if wordEdge(s, j, true) && wordEdge(s, end, false) {
			b.WriteString(s[i:j])
			b.WriteString(repl)
		} else {
			b.WriteString(s[i:end])
		}
		i = end
	}
}

// wordEdge reports whether position i of s is not inside a word: the
// character before it (before) or at it (!before) is no letter or digit.
func wordEdge(s string, i int, before bool) bool {
	var r rune
	if before {
		if i == 0 {
			return true
		}
		r = []rune(s[:i])[len([]rune(s[:i]))-1]
	} else {
		if i >= len(s) {
			return true
		}
		r = []rune(s[i:])[0]
	}
	return !unicode.IsLetter(r) && !unicode.IsDigit(r)
}

// detailStrings are the strings of an audit detail's value: the value
// itself, or an edit's {"from","to"}.
func detailStrings(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case map[string]any:
		var out []string
		for _, k := range []string{"from", "to"} {
			if s, ok := x[k].(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func distinct(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// erasureOf is the erasure of what h holds that still names the person:
// only rows that would change, so that erasing again writes nothing.
func erasureOf(bid string, h held, p string) nextup.Erasure {
	sc := scrubber{exact: h.addresses, names: h.names}
	e := nextup.Erasure{BusinessID: bid, Pseudonym: p}
	for _, a := range h.audit {
		if d, changed := sc.detail(a.Detail, p); changed {
			a.Detail = d
			e.Audit = append(e.Audit, a)
		}
	}
	for _, m := range h.messages {
		e.Messages = append(e.Messages, m.ID)
	}
	for _, g := range h.guests {
		if g.Name != "" {
			g.Name = ""
			e.Guests = append(e.Guests, g)
		}
	}
	for _, b := range h.bookings {
		if b.Name != p {
			e.Bookings = append(e.Bookings, b.ID)
		}
	}
	erasedKey := nextup.Entry{}.ContactKey()
	for _, o := range h.offers {
		if o.ContactKey != erasedKey {
			e.Offers = append(e.Offers, o.ID)
		}
	}
	for _, pr := range h.proposals {
		f := pr.Fields
		nf := f
		if nf.Name != "" {
			nf.Name = p
		}
		nf.Email, nf.Phone = "", ""
		if nf.Name != f.Name || nf.Email != f.Email || nf.Phone != f.Phone || pr.Excerpt != "" {
			pr.Fields, pr.Excerpt = nf, ""
			e.Proposals = append(e.Proposals, pr)
		}
	}
	for _, hb := range h.handBacks {
		if n, changed := sc.text(hb.Note, p); changed {
			hb.Note = n
			e.HandBacks = append(e.HandBacks, hb)
		}
	}
	for _, en := range h.entries {
		e.Entries = append(e.Entries, en.ID)
	}
	return e
}

// take splits e: the first part holds at most n rows, in the order the
// rows are found through one another, so that what a part leaves is
// still found by the next: audit rows (found through offers, bookings
// and messages), messages, guests, hand-backs and proposals, bookings
// (found through claimed offers), offers, and the entries, through
// which everything is found, last.
func take(e nextup.Erasure, n int) (part, rest nextup.Erasure) {
	part = nextup.Erasure{BusinessID: e.BusinessID, Pseudonym: e.Pseudonym}
	rest = e
	part.Audit, rest.Audit = split(rest.Audit, &n)
	part.Messages, rest.Messages = split(rest.Messages, &n)
	part.Guests, rest.Guests = split(rest.Guests, &n)
	part.HandBacks, rest.HandBacks = split(rest.HandBacks, &n)
	part.Proposals, rest.Proposals = split(rest.Proposals, &n)
	part.Bookings, rest.Bookings = split(rest.Bookings, &n)
	part.Offers, rest.Offers = split(rest.Offers, &n)
	part.Entries, rest.Entries = split(rest.Entries, &n)
	return part, rest
}

// split takes up to *n items off the front of s, counting them off *n.
func split[T any](s []T, n *int) (head, tail []T) {
	k := min(*n, len(s))
	*n -= k
	return s[:k:k], s[k:]
}

// Counts are how many rows of each kind an erasure rewrote.
type Counts struct {
	Entries     int `json:"entries"`
	Offers      int `json:"offers"`
	Bookings    int `json:"bookings"`
	Guests      int `json:"guests"`
	Messages    int `json:"messages"`
	AuditEvents int `json:"audit_events"`
	Proposals   int `json:"proposals"`
	HandBacks   int `json:"hand_backs"`
}

func (c *Counts) add(e nextup.Erasure) {
	c.Entries += len(e.Entries)
	c.Offers += len(e.Offers)
	c.Bookings += len(e.Bookings)
	c.Guests += len(e.Guests)
	c.Messages += len(e.Messages)
	c.AuditEvents += len(e.Audit)
	c.Proposals += len(e.Proposals)
	c.HandBacks += len(e.HandBacks)
}

// Total is the number of rows rewritten.
func (c Counts) Total() int {
	return c.Entries + c.Offers + c.Bookings + c.Guests + c.Messages + c.AuditEvents + c.Proposals + c.HandBacks
}

func (c Counts) detail() map[string]any {
	return map[string]any{"entries": c.Entries, "offers": c.Offers, "bookings": c.Bookings, "guests": c.Guests,
		"messages": c.Messages, "audit_events": c.AuditEvents, "proposals": c.Proposals, "hand_backs": c.HandBacks}
}

// Erased is the outcome of an erasure.
type Erased struct {
	// Erased counts the rows rewritten, by kind: all zero when there was
	// nothing (left) to erase.
	Erased Counts
	// Withdrawn counts the entries taken off a waitlist first, and
	// Cancelled the bookings of slots not yet started that were
	// cancelled first.
	Withdrawn, Cancelled int
	// Pseudonym stands in for the person in the rows rewritten ("" when
	// there were none).
	Pseudonym string
	Moves     []nextup.Move
}

// Erase erases, at staff's request, the personal data of the person
// named by contact (an email address or a phone number; ParseContact) in
// a business: see the package doc. It ends with a person_erased audit
// row (the counts and the pseudonym, never the contact), also when there
// was nothing left to erase.
func (s *People) Erase(ctx context.Context, businessID, contact string) (Erased, error) {
	var c nextup.Contact
	err := s.Read(ctx, func(tx nextup.Tx) error {
		b, err := tx.BusinessGet(ctx, businessID)
		if err != nil {
			return core.NotFound("business", businessID, err)
		}
		c, err = ParseContact(b, contact)
		return err
	})
	if err != nil {
		return Erased{}, err
	}
	return s.erase(ctx, businessID, c, nextup.ActorStaff, AuditErased, nil)
}

// erase withdraws and then erases c in a business as actor (staff, or
// the retention's timer), writing one audit row of kind to (with extra in
// its detail) when it is done; a retention sweep that found nothing to
// erase writes none.
func (s *People) erase(ctx context.Context, bid string, c nextup.Contact, actor, to string, extra map[string]any) (Erased, error) {
	var out Erased
	// First the person leaves: their active entries, the way a person
	// leaves (a live offer is cancelled and rolls on), and their bookings
	// of slots that have not started (the seats are offered on). On a
	// bounded store each goes in a transaction of its own (a leave or a
	// cancellation runs the engine, which may offer the seats on).
	for more := true; more; {
		var withdrawn, cancelled int
		var moves []nextup.Move
		err := s.Tx(ctx, func(w *core.Work) error {
			w.Actor = actor
			more, withdrawn, cancelled = false, 0, 0 // a transaction run again starts over
			left := 0
			room := func() bool {
				if s.TxWrites > 0 && left > 0 {
					more = true
					return false
				}
				return true
			}
			es, err := w.Tx.EntryListByContact(ctx, bid, c)
			if err != nil {
				return err
			}
			for _, e := range es {
				if !e.Active() || !room() {
					continue
				}
				var gone nextup.Entry
				var mv []nextup.Move
				if err := entries.LeaveIn(ctx, w, e, &gone, &mv); err != nil {
					return fmt.Errorf("withdraw entry %s: %w", e.ID, err)
				}
				withdrawn++
				left++
			}
			h, err := find(ctx, w.Tx, bid, c)
			if err != nil {
				return err
			}
			for _, b := range h.bookings {
				if b.State != nextup.BookingBooked || !h.slots[b.SlotID].StartsAt.After(w.Now) || !room() {
					continue
				}
				if _, err := slots.EndBookingIn(ctx, w, b, nextup.BookingCancelled, ReasonErased); err != nil {
					return fmt.Errorf("cancel booking %s: %w", b.ID, err)
				}
				cancelled++
				left++
			}
			moves = w.Moves
			return nil
		})
		if err != nil {
			return out, err
		}
		out.Withdrawn, out.Cancelled = out.Withdrawn+withdrawn, out.Cancelled+cancelled
		out.Moves = append(out.Moves, moves...)
		if s.TxWrites > 0 {
			if err := s.Checkpoint(ctx); err != nil {
				return out, err
			}
		}
	}
	// Then their data, in as many parts as the store needs.
	for done := false; !done; {
		var erased nextup.Erasure // this part's, counted once it commits
		err := s.Tx(ctx, func(w *core.Work) error {
			w.Actor = actor
			erased = nextup.Erasure{}
			bi, err := w.Business(ctx, bid)
			if err != nil {
				return err
			}
			h, err := find(ctx, w.Tx, bid, c)
			if err != nil {
				return err
			}
			p := out.Pseudonym // one pseudonym across the parts
			if p == "" {
				p = pseudonym(bid, c, h.entries)
			}
			all := erasureOf(bid, h, p)
			part, rest := all, nextup.Erasure{}
			if room := w.Room(1); room >= 0 {
				part, rest = take(all, max(room, 1))
			}
			if part.Rows() > 0 {
				if err := w.Tx.PersonErase(ctx, part); err != nil {
					return fmt.Errorf("erase: %w", err)
				}
				erased = part
			}
			if done = rest.Rows() == 0; !done {
				return nil
			}
			total := out.Erased
			total.add(erased)
			if to == AuditRetention && total.Total() == 0 {
				return nil // a sweep that found nothing writes nothing
			}
			d := total.detail()
			d["withdrawn"], d["cancelled_bookings"] = out.Withdrawn, out.Cancelled
			if erased.Rows() > 0 || out.Pseudonym != "" {
				d["pseudonym"] = p
			}
			for k, v := range extra {
				d[k] = v
			}
			return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBusiness, SubjectID: bid,
				To: to, Reason: to, Detail: d})
		})
		if err != nil {
			return out, err
		}
		if erased.Rows() > 0 {
			out.Erased.add(erased)
			out.Pseudonym = erased.Pseudonym
		}
		if !done {
			if err := s.Checkpoint(ctx); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}
