package business

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/insight"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
	"github.com/nextup-dev/nextup/waitlist/people"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

// Businesses are the use cases of a business as a tenant: creating it
// with its API key, authenticating that key, its profile and catalogue,
// its rules and their history, and its daily housekeeping.
type Businesses struct {
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
func (s *Businesses) tx(ctx context.Context, fn func(w *work) error) error {
	return s.Tx(ctx, func(w *core.Work) error { return fn(wrap(w)) })
}

// CreateBusinessParams are the inputs of CreateBusiness.
type CreateBusinessParams struct {
	Name     string
	Timezone string
	Rules    *nextup.Rules // nil: the defaults
}

// CreateBusiness creates a tenant with its API key (returned once, stored
// only as a hash) and schedules its daily housekeeping.
func (s *Businesses) CreateBusiness(ctx context.Context, p CreateBusinessParams) (nextup.Business, string, error) {
	var fields []nextup.FieldError
	p.Name = strings.TrimSpace(p.Name)
	if p.Name == "" || len(p.Name) > 200 {
		fields = append(fields, nextup.FieldError{Field: "name", Message: "is required (at most 200 characters)"})
	} else if fe := nextup.CheckName("name", p.Name, 0); fe != nil {
		fields = append(fields, *fe)
	}
	loc, err := time.LoadLocation(p.Timezone)
	if p.Timezone == "" || strings.EqualFold(p.Timezone, "local") || err != nil {
		fields = append(fields, nextup.FieldError{Field: "timezone", Message: "must be an IANA timezone name such as Europe/London"})
	}
	rules := nextup.DefaultRules()
	if p.Rules != nil {
		rules = *p.Rules
		rules.Version = 1
		fields = append(fields, rules.Validate()...)
	}
	if len(fields) > 0 {
		return nextup.Business{}, "", core.Invalid(fields...)
	}
	tok, _ := s.Random.Token()
	key := "nxk_" + tok
	keyHash := nextup.HashToken(key)
	b := nextup.Business{ID: s.Random.ID("biz"), Name: p.Name, Timezone: p.Timezone, Rules: rules, APIKeyHash: keyHash}
	err = s.tx(ctx, func(w *work) error {
		b.CreatedAt = w.Now
		if err := w.Tx.BusinessCreate(ctx, b); err != nil {
			return fmt.Errorf("create business: %w", err)
		}
		bi := &core.Biz{Business: b, Loc: loc}
		w.KeepBusiness(bi)
		if err := w.Audit(ctx, bi, nextup.AuditEvent{Actor: nextup.ActorStaff, SubjectType: nextup.SubjectBusiness,
			SubjectID: b.ID, To: "created", Detail: map[string]any{"name": b.Name, "timezone": b.Timezone, "fit": core.RulesFacts(b.Rules)}}); err != nil {
			return err
		}
		if err := w.Schedule(ctx, insight.SummaryTimer(b, w.Now)); err != nil {
			return err
		}
		return w.Schedule(ctx, nextup.Timer{BusinessID: b.ID, Kind: nextup.TimerHousekeeping, SubjectID: b.ID,
			Key: housekeepingKey(b.ID), DueAt: nextLocal(w.Now, housekeepingAt, loc)})
	})
	return b, key, err
}

// housekeepingAt is when the daily housekeeping runs, business local time:
// the quietest hour.
const housekeepingAt nextup.TimeOfDay = 3 * 60

// nextLocal is the first local time-of-day at strictly after t, DST-correct.
func nextLocal(t time.Time, at nextup.TimeOfDay, loc *time.Location) time.Time {
	l := t.In(loc)
	for d := 0; d < 3; d++ {
		c := time.Date(l.Year(), l.Month(), l.Day()+d, at.Hour(), at.Minute(), 0, 0, loc)
		if c.After(t) {
			return c.UTC()
		}
	}
	return t.Add(24 * time.Hour)
}

// BusinessByAPIKey authenticates a business API key.
func (s *Businesses) BusinessByAPIKey(ctx context.Context, key string) (nextup.Business, error) {
	var b nextup.Business
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		b, err = tx.BusinessByAPIKey(ctx, nextup.HashToken(key))
		return err
	})
	if errors.Is(err, nextup.ErrNotFound) {
		return b, nextup.Errorf(nextup.ErrUnauthorized, nextup.CodeUnauthorized, "unknown API key")
	}
	if err != nil {
		return b, fmt.Errorf("authenticate: %w", err) // the store failed: a 500, not a bad key
	}
	return b, nil
}

