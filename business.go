package nextup

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Business is a tenant. Every other row belongs to exactly one business and
// no query crosses businesses.
type Business struct {
	ID         string
	Name       string
	Timezone   string // IANA name, e.g. "Europe/London"
	Rules      Rules
	APIKeyHash string // SHA-256 of the business API key, hex; the key itself is never stored
	Profile    Profile
	CreatedAt  time.Time
}

// Profile is a business's public face and catalogue: the slug names its
// public pages and inbound address; services and staff are what the join
// form offers and the parsers match against; prices feed the "revenue
// recovered" figures; country is the default for phone numbers.
type Profile struct {
	Slug           string    `json:"slug,omitempty"`
	OwnerEmail     string    `json:"owner_email,omitempty"`
	Country        string    `json:"country,omitempty"` // ISO 3166-1 alpha-2, e.g. "GB"
	InboundSenders []string  `json:"inbound_senders,omitempty"`
	Services       []Service `json:"services,omitempty"`
	Staff          []string  `json:"staff,omitempty"`
	// WebhookURL, when set, receives the business's events (offer.created,
	// offer.claimed, booking.cancelled, ...) as signed JSON POSTs.
	WebhookURL string `json:"webhook_url,omitempty"`
	// BookingURL, when set, is the business's own booking system: every
	// claim is POSTed there and confirmed only when it answers 2xx (see
	// BookingSystem). Empty: nextup's own bookings are the truth.
	BookingURL string `json:"booking_url,omitempty"`
	// Templates word the business's messages its own way, by kind
	// (offer, confirmation, reminder, ...); a kind or part left out
	// keeps the default.
	Templates map[string]MessageTemplate `json:"templates,omitempty"`
	// TemplatesVersion counts the changes of Templates, as Rules.Version
	// counts the rules': 0 is the defaults as shipped, and each message
	// carries the version it was written with. Every version's templates
	// are kept in the audit log (templates_changed), so any can be read
	// back or restored.
	TemplatesVersion int `json:"templates_version,omitempty"`
	// Sheet, when set, is the sheet the waitlist is mirrored from.
	Sheet *SheetConfig `json:"sheet,omitempty"`
	// WaitEstimate shows people on the list how long those before them
	// waited for the same thing, on their status page, when there is
	// history enough to say (insight.EstimateWait).
	WaitEstimate bool `json:"wait_estimate,omitempty"`
	// BookingEvents, when set, lets the business's booking tool tell
	// nextup of cancellations, no-shows, bookings and openings (POST
	// …/booking-events), signed with its secret.
	BookingEvents *BookingEventsConfig `json:"booking_events,omitempty"`
	// RetentionMonths, when above 0, erases a person's personal data by
	// itself that many months after their last entry ended (package
	// waitlist/people, daily): 0 keeps it until staff erase it.
	RetentionMonths int `json:"retention_months,omitempty"`
}

// MaxRetentionMonths is the longest retention a business may set: ten
// years.
const MaxRetentionMonths = 120

// BookingEventsConfig is the secret a business's booking tool signs its
// events with (a Nextup-Signature under it), and since when. The secret
// is shown once, when made; a business's JSON carries only Since.
type BookingEventsConfig struct {
	Secret string    `json:"secret,omitempty"`
	Since  time.Time `json:"since"`
}

// SheetConfig names a business's waitlist sheet: a Google Sheet (its id
// and an optional A1 range) or a published CSV URL, read every
// EverySeconds.
type SheetConfig struct {
	SpreadsheetID string `json:"spreadsheet_id,omitempty"`
	Range         string `json:"range,omitempty"`
	URL           string `json:"url,omitempty"`
	EverySeconds  int    `json:"every_seconds"`
	// Columns, when set, is the owner's mapping of the sheet's header
	// cells to entry fields, used instead of recognising the header by
	// its names: a header cell it does not list is left out.
	Columns []SheetColumn `json:"columns,omitempty"`
}

// SheetColumn maps one header cell of a sheet, as the sheet writes it, to
// the entry field its column fills (the field names of intake/csvrows:
// name, email, phone, service, party_size, earliest, latest, date, staff,
// notes, priority, channel, joined_at, status, ...); an empty Field
// leaves the column out.
type SheetColumn struct {
	Header string `json:"header"`
	Field  string `json:"field"`
}

