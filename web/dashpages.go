package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// The dashboard's other pages: the waitlist, hand-backs, messages and
// settings. Each reads through package waitlist for the signed-in staff
// member's business only; another business's ids are 404s.

// listEntry is one person on the waitlist page.
type listEntry struct {
	ID, Name, Contact, Service, Staff, Window, State, Joined string
	Position, PartySize                                      int
	Priority                                                 bool
	Earliest, Latest                                         string // yyyy-mm-dd, for the edit form
}

// pagesData fills the dashboard's list pages.
type pagesData struct {
	Title, Business, Staff, CSRF, Error, Notice string
	Entries                                     []listEntry
	Services, StaffNames                        []string
	Filter                                      struct{ Service, Staff, Date string }
	How                                         []string
	HandBacks                                   []listHandBack
	Proposals                                   []listProposal
	Messages                                    []listMessage
	MessageState                                string
	Rules                                       nextup.Rules
	RulesHistory                                []storyLine
	QuietStart, QuietEnd                        string
	Profile                                     nextup.Profile
	Requeue                                     []requeueOption
	Dedupe                                      []requeueOption
	Ladder                                      []ladderRow
	FollowUpPercent                             int
	ServiceRows                                 []serviceRow
	StaffLines                                  string
	// The booking tool's events: since when they are on, and a new
	// secret, shown once.
	BookingSince, BookingSecret, BookingURL string
}

// ladderRow is a claim window ladder step in the settings form, in
// hours and minutes ("" for an empty row).
type ladderRow struct{ Hours, Minutes string }

// ladderRows are the settings form's ladder rows: every step, and empty
// rows up to three.
func ladderRows(steps []nextup.LadderStep) []ladderRow {
	var out []ladderRow
	for _, s := range steps {
		out = append(out, ladderRow{Hours: strconv.FormatFloat(s.LeadUnder.Hours(), 'f', -1, 64), Minutes: strconv.FormatFloat(s.Window.Minutes(), 'f', -1, 64)})
	}
	for len(out) < 3 {
		out = append(out, ladderRow{})
	}
	return out
}

// dedupeOptions are the dedupe choices in the owner's words.
func dedupeOptions(current string) []requeueOption {
	current = cmpOr(current, nextup.DedupeOff)
	var out []requeueOption
	for _, o := range []struct{ v, label string }{
		{nextup.DedupeOff, "leave their other entries as they are"},
		{nextup.DedupeSameService, "take them off the same service's list for that day"},
		{nextup.DedupeAll, "take them off every other list they are on"},
	} {
		out = append(out, requeueOption{Value: o.v, Label: o.label, Selected: o.v == current})
	}
	return out
}

type listProposal struct {
	ID, Name, Contact, Service, Staff, Window, Received, Source, Excerpt, Problems string
	Party                                                                          int
}

type listHandBack struct {
	ID, Slot, Reason, Note, At string
}

type listMessage struct {
	ID, To, Kind, Channel, State, At, Subject, Error string
	Attempts, Wording                                int // Wording: the templates' version
	CanRetry                                         bool
}

func (s *Server) pagesBase(sc staffCtx, title string) pagesData {
	d := pagesData{Title: title, Business: sc.Business.Name, Staff: sc.Staff.Email, CSRF: sc.CSRF,
		StaffNames: sc.Business.Profile.Staff, Rules: sc.Business.Rules, Profile: sc.Business.Profile}
	for _, sv := range sc.Business.Profile.Services {
		d.Services = append(d.Services, sv.Name)
	}
	return d
}

func bizLoc(b nextup.Business) *time.Location {
	loc, err := b.Location()
	if err != nil {
		return time.UTC
	}
	return loc
}