// UpdateRules applies a JSON patch of rules fields; the version goes up by
// one on every change and the change is audited with both versions.
func (s *Businesses) UpdateRules(ctx context.Context, businessID string, patch []byte) (nextup.Rules, error) {
	var out nextup.Rules
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorStaff
		bi, err := w.Business(ctx, businessID)
		if err != nil {
			return core.NotFound("business", businessID, err)
		}
		old := bi.Rules
		next := old
		if err := json.Unmarshal(patch, &next); err != nil {
			return core.Invalid(nextup.FieldError{Field: "rules", Message: err.Error()})
		}
		// The version is the store's to count: one sent is ignored, though
		// one that could never be a version is refused as the contract says.
		if next.Version < 1 {
			return core.Invalid(nextup.FieldError{Field: "version", Message: "must be at least 1 (and is ignored: the version is counted by nextup)"})
		}
		next.Version = old.Version
		if errs := next.Validate(); len(errs) > 0 {
			return core.Invalid(errs...)
		}
		if same, err := sameRules(old, next); err != nil {
			return err
		} else if same {
			out = old // nothing changed: no new version, nothing to audit
			return nil
		}
		next.Version = old.Version + 1
		if err := w.Tx.BusinessRulesSet(ctx, businessID, next); err != nil {
			return fmt.Errorf("set rules: %w", err)
		}
		bi.Rules = next
		out = next
		return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBusiness, SubjectID: businessID,
			From: fmt.Sprintf("rules/v%d", old.Version), To: fmt.Sprintf("rules/v%d", next.Version), Reason: "rules_changed",
			Detail: map[string]any{"patch": string(patch), "fit": core.RulesFacts(next)}})
	})
	return out, err
}

func sameRules(a, b nextup.Rules) (bool, error) { return sameJSON(a, b) }

// sameJSON reports whether a and b say the same in JSON.
func sameJSON(a, b any) (bool, error) {
	ja, err := json.Marshal(a)
	if err != nil {
		return false, err
	}
	jb, err := json.Marshal(b)
	return bytes.Equal(ja, jb), err
}

// ProfilePatch changes parts of a business's profile; nil fields are left alone.
type ProfilePatch struct {
	Slug           *string
	OwnerEmail     *string
	Country        *string
	InboundSenders *[]string
	Services       *[]nextup.Service
	Staff          *[]string
	WebhookURL     *string
	// Templates replaces the business's own message templates as a whole
	// (an empty map goes back to the defaults).
	Templates *map[string]nextup.MessageTemplate
	// RevertedFrom, with Templates, records that they restore that
	// version (RevertTemplates).
	RevertedFrom *int
	// TemplateKinds changes the templates of some kinds only, applied to
	// the templates as the transaction reads them (two owners saving
	// different kinds at once both keep theirs): a nil template goes back
	// to the default wording of its kind.
	TemplateKinds map[string]*nextup.MessageTemplate
	BookingURL    *string
	WaitEstimate  *bool
	// RetentionMonths sets Profile.RetentionMonths (0 turns it off).
	RetentionMonths *int
}