// Writable reports whether nextup can write back to the sheet (mark a
// claimed row booked): a Google Sheet can be; a published CSV is only read.
func (c *SheetConfig) Writable() bool { return c != nil && c.SpreadsheetID != "" && c.URL == "" }

// SheetLink reads what an owner pastes as their sheet's address: a Google
// Sheets link (https://docs.google.com/spreadsheets/d/ID/edit#gid=0, or
// the same without /edit) is the spreadsheet ID; a link to a sheet
// published as CSV (…/spreadsheets/d/e/…/pub?output=csv, an
// …/export?format=csv link) or any other https URL is a CSV URL; text
// without a slash is taken for a spreadsheet id as it is.
func SheetLink(link string) SheetSource {
	link = strings.TrimSpace(link)
	if !strings.Contains(link, "/") {
		return SheetSource{SpreadsheetID: link}
	}
	u, err := url.Parse(link)
	if err != nil || u.Host != "docs.google.com" {
		return SheetSource{URL: link}
	}
	rest, ok := strings.CutPrefix(u.Path, "/spreadsheets/d/")
	if !ok {
		return SheetSource{URL: link}
	}
	id, tail, _ := strings.Cut(rest, "/")
	switch tail {
	case "", "edit", "view", "htmlview", "preview":
		if id != "" && id != "e" {
			return SheetSource{SpreadsheetID: id}
		}
	}
	return SheetSource{URL: link}
}

// SheetSource names a sheet: a spreadsheet id with an optional A1 range (the
// first sheet's used range when empty), or a CSV URL.
type SheetSource struct {
	SpreadsheetID string
	Range         string
	URL           string
}

// String names the source as versions record it.
func (s SheetSource) String() string {
	if s.URL != "" {
		return s.URL
	}
	if s.Range != "" {
		return s.SpreadsheetID + "!" + s.Range
	}
	return s.SpreadsheetID
}

// Validate says what is wrong with s, or nil.
func (s SheetSource) Validate() error {
	switch {
	case (s.URL == "") == (s.SpreadsheetID == ""):
		return errors.New("give either a CSV url or a spreadsheet_id")
	case s.URL != "":
		u, err := url.Parse(s.URL)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return errors.New("url must be an https URL of a CSV export")
		}
	case strings.ContainsAny(s.SpreadsheetID, "/?# "):
		return errors.New("spreadsheet_id is the id in the sheet's URL, not the URL")
	}
	return nil
}

// SheetCell is one cell to write in a sheet, by its place among the rows
// a read of it returned: Row and Col from 0.
type SheetCell struct {
	Row, Col int
	Value    string
}

// MessageTemplate is a business's wording of one kind of message: Go
// templates (text/template; html/template for HTML, which escapes what it
// fills in) over the fields the waitlist package documents. Empty parts
// keep the default.
type MessageTemplate struct {
	Subject string `json:"subject,omitempty"`
	Text    string `json:"text,omitempty"`
	HTML    string `json:"html,omitempty"`
	SMS     string `json:"sms,omitempty"`
}

// Service is one bookable service of a business's catalogue.
type Service struct {
	Name            string   `json:"name"`
	Synonyms        []string `json:"synonyms,omitempty"`
	DurationMinutes int      `json:"duration_minutes,omitempty"`
	PriceCents      int64    `json:"price_cents,omitempty"`
}

// Location loads the business timezone. Timezones are validated when a
// business is created, so an error here means a broken tzdata install.
func (b Business) Location() (*time.Location, error) {
	return time.LoadLocation(b.Timezone)
}

// Order policies. The policy is named and versioned so staff and customers
// can be shown exactly how the order works.
const (
	// OrderFCFSPriority is priority first, then joined-at, then sequence.
	OrderFCFSPriority = "fcfs-priority/v1"
)

// Position visibility settings: what a customer is told about their place.
const (
	PositionExact  = "exact"
	PositionBand   = "band"
	PositionHidden = "hidden"
)