// dashWaitlist is GET /dash/waitlist: everyone on the list in fair order,
// with their positions (per service queue), filtered by service, staff or a
// date they can come on.
func (s *Server) dashWaitlist(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	ctx := r.Context()
	d := s.pagesBase(sc, "Waitlist")
	q := r.URL.Query()
	d.Notice, d.Error = q.Get("notice"), q.Get("error")
	d.How = waitlist.HowTheOrderWorks(sc.Business.Rules)
	d.Filter.Service, d.Filter.Staff, d.Filter.Date = q.Get("service"), q.Get("staff"), q.Get("date")
	loc := bizLoc(sc.Business)
	var day time.Time
	if d.Filter.Date != "" {
		var err error
		if day, err = time.ParseInLocation("2006-01-02", d.Filter.Date, loc); err != nil {
			d.Error, d.Filter.Date = "The date must look like 2026-12-24.", ""
		}
	}
	entries, err := s.Svc.ListEntries(ctx, nextup.EntryFilter{BusinessID: sc.Business.ID, Service: d.Filter.Service, Limit: 1000})
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	positions := map[string]int{}
	for _, e := range entries {
		queue := e.Service + "\x00" + e.EventID
		if e.State == nextup.EntryWaiting {
			positions[queue]++
		}
		if d.Filter.Staff != "" && e.Staff != "" && e.Staff != d.Filter.Staff {
			continue
		}
		if !day.IsZero() && !availableOn(e, day) {
			continue
		}
		le := listEntry{ID: e.ID, Name: e.Name, Contact: strings.TrimSpace(e.Email + " " + e.Phone), Service: e.Service,
			Staff: e.Staff, State: string(e.State), PartySize: e.PartySize, Priority: e.Priority,
			Joined: e.JoinedAt.In(loc).Format("Mon 2 Jan 3:04 pm"), Window: windowWords(e, loc)}
		if e.State == nextup.EntryWaiting {
			le.Position = positions[queue]
		}
		if !e.Earliest.IsZero() {
			le.Earliest = e.Earliest.In(loc).Format("2006-01-02")
		}
		if !e.Latest.IsZero() {
			le.Latest = e.Latest.In(loc).Format("2006-01-02")
		}
		d.Entries = append(d.Entries, le)
	}
	s.renderStaff(w, http.StatusOK, "waitlist", d)
}

// availableOn says whether an entry could take a slot on day (its window
// and weekly availability allow that date).
func availableOn(e nextup.Entry, day time.Time) bool {
	end := day.AddDate(0, 0, 1)
	if !e.Earliest.IsZero() && !e.Earliest.Before(end) || !e.Latest.IsZero() && e.Latest.Before(day) {
		return false
	}
	if len(e.Availability) == 0 {
		return true
	}
	for _, a := range e.Availability {
		for _, wd := range a.Days {
			if wd == day.Weekday() {
				return true
			}
		}
	}
	return false
}

func windowWords(e nextup.Entry, loc *time.Location) string {
	var parts []string
	switch {
	case !e.Earliest.IsZero() && !e.Latest.IsZero():
		parts = append(parts, e.Earliest.In(loc).Format("2 Jan")+" – "+e.Latest.In(loc).Format("2 Jan"))
	case !e.Earliest.IsZero():
		parts = append(parts, "from "+e.Earliest.In(loc).Format("2 Jan"))
	case !e.Latest.IsZero():
		parts = append(parts, "until "+e.Latest.In(loc).Format("2 Jan"))
	}
	for _, a := range e.Availability {
		var days []string
		for _, d := range a.Days {
			days = append(days, d.String()[:3])
		}
		parts = append(parts, strings.Join(days, " ")+" "+a.From.String()+"–"+a.To.String())
	}
	if len(parts) == 0 {
		return "any time"
	}
	return strings.Join(parts, "; ")
}