var slugRe = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$`)

// ValidSlug reports whether s has the form of a business's slug (UpdateProfile
// refuses any other), for a form that must check it before writing anything.
func ValidSlug(s string) bool { return slugRe.MatchString(s) }

// UpdateProfile patches a business's profile and catalogue (audited). A
// slug another business has is 409 slug_taken.
func (s *Businesses) UpdateProfile(ctx context.Context, businessID string, p ProfilePatch) (nextup.Business, error) {
	var out nextup.Business
	if p.Templates != nil {
		// Tried on sample data before the transaction opens.
		if f := templates.ValidateTemplates(*p.Templates); len(f) > 0 {
			return out, core.Invalid(f...)
		}
	}
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorStaff
		bi, err := w.Business(ctx, businessID)
		if err != nil {
			return core.NotFound("business", businessID, err)
		}
		prof := bi.Profile
		if p.Slug != nil {
			prof.Slug = strings.ToLower(strings.TrimSpace(*p.Slug))
		}
		if p.WaitEstimate != nil {
			prof.WaitEstimate = *p.WaitEstimate
		}
		if p.RetentionMonths != nil {
			if m := *p.RetentionMonths; m < 0 || m > nextup.MaxRetentionMonths {
				return core.Invalid(nextup.FieldError{Field: "retention_months",
					Message: fmt.Sprintf("must be 0 (off) to %d months", nextup.MaxRetentionMonths)})
			}
			prof.RetentionMonths = *p.RetentionMonths
		}
		if p.OwnerEmail != nil {
			prof.OwnerEmail = strings.TrimSpace(*p.OwnerEmail)
		}
		if p.Country != nil {
			prof.Country = strings.ToUpper(strings.TrimSpace(*p.Country))
		}
		if p.InboundSenders != nil {
			prof.InboundSenders = *p.InboundSenders
		}
		if p.Services != nil {
			prof.Services = *p.Services
		}
		if p.Staff != nil {
			prof.Staff = *p.Staff
		}
		if p.WebhookURL != nil {
			prof.WebhookURL = strings.TrimSpace(*p.WebhookURL)
		}
		templatesChanged := false
		if p.TemplateKinds != nil {
			next := maps.Clone(prof.Templates)
			if next == nil {
				next = map[string]nextup.MessageTemplate{}
			}
			for k, t := range p.TemplateKinds {
				if t == nil {
					delete(next, k)
				} else {
					next[k] = *t
				}
			}
			if f := templates.ValidateTemplates(next); len(f) > 0 {
				return core.Invalid(f...)
			}
			p.Templates = &next
		}
		if p.Templates != nil {
			if same, err := sameJSON(prof.Templates, *p.Templates); err != nil {
				return err
			} else if !same && !(len(prof.Templates) == 0 && len(*p.Templates) == 0) {
				prof.Templates, templatesChanged = *p.Templates, true
				prof.TemplatesVersion++
			}
		}
		if p.BookingURL != nil {
			prof.BookingURL = strings.TrimSpace(*p.BookingURL)
		}
		if f := validateProfile(&prof); len(f) > 0 {
			return core.Invalid(f...)
		}
		if err := w.Tx.BusinessProfileSet(ctx, businessID, prof); err != nil {
			if errors.Is(err, nextup.ErrConflict) {
				return &nextup.Error{Kind: nextup.ErrConflict, Code: nextup.CodeSlugTaken, Message: "another business has the slug " + prof.Slug}
			}
			return err
		}
		bi.Profile = prof
		out = bi.Business
		detail := map[string]any{"slug": prof.Slug, "services": len(prof.Services), "staff": len(prof.Staff)}
		if p.RetentionMonths != nil {
			detail["retention_months"] = prof.RetentionMonths // when personal data goes by itself is on the record
		}
		if p.BookingURL != nil {
			detail["booking_url"] = prof.BookingURL // which booking system claims go to is on the record
		}
		if templatesChanged {
			// The whole set, so that any version can be read back and
			// restored from the audit log alone.
			td := map[string]any{"version": prof.TemplatesVersion, "templates": prof.Templates}
			if p.RevertedFrom != nil {
				td["reverted_from"] = *p.RevertedFrom
			}
			if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBusiness, SubjectID: businessID,
				From: strconv.Itoa(prof.TemplatesVersion - 1), To: strconv.Itoa(prof.TemplatesVersion), Reason: ReasonTemplatesChanged, Detail: td}); err != nil {
				return err
			}
		}
		return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBusiness, SubjectID: businessID,
			To: "profile_changed", Detail: detail})
	})
	return out, err
}

// ReasonTemplatesChanged is the audit reason of a new version of a
// business's message templates; its detail holds the version and the
// whole set.
const ReasonTemplatesChanged = "templates_changed"

// TemplatesVersion is one version of a business's message templates.
type TemplatesVersion struct {
	Version      int
	At           time.Time
	Actor        string
	RevertedFrom *int // the version it restored, for a revert
	Templates    map[string]nextup.MessageTemplate
}

// TemplatesHistory lists the versions of a business's templates, newest
// first, down to version 0 (the defaults), read from the audit log.
func (s *Businesses) TemplatesHistory(ctx context.Context, businessID string) ([]TemplatesVersion, error) {
	var evs []nextup.AuditEvent
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		evs, err = tx.AuditList(ctx, nextup.AuditFilter{BusinessID: businessID, SubjectType: nextup.SubjectBusiness, SubjectID: businessID})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := []TemplatesVersion{{Version: 0}}
	for _, ev := range evs {
		if ev.Reason != ReasonTemplatesChanged {
			continue
		}
		v := TemplatesVersion{At: ev.At, Actor: ev.Actor}
		raw, err := json.Marshal(ev.Detail)
		if err != nil {
			return nil, err
		}
		var d struct {
			Version      int                               `json:"version"`
			RevertedFrom *int                              `json:"reverted_from"`
			Templates    map[string]nextup.MessageTemplate `json:"templates"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("templates version in audit row %d: %w", ev.ID, err)
		}
		v.Version, v.RevertedFrom, v.Templates = d.Version, d.RevertedFrom, d.Templates
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b TemplatesVersion) int { return b.Version - a.Version })
	return out, nil
}