// Rules is a business's written-down policy. Every change bumps Version and
// every audit row records the version it was decided under.
type Rules struct {
	Version                  int
	ClaimWindow              time.Duration
	OrderPolicy              string
	QuietHours               *QuietHours // nil: no quiet hours
	TimeCriticalThroughQuiet bool
	MinLead                  time.Duration
	MaxOffersPerPersonPerDay int // 0: no cap
	MaxOffersPerSlot         int // 0: try the whole list (null in the API)
	DownFit                  bool
	PositionVisibility       string
	// ReminderOffsets are how long before a booked slot starts its
	// reminders go (moved out of quiet hours); empty sends none.
	ReminderOffsets []time.Duration
	// Requeue is what happens to a person whose offer of a slot lapses
	// or who declines it. An event follows its own setting instead
	// (EventSettings.Requeue, by default DefaultEventRequeue).
	Requeue Requeue
	// ClaimWindowLadder scales the claim window to how soon the slot
	// starts: the first step, in order of LeadUnder, whose LeadUnder is
	// more than the time left to the start gives the window; a slot
	// further off gets ClaimWindow. Empty: ClaimWindow always. Either way
	// the window ends by the start minus MinLead. An event's own claim
	// window replaces both (engine.RulesFor).
	ClaimWindowLadder []LadderStep
	// FollowUp is when an offer nobody has opened is followed up, and on
	// which channel.
	FollowUp FollowUp
	// Dedupe is which of a person's other entries a booking withdraws:
	// DedupeSameService, DedupeAll, or "" for off (the API's "off").
	Dedupe string
}

// Cross-list dedupe: when a person books, which of their other active
// entries the booking makes pointless and withdraws (each audited, the
// person told).
const (
	DedupeOff         = "off"
	DedupeSameService = "same_service" // entries for the same service whose dates take in the booked slot's day
	DedupeAll         = "all"          // every other entry of theirs, in every list
)

// LadderStep is one step of the claim window ladder: a slot starting in
// less than LeadUnder gets Window to be claimed.
type LadderStep struct {
	LeadUnder time.Duration
	Window    time.Duration
}

// FollowUp is the follow-up of an offer not yet opened: the same claim
// link once more after AfterShare of its window (0 reads as the default,
// a half), on the person's other channel; with SameChannelWhenNoOther,
// on the same channel when they have no other (email-only and phone-only
// people). An offer whose link was opened gets none.
type FollowUp struct {
	AfterShare             float64 `json:"after_share"`
	SameChannelWhenNoOther bool    `json:"same_channel_when_no_other"`
}

// DefaultFollowUpShare is the share of a claim window after which an
// unopened offer is followed up unless the rules say otherwise.
const DefaultFollowUpShare = 0.5

// Share is the follow-up's share of the window (DefaultFollowUpShare for 0).
func (f FollowUp) Share() float64 {
	if f.AfterShare == 0 {
		return DefaultFollowUpShare
	}
	return f.AfterShare
}

// WindowFor is the claim window of an offer made lead before its slot
// starts: the ladder's step for that lead, or ClaimWindow.
func (r Rules) WindowFor(lead time.Duration) time.Duration {
	for _, s := range r.ClaimWindowLadder {
		if lead < s.LeadUnder {
			return s.Window
		}
	}
	return r.ClaimWindow
}

// Requeue is the re-queue rule: what happens to a person whose offer
// lapses (the claim window passed unanswered) or who declines it. Offers
// that end for other reasons (staff withdrew it, it could not be sent)
// are not the person's doing and count for nothing.
//
// Every lapse or decline is counted on the entry (Entry.Lapses). When
// DropAfter is above zero, the lapse or decline that brings the count to
// DropAfter takes the person off the waitlist, whatever the policy;
// before that (and always, with DropAfter zero) the policy decides:
//
//   - keep: they keep their place in line.
//   - back: they go to the back of the line: they count as having joined
//     at that moment, behind everyone already waiting (see Entry).
//   - drop: as keep until the DropAfter-th lapse, which drops them; so
//     drop needs a DropAfter of at least 1.
//
// Either way the person is never offered the same slot again.
type Requeue struct {
	Policy    string `json:"policy"`     // RequeueKeep, RequeueBack or RequeueDrop
	DropAfter int    `json:"drop_after"` // 0: never dropped for lapses
}