// dashAddEntry is POST /dash/waitlist: staff put someone on the list (a
// phone call, a walk-in); no confirmation is asked, staff vouch for them.
func (s *Server) dashAddEntry(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	n, err := strconv.Atoi(cmpOr(r.PostFormValue("party_size"), "1"))
	if err != nil {
		s.pagesFail(w, r, sc, nextup.Errorf(nextup.ErrInvalid, nextup.CodeValidation, "the party size must be a number"))
		return
	}
	loc := bizLoc(sc.Business)
	p := waitlist.JoinParams{Name: r.PostFormValue("name"), Email: r.PostFormValue("email"), Phone: r.PostFormValue("phone"),
		Service: r.PostFormValue("service"), Staff: r.PostFormValue("staff"), PartySize: n,
		Priority: r.PostFormValue("priority") == "1", Source: "staff"}
	if p.Earliest, err = dayOf(r.PostFormValue("earliest"), loc, false); err != nil {
		s.pagesFail(w, r, sc, err)
		return
	}
	if p.Latest, err = dayOf(r.PostFormValue("latest"), loc, true); err != nil {
		s.pagesFail(w, r, sc, err)
		return
	}
	res, err := s.Svc.Join(r.Context(), sc.Business.ID, p)
	if err != nil {
		s.pagesFail(w, r, sc, err)
		return
	}
	http.Redirect(w, r, "/dash/waitlist?notice="+queryWords(p.Name+" is on the list. "+describeMoves(res.Moves)), http.StatusSeeOther)
}

func dayOf(v string, loc *time.Location, end bool) (time.Time, error) {
	if strings.TrimSpace(v) == "" {
		return time.Time{}, nil
	}
	t, err := time.ParseInLocation("2006-01-02", v, loc)
	if err != nil {
		return t, nextup.Errorf(nextup.ErrInvalid, nextup.CodeValidation, "dates must look like 2026-12-24")
	}
	if end {
		t = t.AddDate(0, 0, 1).Add(-time.Second)
	}
	return t, nil
}

// dashEditEntry is POST /dash/waitlist/{eid}: priority and dates.
func (s *Server) dashEditEntry(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	loc := bizLoc(sc.Business)
	prio := r.PostFormValue("priority") == "1"
	earliest, err := dayOf(r.PostFormValue("earliest"), loc, false)
	if err != nil {
		s.pagesFail(w, r, sc, err)
		return
	}
	latest, err := dayOf(r.PostFormValue("latest"), loc, true)
	if err != nil {
		s.pagesFail(w, r, sc, err)
		return
	}
	e, moves, err := s.Svc.UpdateEntry(r.Context(), sc.Business.ID, r.PathValue("eid"),
		waitlist.EntryPatch{Priority: &prio, Earliest: &earliest, Latest: &latest})
	if err != nil {
		s.pagesFail(w, r, sc, err)
		return
	}
	http.Redirect(w, r, "/dash/waitlist?notice="+queryWords(e.Name+" updated. "+describeMoves(moves)), http.StatusSeeOther)
}

// dashRemoveEntry is POST /dash/waitlist/{eid}/remove.
func (s *Server) dashRemoveEntry(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	e, moves, err := s.Svc.Leave(r.Context(), sc.Business.ID, r.PathValue("eid"), nextup.ActorStaff)
	if err != nil {
		s.pagesFail(w, r, sc, err)
		return
	}
	http.Redirect(w, r, "/dash/waitlist?notice="+queryWords(e.Name+" is off the list. "+describeMoves(moves)), http.StatusSeeOther)
}

// pagesFail shows a problem on the waitlist page (where the forms are),
// or the error page for what is not the person's to fix.
func (s *Server) pagesFail(w http.ResponseWriter, r *http.Request, sc staffCtx, err error) {
	status := statusOf(err)
	if status >= 500 || status == http.StatusNotFound {
		s.errorPage(w, r, err)
		return
	}
	http.Redirect(w, r, "/dash/waitlist?error="+queryWords(problemWords(err)), http.StatusSeeOther)
}

// problemWords is an error as staff read it: the message and the fields
// it names.
func problemWords(err error) string {
	var e *nextup.Error
	if !errors.As(err, &e) {
		return err.Error()
	}
	msg := e.Message
	for _, f := range e.Fields {
		msg += fmt.Sprintf(" (%s: %s)", f.Field, f.Message)
	}
	return msg
}