// RevertTemplates makes version's templates the business's again, as a
// new version (the history only grows): 0 goes back to the defaults.
func (s *Businesses) RevertTemplates(ctx context.Context, businessID string, version int) (nextup.Business, error) {
	history, err := s.TemplatesHistory(ctx, businessID)
	if err != nil {
		return nextup.Business{}, err
	}
	for _, v := range history {
		if v.Version == version {
			ts := v.Templates
			if ts == nil {
				ts = map[string]nextup.MessageTemplate{}
			}
			return s.UpdateProfile(ctx, businessID, ProfilePatch{Templates: &ts, RevertedFrom: &version})
		}
	}
	return nextup.Business{}, nextup.Errorf(nextup.ErrNotFound, nextup.CodeNotFound, "the templates have no version %d", version)
}

// NewBookingEventsSecret makes the business a new secret for its booking
// tool's events (POST …/booking-events), replacing any before it: events
// signed with the old one are refused from now on. The secret is returned
// once; the audit row records only that it changed.
func (s *Businesses) NewBookingEventsSecret(ctx context.Context, businessID string) (string, error) {
	var secret string
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorStaff
		bi, err := w.Business(ctx, businessID)
		if err != nil {
			return core.NotFound("business", businessID, err)
		}
		token, _ := w.s.Random.Token()
		secret = "nbe_" + token
		prof := bi.Profile
		replaced := prof.BookingEvents != nil
		prof.BookingEvents = &nextup.BookingEventsConfig{Secret: secret, Since: w.Now}
		if err := w.Tx.BusinessProfileSet(ctx, businessID, prof); err != nil {
			return err
		}
		bi.Profile = prof
		return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBusiness, SubjectID: businessID,
			To: "booking_events_secret_set", Detail: map[string]any{"replaced": replaced}})
	})
	return secret, err
}

func validateProfile(p *nextup.Profile) []nextup.FieldError {
	var f []nextup.FieldError
	if p.Slug != "" && !slugRe.MatchString(p.Slug) {
		f = append(f, nextup.FieldError{Field: "slug", Message: "2 to 40 lowercase letters, digits and dashes, not starting or ending with a dash"})
	}
	if p.OwnerEmail != "" && !nextup.ValidEmail(p.OwnerEmail) {
		f = append(f, nextup.FieldError{Field: "owner_email", Message: "is not an email address"})
	}
	if p.WebhookURL != "" && !httpURL(p.WebhookURL) {
		f = append(f, nextup.FieldError{Field: "webhook_url", Message: "must be an http(s) URL"})
	}
	if p.BookingURL != "" && !httpURL(p.BookingURL) {
		f = append(f, nextup.FieldError{Field: "booking_url", Message: "must be an absolute http(s) URL"})
	}
	if p.Country != "" && !validCountry(p.Country) {
		f = append(f, nextup.FieldError{Field: "country", Message: "must be an ISO 3166-1 country code such as GB"})
	}
	for i, a := range p.InboundSenders {
		if !nextup.ValidEmail(a) {
			f = append(f, nextup.FieldError{Field: fmt.Sprintf("inbound_senders[%d]", i), Message: "is not an email address"})
		}
	}
	seen := map[string]bool{}
	for i := range p.Services {
		sv := &p.Services[i]
		sv.Name = strings.TrimSpace(sv.Name)
		key := strings.ToLower(sv.Name)
		switch {
		case sv.Name == "" || len(sv.Name) > 100:
			f = append(f, nextup.FieldError{Field: fmt.Sprintf("services[%d].name", i), Message: "is required (at most 100 characters)"})
		case seen[key]:
			f = append(f, nextup.FieldError{Field: fmt.Sprintf("services[%d].name", i), Message: "appears twice"})
		default:
			if fe := nextup.CheckName(fmt.Sprintf("services[%d].name", i), sv.Name, 100); fe != nil {
				f = append(f, *fe)
			}
		}
		seen[key] = true
		if sv.DurationMinutes < 0 || sv.DurationMinutes > 24*60 {
			f = append(f, nextup.FieldError{Field: fmt.Sprintf("services[%d].duration_minutes", i), Message: "must be between 0 and 1440"})
		}
		if sv.PriceCents < 0 {
			f = append(f, nextup.FieldError{Field: fmt.Sprintf("services[%d].price_cents", i), Message: "must not be negative"})
		}
	}
	staff := map[string]bool{}
	for i, name := range p.Staff {
		p.Staff[i] = strings.TrimSpace(name)
		if p.Staff[i] == "" || staff[strings.ToLower(p.Staff[i])] {
			f = append(f, nextup.FieldError{Field: fmt.Sprintf("staff[%d]", i), Message: "must be a name, once"})
		} else if fe := nextup.CheckName(fmt.Sprintf("staff[%d]", i), p.Staff[i], 0); fe != nil {
			f = append(f, *fe)
		}
		staff[strings.ToLower(p.Staff[i])] = true
	}
	return f
}