// Re-queue policies.
const (
	RequeueKeep = "keep"
	RequeueBack = "back"
	RequeueDrop = "drop"
)

// DefaultEventRequeue is an event's re-queue rule unless its organiser
// chose another: to the back of the waitlist after a first lapse or
// decline, off it after the second, so that a guest who cannot come
// does not sit at the front of the line.
func DefaultEventRequeue() Requeue { return Requeue{Policy: RequeueBack, DropAfter: 2} }

// maxDropAfter bounds Requeue.DropAfter: beyond it, "never" says the
// same thing.
const maxDropAfter = 100

// Validate reports every invalid field of q, named under prefix
// ("requeue" in the rules and in an event's settings).
func (q Requeue) Validate(prefix string) []FieldError {
	var errs []FieldError
	switch q.Policy {
	case RequeueKeep, RequeueBack, RequeueDrop:
	default:
		errs = append(errs, FieldError{prefix + ".policy", "must be keep, back or drop"})
	}
	switch {
	case q.DropAfter < 0 || q.DropAfter > maxDropAfter:
		errs = append(errs, FieldError{prefix + ".drop_after", fmt.Sprintf("must be between 0 and %d", maxDropAfter)})
	case q.Policy == RequeueDrop && q.DropAfter == 0:
		errs = append(errs, FieldError{prefix + ".drop_after", "must be at least 1 when the policy is drop"})
	}
	return errs
}

// DefaultRules returns the defaults of API.md.
func DefaultRules() Rules {
	return Rules{
		Version:                  1,
		ClaimWindow:              600 * time.Second,
		OrderPolicy:              OrderFCFSPriority,
		QuietHours:               &QuietHours{Start: 21 * 60, End: 8 * 60},
		MinLead:                  900 * time.Second,
		MaxOffersPerPersonPerDay: 3,
		PositionVisibility:       PositionExact,
		ReminderOffsets:          []time.Duration{24 * time.Hour, time.Hour},
		Requeue:                  Requeue{Policy: RequeueKeep},
		FollowUp:                 FollowUp{AfterShare: DefaultFollowUpShare},
	}
}

// Validate reports every invalid field of r.
func (r Rules) Validate() []FieldError {
	var errs []FieldError
	if r.ClaimWindow < time.Minute || r.ClaimWindow > 7*24*time.Hour {
		errs = append(errs, FieldError{"claim_window_seconds", "must be between 60 and 604800"})
	}
	if r.OrderPolicy != OrderFCFSPriority {
		errs = append(errs, FieldError{"order_policy", "must be " + OrderFCFSPriority})
	}
	if r.QuietHours != nil && r.QuietHours.Start == r.QuietHours.End {
		errs = append(errs, FieldError{"quiet_hours", "start and end must differ"})
	}
	if r.MinLead < 0 || r.MinLead > 30*24*time.Hour {
		errs = append(errs, FieldError{"min_lead_seconds", "must be between 0 and 2592000"})
	}
	if r.MaxOffersPerPersonPerDay < 0 {
		errs = append(errs, FieldError{"max_offers_per_person_per_day", "must not be negative"})
	}
	if r.MaxOffersPerSlot < 0 {
		errs = append(errs, FieldError{"max_offers_per_slot", "must be null or positive"})
	}
	switch r.PositionVisibility {
	case PositionExact, PositionBand, PositionHidden:
	default:
		errs = append(errs, FieldError{"position_visibility", "must be exact, band or hidden"})
	}
	if len(r.ReminderOffsets) > 5 {
		errs = append(errs, FieldError{"reminder_offsets_seconds", "at most 5 reminders"})
	}
	for i, d := range r.ReminderOffsets {
		if d < 5*time.Minute || d > 30*24*time.Hour {
			errs = append(errs, FieldError{fmt.Sprintf("reminder_offsets_seconds[%d]", i), "must be between 300 and 2592000"})
		}
		for _, e := range r.ReminderOffsets[:i] {
			if e == d {
				errs = append(errs, FieldError{fmt.Sprintf("reminder_offsets_seconds[%d]", i), "appears twice"})
			}
		}
	}
	if len(r.ClaimWindowLadder) > maxLadderSteps {
		errs = append(errs, FieldError{"claim_window_ladder", fmt.Sprintf("at most %d steps", maxLadderSteps)})
	}
	for i, s := range r.ClaimWindowLadder {
		field := fmt.Sprintf("claim_window_ladder[%d]", i)
		if s.LeadUnder < time.Minute || s.LeadUnder > 30*24*time.Hour {
			errs = append(errs, FieldError{field + ".lead_under_seconds", "must be between 60 and 2592000"})
		}
		if s.Window < time.Minute || s.Window > 7*24*time.Hour {
			errs = append(errs, FieldError{field + ".window_seconds", "must be between 60 and 604800"})
		}
		if i > 0 && s.LeadUnder == r.ClaimWindowLadder[i-1].LeadUnder {
			errs = append(errs, FieldError{field + ".lead_under_seconds", "appears twice"})
		}
	}
	switch r.Dedupe {
	case "", DedupeOff, DedupeSameService, DedupeAll:
	default:
		errs = append(errs, FieldError{"dedupe", "must be off, same_service or all"})
	}
	if f := r.FollowUp.AfterShare; f != 0 && (f < 0.1 || f > 0.9) {
		errs = append(errs, FieldError{"follow_up.after_share", "must be between 0.1 and 0.9"})
	}
	return append(errs, r.Requeue.Validate("requeue")...)
}