// dashHandBacks is GET /dash/handbacks: the slots the engine gave back, with
// its note on who was offered what and what each did.
func (s *Server) dashHandBacks(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	ctx := r.Context()
	d := s.pagesBase(sc, "Hand-backs")
	d.Notice = r.URL.Query().Get("notice")
	hbs, err := s.Svc.ListHandBacks(ctx, sc.Business.ID, nextup.HandBackOpen)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	loc := bizLoc(sc.Business)
	for _, h := range hbs {
		slot := h.SlotID
		if v, err := s.Svc.GetSlot(ctx, sc.Business.ID, h.SlotID); err == nil {
			slot = v.Slot.StartsAt.In(loc).Format("Mon 2 Jan 3:04 pm") + " " + v.Slot.Service
		}
		d.HandBacks = append(d.HandBacks, listHandBack{ID: h.ID, Slot: slot, Reason: strings.ReplaceAll(h.Reason, "_", " "),
			Note: h.Note, At: h.CreatedAt.In(loc).Format("Mon 2 Jan 3:04 pm")})
	}
	s.renderStaff(w, http.StatusOK, "handbacks", d)
}

// dashRequests is GET /dash/requests: the open proposed rows, to approve
// (with corrections) or reject.
func (s *Server) dashRequests(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	d := s.pagesBase(sc, "Requests")
	d.Notice, d.Error = r.URL.Query().Get("notice"), r.URL.Query().Get("error")
	ps, err := s.Svc.ListProposals(r.Context(), sc.Business.ID, nextup.ProposalOpen)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	loc := bizLoc(sc.Business)
	day := func(t time.Time) string { return t.In(loc).Format("Mon 2 Jan") }
	for _, p := range ps {
		f := p.Fields
		lp := listProposal{ID: p.ID, Name: f.Name, Contact: strings.TrimSpace(f.Email + " " + f.Phone), Service: f.Service,
			Staff: f.Staff, Party: f.PartySize, Received: p.ReceivedAt.In(loc).Format("Mon 2 Jan 3:04 pm"), Source: p.Source,
			Excerpt: p.Excerpt, Problems: strings.Join(p.Problems, "; ")}
		switch {
		case !f.Earliest.IsZero() && !f.Latest.IsZero():
			lp.Window = day(f.Earliest) + " to " + day(f.Latest)
		case !f.Earliest.IsZero():
			lp.Window = "from " + day(f.Earliest)
		case !f.Latest.IsZero():
			lp.Window = "until " + day(f.Latest)
		}
		d.Proposals = append(d.Proposals, lp)
	}
	s.renderStaff(w, http.StatusOK, "requests", d)
}

// dashDecide is POST /dash/requests/{id}/approve|reject.
func (s *Server) dashDecide(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	id, do := r.PathValue("id"), r.PathValue("do")
	if do != "approve" && do != "reject" {
		s.errorPage(w, r, nextup.Errorf(nextup.ErrNotFound, nextup.CodeNotFound, "no such page"))
		return
	}
	var err error
	notice := "Rejected."
	if do == "approve" {
		o := waitlist.ProposalOverrides{Name: strings.TrimSpace(r.PostFormValue("name")), Service: strings.TrimSpace(r.PostFormValue("service"))}
		var res waitlist.JoinResult
		res, err = s.Svc.ApproveProposal(r.Context(), sc.Business.ID, id, o, sc.Staff.ID)
		notice = "Approved: " + res.Entry.Name + " is on the waitlist."
	} else {
		err = s.Svc.RejectProposal(r.Context(), sc.Business.ID, id, sc.Staff.ID)
	}
	if err != nil {
		if errors.Is(err, nextup.ErrInvalid) || errors.Is(err, nextup.ErrConflict) {
			http.Redirect(w, r, "/dash/requests?error="+url.QueryEscape(problemWords(err)), http.StatusSeeOther)
			return
		}
		s.errorPage(w, r, err)
		return
	}
	http.Redirect(w, r, "/dash/requests?notice="+url.QueryEscape(notice), http.StatusSeeOther)
}

func (s *Server) dashResolve(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	if _, err := s.Svc.ResolveHandBack(r.Context(), sc.Business.ID, r.PathValue("hid")); err != nil {
		s.errorPage(w, r, err)
		return
	}
	http.Redirect(w, r, "/dash/handbacks?notice=Resolved.", http.StatusSeeOther)
}