// httpURL reports whether s is an absolute http or https URL with a host.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// RulesHistory lists a business's rules changes, oldest first: each audit
// row says which version replaced which, who did it and the patch.
func (s *Businesses) RulesHistory(ctx context.Context, businessID string) ([]nextup.AuditEvent, error) {
	var out []nextup.AuditEvent
	err := s.Read(ctx, func(tx nextup.Tx) error {
		evs, err := tx.AuditList(ctx, nextup.AuditFilter{BusinessID: businessID, SubjectType: nextup.SubjectBusiness, SubjectID: businessID})
		for _, ev := range evs {
			if ev.Reason == "rules_changed" {
				out = append(out, ev)
			}
		}
		return err
	})
	return out, err
}

// housekeepingBatch bounds the work of one housekeeping run.
const housekeepingBatch = 500

// housekeeping is the daily timer of a business: entries whose window has
// passed expire, old idempotency records and expired staff sessions are
// purged, and the next run is scheduled.
func (w *work) housekeeping(ctx context.Context, t nextup.Timer) error {
	bi, err := w.Business(ctx, t.BusinessID)
	if err != nil {
		return err
	}
	// Each expired entry writes itself, an audit row and the counts of
	// its place (core.RankWrites); on a bounded store the batch leaves as
	// much again for the purges below (which
	// bound themselves there), so the whole run fits one transaction.
	batch := w.Batch(housekeepingBatch, 3+core.RankWrites)
	expired, err := w.Tx.EntryExpireBefore(ctx, bi.ID, w.Now, batch)
	if err != nil {
		return err
	}
	for _, e := range expired {
		if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectEntry, SubjectID: e.ID,
			From: string(nextup.EntryWaiting), To: string(nextup.EntryExpired), Reason: "window_passed"}); err != nil {
			return err
		}
	}
	if _, err := w.Tx.IdempotencyPurge(ctx, w.Now); err != nil {
		return err
	}
	if _, err := w.Tx.SessionPurge(ctx, w.Now); err != nil {
		return err
	}
	// The day's retention sweep, when the business keeps personal data
	// for a number of months only (package people): keyed by the day,
	// so a second run of housekeeping the same day adds nothing.
	if bi.Profile.RetentionMonths > 0 {
		if err := w.Schedule(ctx, people.RetentionTimer(bi.ID, w.Now)); err != nil {
			return err
		}
	}
	// The monthly summary's timer, for a business made before there were
	// summaries (keyed by its month: scheduling it again changes nothing).
	if err := w.Schedule(ctx, insight.SummaryTimer(bi.Business, w.Now)); err != nil {
		return err
	}
	next := nextLocal(w.Now.Add(time.Minute), housekeepingAt, bi.Loc)
	if len(expired) == batch {
		// More to do: come back in a minute rather than tomorrow, keeping
		// each transaction small.
		next = w.Now.Add(time.Minute)
	}
	return w.Schedule(ctx, nextup.Timer{BusinessID: bi.ID, Kind: nextup.TimerHousekeeping, SubjectID: bi.ID,
		Key: housekeepingKey(bi.ID) + ":" + next.Format("20060102"), DueAt: next})
}

// housekeepingKey is the key of a business's housekeeping timer.
func housekeepingKey(bid string) string { return nextup.TimerHousekeeping + ":" + bid }

// Housekeeping runs the daily housekeeping timer of a business in w (see
// housekeeping); waitlist's timer handler calls it.
func Housekeeping(ctx context.Context, w *core.Work, t nextup.Timer) error {
	return wrap(w).housekeeping(ctx, t)
}