// maxLadderSteps is how many steps a claim window ladder may have.
const maxLadderSteps = 8

// maxRuleSeconds bounds the *_seconds fields of rules while parsing (ten
// years), far above what Validate allows and far below overflow.
const maxRuleSeconds = 10 * 365 * 24 * 3600

// nullsOnlyWhereMeant refuses a JSON null in a rules object b anywhere
// but as the value of one of the top-level fields named (where null means
// "none"): encoding/json would read null elsewhere as "keep the value"
// (the whole object, a field) or as zero (an item of a list), so a
// request sending it would be taken as one it did not say. Malformed
// JSON passes, for the decoder to report.
func nullsOnlyWhereMeant(b []byte, nullable ...string) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return errors.New("rules: must be a JSON object")
	}
	var null func(v any) bool
	null = func(v any) bool {
		switch v := v.(type) {
		case nil:
			return true
		case map[string]any:
			for _, x := range v {
				if null(x) {
					return true
				}
			}
		case []any:
			for _, x := range v {
				if null(x) {
					return true
				}
			}
		}
		return false
	}
	for k, x := range obj {
		if x == nil && slices.Contains(nullable, k) {
			continue
		}
		if null(x) {
			return fmt.Errorf("rules: %s: null is not a value here (leave the field out to keep it)", k)
		}
	}
	return nil
}

// rulesJSON is the wire shape of Rules in API.md.
type rulesJSON struct {
	Version                  int          `json:"version"`
	ClaimWindowSeconds       int64        `json:"claim_window_seconds"`
	OrderPolicy              string       `json:"order_policy"`
	QuietHours               *QuietHours  `json:"quiet_hours"`
	TimeCriticalThroughQuiet bool         `json:"time_critical_through_quiet"`
	MinLeadSeconds           int64        `json:"min_lead_seconds"`
	MaxOffersPerPersonPerDay int          `json:"max_offers_per_person_per_day"`
	MaxOffersPerSlot         *int         `json:"max_offers_per_slot"`
	DownFit                  bool         `json:"down_fit"`
	PositionVisibility       string       `json:"position_visibility"`
	ReminderOffsetsSeconds   []int64      `json:"reminder_offsets_seconds"`
	Requeue                  Requeue      `json:"requeue"`
	ClaimWindowLadder        []ladderJSON `json:"claim_window_ladder"`
	FollowUp                 FollowUp     `json:"follow_up"`
	Dedupe                   string       `json:"dedupe"`
}

// ladderJSON is a LadderStep on the wire.
type ladderJSON struct {
	LeadUnderSeconds int64 `json:"lead_under_seconds"`
	WindowSeconds    int64 `json:"window_seconds"`
}

func ladderToJSON(steps []LadderStep) []ladderJSON {
	out := make([]ladderJSON, 0, len(steps)) // never null: "no ladder" reads as []
	for _, s := range steps {
		out = append(out, ladderJSON{int64(s.LeadUnder / time.Second), int64(s.Window / time.Second)})
	}
	return out
}