// dashMessages is GET /dash/messages: what was sent to whom, and what is
// stuck (failed, dead) with a retry.
func (s *Server) dashMessages(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	d := s.pagesBase(sc, "Messages")
	d.Notice = r.URL.Query().Get("notice")
	d.MessageState = r.URL.Query().Get("state")
	msgs, err := s.Svc.ListMessages(r.Context(), nextup.MessageFilter{BusinessID: sc.Business.ID,
		State: nextup.MessageState(d.MessageState), Limit: 200})
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	loc := bizLoc(sc.Business)
	for _, m := range msgs {
		d.Messages = append(d.Messages, listMessage{ID: m.ID, To: m.To, Kind: strings.ReplaceAll(m.Kind, "_", " "), Channel: string(m.Channel),
			State: string(m.State), At: m.CreatedAt.In(loc).Format("Mon 2 Jan 3:04 pm"), Subject: m.Subject, Error: m.LastError,
			Attempts: m.Attempts, Wording: m.TemplateVersion, CanRetry: m.State == nextup.MessageDead || m.State == nextup.MessageFailed})
	}
	s.renderStaff(w, http.StatusOK, "messages", d)
}

func (s *Server) dashRetry(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	if _, err := s.Svc.RetryMessage(r.Context(), sc.Business.ID, r.PathValue("mid")); err != nil {
		status := statusOf(err)
		if status >= 500 || status == http.StatusNotFound {
			s.errorPage(w, r, err)
			return
		}
		http.Redirect(w, r, "/dash/messages?notice="+queryWords(problemWords(err)), http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/dash/messages?notice=Queued+again.", http.StatusSeeOther)
}

// dashSettings is GET /dash/settings: the rules in force, their history,
// and the business's details.
func (s *Server) dashSettings(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	d, ok := s.settingsData(w, r, sc)
	if !ok {
		return
	}
	d.Notice, d.Error = r.URL.Query().Get("notice"), r.URL.Query().Get("error")
	s.renderStaff(w, http.StatusOK, "settings", d)
}

// settingsData fills the settings page; false when it wrote an error page.
func (s *Server) settingsData(w http.ResponseWriter, r *http.Request, sc staffCtx) (pagesData, bool) {
	d := s.pagesBase(sc, "Settings")
	d.How = waitlist.HowTheOrderWorks(sc.Business.Rules)
	if q := sc.Business.Rules.QuietHours; q != nil {
		d.QuietStart, d.QuietEnd = q.Start.String(), q.End.String()
	}
	d.Requeue = requeueOptions(sc.Business.Rules.Requeue)
	d.Dedupe = dedupeOptions(sc.Business.Rules.Dedupe)
	d.Ladder = ladderRows(sc.Business.Rules.ClaimWindowLadder)
	d.FollowUpPercent = int(math.Round(sc.Business.Rules.FollowUp.Share() * 100))
	d.ServiceRows = serviceRows(sc.Business.Profile.Services)
	d.StaffLines = strings.Join(sc.Business.Profile.Staff, "\n")
	history, err := s.Svc.RulesHistory(r.Context(), sc.Business.ID)
	if err != nil {
		s.errorPage(w, r, err)
		return d, false
	}
	loc := bizLoc(sc.Business)
	for _, ev := range history {
		d.RulesHistory = append(d.RulesHistory, storyLine{At: ev.At.In(loc).Format("Mon 2 Jan 2006 3:04 pm"),
			Text: rulesChangeWords(ev)})
	}
	if be := sc.Business.Profile.BookingEvents; be != nil {
		d.BookingSince = be.Since.In(loc).Format("Mon 2 Jan 2006 3:04 pm")
	}
	return d, true
}

// rulesChangeWords is one rules change as an owner reads it: the new
// version, who made it, and what the change set, in the form's words.
func rulesChangeWords(ev nextup.AuditEvent) string {
	version := strings.TrimPrefix(ev.To, "rules/v")
	who := map[string]string{nextup.ActorStaff: "staff", nextup.ActorSystem: "nextup"}[ev.Actor]
	if who == "" {
		who = ev.Actor
	}
	var patch map[string]any
	raw, _ := ev.Detail["patch"].(string)
	_ = json.Unmarshal([]byte(raw), &patch)
	words := map[string]string{"claim_window_seconds": "time to claim", "min_lead_seconds": "no offers this close to the start",
		"max_offers_per_person_per_day": "offers per person per day", "quiet_hours": "quiet hours", "time_critical_through_quiet": "time-critical offers in quiet hours",
		"position_visibility": "position shown", "requeue": "missed offers", "dedupe": "when someone books", "claim_window_ladder": "shorter times to claim",
		"follow_up": "reminders about unopened offers", "policy": "order", "priority_first": "priority first"}
	var changed []string
	for _, k := range slices.Sorted(maps.Keys(patch)) {
		if w, ok := words[k]; ok {
			changed = append(changed, w)
		} else {
			changed = append(changed, strings.ReplaceAll(k, "_", " "))
		}
	}
	out := fmt.Sprintf("version %s, by %s", version, who)
	if len(changed) > 0 {
		out += ": " + strings.Join(changed, ", ")
	}
	return out
}

// dashRules is POST /dash/settings/rules: the rules form, as one patch of
// the rules (a new version when anything changed).
func (s *Server) dashRules(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	f := r.PostFormValue
	patch := map[string]any{}
	num := func(field string) {
		if v := strings.TrimSpace(f(field)); v != "" {
			if n, err := strconv.Atoi(v); err == nil {
				patch[field] = n
			} else {
				patch[field] = v // the rules say why it is wrong
			}
		}
	}
	// Minutes and hours on the form; seconds in the rules.
	minutes := func(field, rule string) {
		if v := strings.TrimSpace(f(field)); v != "" {
			if n, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(n) && !math.IsInf(n, 0) && math.Abs(n) < 1e9 {
				patch[rule] = int64(math.Round(n * 60))
			} else {
				patch[rule] = v // the rules say why it is wrong
			}
		}
	}
	minutes("claim_window_minutes", "claim_window_seconds")
	minutes("min_lead_minutes", "min_lead_seconds")
	num("max_offers_per_person_per_day")
	if _, ok := r.PostForm["ladder_hours"]; ok {
		hours, mins := r.PostForm["ladder_hours"], r.PostForm["ladder_minutes"]
		ladder := []map[string]any{}
		for i, h := range hours {
			h = strings.TrimSpace(h)
			m := ""
			if i < len(mins) {
				m = strings.TrimSpace(mins[i])
			}
			if h == "" && m == "" {
				continue
			}
			hn, err1 := strconv.ParseFloat(h, 64)
			mn, err2 := strconv.ParseFloat(m, 64)
			if err1 != nil || err2 != nil || math.IsNaN(hn+mn) || math.IsInf(hn+mn, 0) || math.Abs(hn) > 1e6 || math.Abs(mn) > 1e8 {
				http.Redirect(w, r, "/dash/settings?error="+queryWords("Each row of the shorter times needs hours and minutes as numbers."), http.StatusSeeOther)
				return
			}
			ladder = append(ladder, map[string]any{"lead_under_seconds": int64(math.Round(hn * 3600)), "window_seconds": int64(math.Round(mn * 60))})
		}
		patch["claim_window_ladder"] = ladder
	}
	if v := strings.TrimSpace(f("follow_up_percent")); v != "" {
		p, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(p) || math.IsInf(p, 0) {
			http.Redirect(w, r, "/dash/settings?error="+queryWords("The reminder's share of the time to claim must be a number between 10 and 90."), http.StatusSeeOther)
			return
		}
		patch["follow_up"] = map[string]any{"after_share": p / 100, "same_channel_when_no_other": f("follow_up_same_channel") == "1"}
	}
	if v := f("dedupe"); v != "" {
		patch["dedupe"] = v
	}
	if f("quiet") == "off" {
		patch["quiet_hours"] = nil
	} else if f("quiet_start") != "" || f("quiet_end") != "" {
		patch["quiet_hours"] = map[string]string{"start": f("quiet_start"), "end": f("quiet_end")}
	}
	patch["time_critical_through_quiet"] = f("time_critical") == "1"
	if v := f("position_visibility"); v != "" {
		patch["position_visibility"] = v
	}
	if q, ok := requeuePatch(f("requeue")); ok {
		patch["requeue"] = q
	}
	raw, err := json.Marshal(patch)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	rules, err := s.Svc.UpdateRules(r.Context(), sc.Business.ID, raw)
	if err != nil {
		if statusOf(err) >= 500 {
			s.errorPage(w, r, err)
			return
		}
		http.Redirect(w, r, "/dash/settings?error="+queryWords(problemWords(err)), http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/dash/settings?notice=Rules+version+%d+in+force.", rules.Version), http.StatusSeeOther)
}

// queryWords puts a sentence in a redirect's query.
func queryWords(s string) string { return url.QueryEscape(s) }

// dashStatusPage is POST /dash/settings/status-page: what a waiting
// person's status page shows besides their place (the estimated wait).
func (s *Server) dashStatusPage(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	on := r.PostFormValue("wait_estimate") == "1"
	if _, err := s.Svc.UpdateProfile(r.Context(), sc.Business.ID, waitlist.ProfilePatch{WaitEstimate: &on}); err != nil {
		s.errorPage(w, r, err)
		return
	}
	notice := "Status pages no longer show an estimated wait."
	if on {
		notice = "Status pages show an estimated wait when there is history enough."
	}
	http.Redirect(w, r, "/dash/settings?notice="+queryWords(notice), http.StatusSeeOther)
}

// dashRetention is POST /dash/settings/retention: how many months after
// a person's last entry ended their personal data is erased by itself (0
// keeps it).
func (s *Server) dashRetention(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	months, err := strconv.Atoi(strings.TrimSpace(r.PostFormValue("retention_months")))
	if err != nil {
		http.Redirect(w, r, "/dash/settings?error="+queryWords("Give the months as a whole number: 0 keeps people's details."), http.StatusSeeOther)
		return
	}
	if _, err := s.Svc.UpdateProfile(r.Context(), sc.Business.ID, waitlist.ProfilePatch{RetentionMonths: &months}); err != nil {
		if statusOf(err) >= 500 {
			s.errorPage(w, r, err)
			return
		}
		http.Redirect(w, r, "/dash/settings?error="+queryWords(problemWords(err)), http.StatusSeeOther)
		return
	}
	notice := "People's details are kept until you erase them."
	if months > 0 {
		notice = fmt.Sprintf("People's details are erased %d months after their last entry ended.", months)
	}
	http.Redirect(w, r, "/dash/settings?notice="+queryWords(notice), http.StatusSeeOther)
}

// serviceRow is a service in the settings form ("" fields for an empty
// row): its name, other names people use for it (comma-separated), its
// length in minutes and its price.
type serviceRow struct{ Name, Synonyms, Minutes, Price string }

// serviceRows are the form's rows: every service, and empty rows to add
// three more.
func serviceRows(svcs []nextup.Service) []serviceRow {
	var out []serviceRow
	for _, sv := range svcs {
		row := serviceRow{Name: sv.Name, Synonyms: strings.Join(sv.Synonyms, ", ")}
		if sv.DurationMinutes > 0 {
			row.Minutes = strconv.Itoa(sv.DurationMinutes)
		}
		if sv.PriceCents > 0 {
			row.Price = strconv.FormatFloat(float64(sv.PriceCents)/100, 'f', 2, 64)
		}
		out = append(out, row)
	}
	for range 3 {
		out = append(out, serviceRow{})
	}
	return out
}

// dashBusiness is POST /dash/settings/business: the business's details
// as an owner keeps them — the join form's address, the owner's email,
// the country phone numbers default to, the services (name, other names,
// minutes, price) and the staff (one per line). One profile change,
// audited; what is wrong is said on the page and nothing is saved.
func (s *Server) dashBusiness(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	f := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	back := func(msg string) {
		http.Redirect(w, r, "/dash/settings?error="+queryWords(msg)+"#business", http.StatusSeeOther)
	}
	slug, owner, country := f("slug"), f("owner_email"), strings.ToUpper(f("country"))
	names, syns, mins, prices := r.PostForm["service_name"], r.PostForm["service_synonyms"], r.PostForm["service_minutes"], r.PostForm["service_price"]
	at := func(xs []string, i int) string {
		if i < len(xs) {
			return strings.TrimSpace(xs[i])
		}
		return ""
	}
	svcs := []nextup.Service{}
	for i, name := range names {
		name = strings.TrimSpace(name)
		if name == "" {
			if at(mins, i) != "" || at(prices, i) != "" || at(syns, i) != "" {
				back(fmt.Sprintf("Service row %d needs a name (or clear the row).", i+1))
				return
			}
			continue
		}
		sv := nextup.Service{Name: name}
		for syn := range strings.SplitSeq(at(syns, i), ",") {
			if syn = strings.TrimSpace(syn); syn != "" {
				sv.Synonyms = append(sv.Synonyms, syn)
			}
		}
		if m := at(mins, i); m != "" {
			n, err := strconv.Atoi(m)
			if err != nil {
				back(fmt.Sprintf("%s: the length is a number of minutes.", name))
				return
			}
			sv.DurationMinutes = n
		}
		if p := strings.TrimLeft(at(prices, i), "£$€ "); p != "" {
			v, err := strconv.ParseFloat(strings.ReplaceAll(p, ",", "."), 64)
			if err != nil || math.IsNaN(v) || v < 0 || v > 1e7 {
				back(fmt.Sprintf("%s: the price is an amount such as 35 or 35.50.", name))
				return
			}
			sv.PriceCents = int64(math.Round(v * 100))
		}
		svcs = append(svcs, sv)
	}
	staff := []string{}
	for line := range strings.SplitSeq(r.PostFormValue("staff"), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			staff = append(staff, line)
		}
	}
	if _, err := s.Svc.UpdateProfile(r.Context(), sc.Business.ID, waitlist.ProfilePatch{Slug: &slug, OwnerEmail: &owner, Country: &country,
		Services: &svcs, Staff: &staff}); err != nil {
		if statusOf(err) >= 500 {
			s.errorPage(w, r, err)
			return
		}
		back(ownerWords(err))
		return
	}
	http.Redirect(w, r, "/dash/settings?notice="+queryWords("Business details saved.")+"#business", http.StatusSeeOther)
}

// ownerWords is a profile error in the settings form's words: the
// fields named as the form names them.
func ownerWords(err error) string {
	var e *nextup.Error
	if !errors.As(err, &e) {
		return err.Error()
	}
	if e.Code == nextup.CodeSlugTaken {
		return "Another business uses that address for its join form; choose another."
	}
	label := map[string]string{"slug": "Join form address", "owner_email": "Your email", "country": "Country"}
	var out []string
	for _, fe := range e.Fields {
		name := fe.Field
		if l, ok := label[name]; ok {
			name = l
		} else if strings.HasPrefix(name, "services[") {
			var n int
			if _, err := fmt.Sscanf(name, "services[%d]", &n); err == nil {
				name = fmt.Sprintf("Service %d", n+1) // the form's rows count from 1
			}
		} else if strings.HasPrefix(name, "staff[") {
			name = "Staff"
		}
		out = append(out, name+": "+fe.Message)
	}
	if len(out) == 0 {
		return e.Message
	}
	return strings.Join(out, "; ")
}

// dashBookingTool is POST /dash/settings/booking-tool: a new secret for
// the booking tool's events, shown on the page this once.
func (s *Server) dashBookingTool(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	secret, err := s.Svc.NewBookingEventsSecret(r.Context(), sc.Business.ID)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	b, err := s.Svc.GetBusiness(r.Context(), sc.Business.ID)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	sc.Business = b
	d, ok := s.settingsData(w, r, sc)
	if !ok {
		return
	}
	d.BookingSecret, d.BookingURL = secret, s.Svc.BaseURL+"/v1/businesses/"+b.ID+"/booking-events"
	d.Notice = "A new secret for your booking tool: copy it now, it is shown only this once. The old one no longer works."
	s.renderStaff(w, http.StatusOK, "settings", d)
}