// MarshalJSON writes the API.md shape.
func (r Rules) MarshalJSON() ([]byte, error) {
	w := rulesJSON{
		Version:                  r.Version,
		ClaimWindowSeconds:       int64(r.ClaimWindow / time.Second),
		OrderPolicy:              r.OrderPolicy,
		QuietHours:               r.QuietHours,
		TimeCriticalThroughQuiet: r.TimeCriticalThroughQuiet,
		MinLeadSeconds:           int64(r.MinLead / time.Second),
		MaxOffersPerPersonPerDay: r.MaxOffersPerPersonPerDay,
		DownFit:                  r.DownFit,
		PositionVisibility:       r.PositionVisibility,
		Requeue:                  r.Requeue,
		ClaimWindowLadder:        ladderToJSON(r.ClaimWindowLadder),
		FollowUp:                 r.FollowUp, // after_share 0 (rules stored before it) is the default, a half
		Dedupe:                   cmp.Or(r.Dedupe, DedupeOff),
	}
	if r.MaxOffersPerSlot > 0 {
		n := r.MaxOffersPerSlot
		w.MaxOffersPerSlot = &n
	}
	w.ReminderOffsetsSeconds = durationsToSeconds(r.ReminderOffsets)
	return json.Marshal(w)
}

// UnmarshalJSON reads the API.md shape. Absent fields keep the value r had,
// so decoding onto DefaultRules (or the current rules, for a PATCH) works.
func (r *Rules) UnmarshalJSON(b []byte) error {
	w := rulesJSON{
		Version:                  r.Version,
		ClaimWindowSeconds:       int64(r.ClaimWindow / time.Second),
		OrderPolicy:              r.OrderPolicy,
		QuietHours:               r.QuietHours,
		TimeCriticalThroughQuiet: r.TimeCriticalThroughQuiet,
		MinLeadSeconds:           int64(r.MinLead / time.Second),
		MaxOffersPerPersonPerDay: r.MaxOffersPerPersonPerDay,
		DownFit:                  r.DownFit,
		PositionVisibility:       r.PositionVisibility,
		Requeue:                  r.Requeue,
		ClaimWindowLadder:        ladderToJSON(r.ClaimWindowLadder),
		FollowUp:                 r.FollowUp,
		Dedupe:                   cmp.Or(r.Dedupe, DedupeOff),
	}
	if r.MaxOffersPerSlot > 0 {
		n := r.MaxOffersPerSlot
		w.MaxOffersPerSlot = &n
	}
	w.ReminderOffsetsSeconds = durationsToSeconds(r.ReminderOffsets)
	if w.Requeue.Policy == "" {
		// Rules stored before the re-queue rule existed keep their place
		// after a lapse, as they did then.
		w.Requeue.Policy = RequeueKeep
	}
	if err := nullsOnlyWhereMeant(b, "quiet_hours", "max_offers_per_slot"); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields() // a typo must be an error, not a silent no-op
	if err := dec.Decode(&w); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("rules: trailing data after the object")
	}
	for name, v := range map[string]int64{"claim_window_seconds": w.ClaimWindowSeconds, "min_lead_seconds": w.MinLeadSeconds} {
		// Bound before converting to a Duration so a huge value cannot
		// overflow into a small valid one; Validate applies the real limits.
		if v < -maxRuleSeconds || v > maxRuleSeconds {
			return fmt.Errorf("rules: %s out of range", name)
		}
	}
	if len(w.ReminderOffsetsSeconds) > 100 {
		return errors.New("rules: reminder_offsets_seconds: too many")
	}
	if len(w.ClaimWindowLadder) > 100 {
		return errors.New("rules: claim_window_ladder: too many steps")
	}
	var ladder []LadderStep
	for _, s := range w.ClaimWindowLadder {
		if s.LeadUnderSeconds < -maxRuleSeconds || s.LeadUnderSeconds > maxRuleSeconds || s.WindowSeconds < -maxRuleSeconds || s.WindowSeconds > maxRuleSeconds {
			return errors.New("rules: claim_window_ladder out of range")
		}
		ladder = append(ladder, LadderStep{time.Duration(s.LeadUnderSeconds) * time.Second, time.Duration(s.WindowSeconds) * time.Second})
	}
	// Kept in order of lead, so the first step that applies is the
	// tightest (Validate refuses a lead given twice).
	slices.SortStableFunc(ladder, func(a, b LadderStep) int { return cmp.Compare(a.LeadUnder, b.LeadUnder) })
	if math.IsNaN(w.FollowUp.AfterShare) || math.IsInf(w.FollowUp.AfterShare, 0) {
		return errors.New("rules: follow_up.after_share is not a number")
	}
	var reminders []time.Duration
	for _, v := range w.ReminderOffsetsSeconds {
		if v < -maxRuleSeconds || v > maxRuleSeconds {
			return errors.New("rules: reminder_offsets_seconds out of range")
		}
		reminders = append(reminders, time.Duration(v)*time.Second)
	}
	*r = Rules{
		Version:                  w.Version,
		ClaimWindow:              time.Duration(w.ClaimWindowSeconds) * time.Second,
		OrderPolicy:              w.OrderPolicy,
		QuietHours:               w.QuietHours,
		TimeCriticalThroughQuiet: w.TimeCriticalThroughQuiet,
		MinLead:                  time.Duration(w.MinLeadSeconds) * time.Second,
		MaxOffersPerPersonPerDay: w.MaxOffersPerPersonPerDay,
		DownFit:                  w.DownFit,
		PositionVisibility:       w.PositionVisibility,
		ReminderOffsets:          reminders,
		Requeue:                  w.Requeue,
		ClaimWindowLadder:        ladder,
		FollowUp:                 w.FollowUp,
		Dedupe:                   w.Dedupe,
	}
	if r.Dedupe == DedupeOff {
		r.Dedupe = "" // off is the zero value: rules stored before it read the same
	}
	if w.MaxOffersPerSlot != nil {
		r.MaxOffersPerSlot = *w.MaxOffersPerSlot
		if r.MaxOffersPerSlot == 0 {
			r.MaxOffersPerSlot = -1 // zero tries is not a policy; Validate rejects it
		}
	}
	return nil
}

// durationsToSeconds writes durations as whole seconds; never null, so
// "no reminders" reads as [] in the API.
func durationsToSeconds(ds []time.Duration) []int64 {
	out := make([]int64, 0, len(ds))
	for _, d := range ds {
		out = append(out, int64(d/time.Second))
	}
	return out
}

// QuietHours is a daily interval in business local time during which offers
// are not sent. End before Start means it crosses midnight (21:00–08:00).
type QuietHours struct {
	Start TimeOfDay `json:"start"`
	End   TimeOfDay `json:"end"`
}

// TimeOfDay is minutes since local midnight, written "HH:MM".
type TimeOfDay int

// ParseTimeOfDay parses "HH:MM" (00:00–23:59; "24:00" is accepted as the end of a day).
func ParseTimeOfDay(s string) (TimeOfDay, error) {
	var h, m int
	if len(s) != 5 || s[2] != ':' {
		return 0, fmt.Errorf("time of day %q: want HH:MM", s)
	}
	for i, c := range []byte(s) {
		if i == 2 {
			continue
		}
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("time of day %q: want HH:MM", s)
		}
	}
	h = int(s[0]-'0')*10 + int(s[1]-'0')
	m = int(s[3]-'0')*10 + int(s[4]-'0')
	if m > 59 || h > 24 || (h == 24 && m != 0) {
		return 0, fmt.Errorf("time of day %q: out of range", s)
	}
	return TimeOfDay(h*60 + m), nil
}

// String formats t as "HH:MM".
func (t TimeOfDay) String() string { return fmt.Sprintf("%02d:%02d", int(t)/60, int(t)%60) }

// Hour and Minute split t.
func (t TimeOfDay) Hour() int   { return int(t) / 60 }
func (t TimeOfDay) Minute() int { return int(t) % 60 }

// MarshalText writes "HH:MM".
func (t TimeOfDay) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText reads "HH:MM".
func (t *TimeOfDay) UnmarshalText(b []byte) error {
	v, err := ParseTimeOfDay(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}
