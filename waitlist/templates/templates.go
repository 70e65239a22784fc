package templates

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	htmltemplate "html/template"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"text/template/parse"

	"github.com/nextup-dev/nextup"
)

// Template kinds: every message a person (or the owner) gets, each with a
// default wording that a business may replace in its profile's templates.
const (
	TemplateOffer        = "offer"        // a slot is held for you: claim link, deadline, countdown
	TemplateConfirmation = "confirmation" // you're booked (+ the calendar invite)
	TemplateFilled       = "filled"       // sorry, the slot was just filled; you keep your place
	TemplateExpired      = "expired"      // your hold lapsed; you keep your place
	TemplateJoined       = "joined"       // you're on the list (+ the status link)
	TemplateHandback     = "handback"     // to the owner: the engine handed a slot back, with its note
	TemplateReminder     = "reminder"     // your booking is coming up
	TemplateEscalation   = "escalation"   // in case you missed it: the same claim link once more
	TemplateUnconfirmed  = "unconfirmed"  // the business's booking system did not confirm a claim; the business will
	TemplateProposal     = "proposal"     // to the owner: a request proposes a row; one-tap Approve and Reject
	TemplateRefunded     = "refunded"     // a paid event's payment arrived after the hold ended: refunded in full
	TemplateWaitlisted   = "waitlisted"   // an event's registrant is on its waitlist: their place, what happens next, how to leave
	TemplateRequeued     = "requeued"     // a hold lapsed or was declined: moved to the back of the waitlist (the re-queue rule)
	TemplateDropped      = "dropped"      // a hold lapsed or was declined once too often: off the waitlist, and how to join again
	TemplateStatusLink   = "statuslink"   // a registrant who signed up again gets a new link to their place (the old one stops working)
	TemplateDeduped      = "deduped"      // a booking took the person off another list of theirs (the rules' dedupe)
)

// TemplateKinds lists the kinds in the order staff see them.
var TemplateKinds = []string{TemplateOffer, TemplateConfirmation, TemplateFilled, TemplateExpired,
	TemplateJoined, TemplateHandback, TemplateReminder, TemplateEscalation, TemplateUnconfirmed, TemplateProposal, TemplateRefunded,
	TemplateWaitlisted, TemplateRequeued, TemplateDropped, TemplateStatusLink, TemplateDeduped}

// KindWords says what each kind of message is for, in an owner's words.
var KindWords = map[string]string{
	TemplateOffer:        "A slot opened up: held for them, with the claim link and the deadline",
	TemplateConfirmation: "They're booked (with a calendar invite)",
	TemplateFilled:       "Sorry, someone else claimed it first; they keep their place",
	TemplateExpired:      "Their hold ran out; what happens to their place",
	TemplateJoined:       "They're on the list, with the link to their place",
	TemplateHandback:     "To you: a slot nobody on the list could take",
	TemplateReminder:     "Their booking is coming up",
	TemplateEscalation:   "A second nudge about an offer they haven't opened",
	TemplateUnconfirmed:  "Your booking system didn't confirm their claim; you'll be in touch",
	TemplateProposal:     "To you: a request to add someone, with Approve and Reject",
	TemplateRefunded:     "A paid event's payment came too late: refunded in full",
	TemplateWaitlisted:   "They're on an event's waitlist",
	TemplateRequeued:     "They missed or declined a hold and moved to the back of the list",
	TemplateDropped:      "They missed or declined once too often and left the list",
	TemplateStatusLink:   "A new link to their place, after signing up again",
	TemplateDeduped:      "A booking took them off another list of theirs",
}

// TemplateData is what a template can say. Every field is plain text in
// the business's words and timezone; the HTML templates escape it.
type TemplateData struct {
	Business  string // the business's name
	Name      string // the person's name
	Service   string // the service, or the event's title
	Staff     string // who, when the slot names someone
	Other     string // the list a booking took the person off (deduped)
	When      string // the slot's start: "Tue 1 Dec at 3:00 pm"
	Until     string // the claim deadline: "4:10 pm", "Tue 4:10 pm"
	Countdown string // the claim window in words: "10 minutes"
	Link      string // the claim link (offer, escalation)
	Seats     int
	// StatusLink is the person's status page (joined, expired, filled,
	// waitlisted).
	StatusLink string
	// Place is where the person is in line, in words, as the business's
	// rules let them see it ("3rd in line", "in the next few"; ""
	// when positions are hidden) (waitlisted).
	Place string
	// CalendarLink downloads the booking's invite (confirmation, reminder).
	CalendarLink string
	// Registered: the offer is for someone who registered for an event
	// this very moment (a paid event's seats held for them to pay for),
	// not a slot that opened up for someone waiting (offer).
	Registered bool
	// Price is what a paid event's seats cost in all ("€50.00"; offer,
	// refunded).
	Price string
	// CancelLink lets the person cancel an event registration themselves
	// (confirmation, reminder of an event).
	CancelLink string
	// Note is the engine's note to staff (handback).
	Note string
	// Declined: the person declined the hold, rather than letting it run
	// out (requeued, dropped).
	Declined bool
	// Lapses is how many holds the person has declined or let run out on
	// this waitlist (dropped).
	Lapses int
	// MissesLeft is how many more declined or lapsed holds take the
	// person off the waitlist, or 0 when none do (expired, requeued).
	MissesLeft int
	// JoinLink is where the person can join the waitlist again: the
	// join form, or the event's page ("" when there is none) (dropped).
	JoinLink string
	// IfMissed says what declining an offer or letting it run out does
	// to the person's place: "You keep your place either way." (offer,
	// escalation; IfMissed).
	IfMissed string
	// Contact is how to reach the business (its owner's email).
	Contact string
	// ApproveLink and RejectLink are the owner's one-tap links of a
	// proposed row (proposal).
	ApproveLink, RejectLink string
}

// defaultTemplates are the safe defaults: what a person needs in the fewest
// words. The HTML is only the message's content; a fixed layout wraps it
// (and carries the unsubscribe link of mail a person may stop).
var defaultTemplates = map[string]nextup.MessageTemplate{
	TemplateOffer: {
		Subject: `{{if .Registered}}Pay to confirm: {{.Service}} on {{.When}}{{else}}A {{.Service}} slot opened up: claim it until {{.Until}}{{end}}`,
		SMS:     `{{.Business}}: {{if .Registered}}your {{.Service}} seats on {{.When}} are held until {{.Until}}. {{if .Price}}Pay {{.Price}} to confirm{{else}}Confirm{{end}}: {{.Link}}{{else}}a {{.Service}} slot{{if .Staff}} with {{.Staff}}{{end}} opened up on {{.When}}. It's yours if you claim it until {{.Until}}: {{.Link}}{{end}}`,
		Text: `Hi {{.Name}},
{{if .Registered}}
Thank you for registering for {{.Service}} at {{.Business}} on {{.When}}{{if gt .Seats 1}} ({{.Seats}} seats){{end}}.
{{else}}
A {{.Service}} slot{{if .Staff}} with {{.Staff}}{{end}} at {{.Business}} opened up on {{.When}}{{if gt .Seats 1}} for {{.Seats}}{{end}}.
{{end}}
It is held for you for {{.Countdown}}, until {{.Until}}. {{if .Price}}Pay {{.Price}} to confirm it here{{else}}Claim it here{{end}}:
{{.Link}}

If it doesn't suit you, the same page has a Decline button, and the next person on the list gets their chance right away.{{if not .Registered}} {{.IfMissed}}{{end}}
`,
		HTML: `<p>Hi {{.Name}},</p>
{{if .Registered}}<p>Thank you for registering for <b>{{.Service}}</b> at {{.Business}} on <b>{{.When}}</b>{{if gt .Seats 1}} ({{.Seats}} seats){{end}}.</p>{{else}}<p>A <b>{{.Service}}</b> slot{{if .Staff}} with {{.Staff}}{{end}} at {{.Business}} opened up on <b>{{.When}}</b>{{if gt .Seats 1}} for {{.Seats}}{{end}}.</p>{{end}}
<p>It is held for you for {{.Countdown}}, until <b>{{.Until}}</b>.{{if .Price}} It is confirmed when you pay {{.Price}}.{{end}}</p>
<p>` + button + `{{if .Price}}Pay and confirm{{else}}Claim it{{end}}</a></p>
<p style="color:#555">If it doesn't suit you, the same page has a Decline button, and the next person on the list gets their chance right away.{{if not .Registered}} {{.IfMissed}}{{end}}</p>`,
	},
	TemplateConfirmation: {
		Subject: `Booked: {{.Service}} on {{.When}}`,
		SMS:     `{{.Business}}: you're booked for {{.Service}}{{if .Staff}} with {{.Staff}}{{end}} on {{.When}}{{if gt .Seats 1}} ({{.Seats}} seats){{end}}.{{if .CalendarLink}} Add it to your calendar: {{.CalendarLink}}{{end}}{{if .CancelLink}} Can't come? Cancel: {{.CancelLink}}{{end}}`,
		Text: `Hi {{.Name}},

You're booked for {{.Service}}{{if .Staff}} with {{.Staff}}{{end}} at {{.Business}} on {{.When}}{{if gt .Seats 1}} ({{.Seats}} seats){{end}}.
{{if .CalendarLink}}
The invite is attached; you can also add it to your calendar from {{.CalendarLink}}
{{end}}{{if .CancelLink}}
Can't come after all? Cancel here, and the next person on the waitlist gets your seat: {{.CancelLink}}
{{else if .Contact}}
Can't make it after all? Tell us at {{.Contact}} so someone else can have the slot.
{{end}}`,
		HTML: `<p>Hi {{.Name}},</p>
<p>You're booked for <b>{{.Service}}</b>{{if .Staff}} with {{.Staff}}{{end}} at {{.Business}} on <b>{{.When}}</b>{{if gt .Seats 1}} ({{.Seats}} seats){{end}}.</p>
{{if .CalendarLink}}<p>The invite is attached. <a href="{{.CalendarLink}}">Add it to your calendar</a>.</p>{{end}}
{{if .CancelLink}}<p style="color:#555">Can't come after all? <a href="{{.CancelLink}}">Cancel your place</a>, and the next person on the waitlist gets your seat.</p>{{else if .Contact}}<p style="color:#555">Can't make it after all? Tell us at <a href="mailto:{{.Contact}}">{{.Contact}}</a> so someone else can have the slot.</p>{{end}}`,
	},
	TemplateFilled: {
		Subject: `Sorry, the {{.Service}} slot on {{.When}} was just taken`,
		SMS:     `{{.Business}}: sorry, the {{.Service}} slot on {{.When}} was taken just before your claim reached us, so it isn't booked. You keep your place on the waitlist.`,
		Text: `Hi {{.Name}},

Sorry: the {{.Service}} slot{{if .Staff}} with {{.Staff}}{{end}} at {{.Business}} on {{.When}} was taken just before your claim reached us, so it isn't booked.

You keep your place on the waitlist, and we will let you know when another slot opens up.
{{if .StatusLink}}
Your place: {{.StatusLink}}
{{end}}`,
		HTML: `<p>Hi {{.Name}},</p>
<p>Sorry: the <b>{{.Service}}</b> slot{{if .Staff}} with {{.Staff}}{{end}} on {{.When}} was taken just before your claim reached us, so it isn't booked.</p>
<p>You keep your place on the waitlist, and we will let you know when another slot opens up.</p>
{{if .StatusLink}}<p><a href="{{.StatusLink}}">See your place</a></p>{{end}}`,
	},
	TemplateUnconfirmed: {
		Subject: `Not confirmed yet: {{.Service}} on {{.When}}`,
		SMS:     `{{.Business}}: we couldn't confirm your {{.Service}} slot on {{.When}} just now. {{.Business}} will confirm it with you directly. You keep your place on the waitlist.`,
		Text: `Hi {{.Name}},

Thank you for claiming the {{.Service}} slot{{if .Staff}} with {{.Staff}}{{end}} at {{.Business}} on {{.When}}. We couldn't confirm it with their booking system just now, so it isn't booked yet: {{.Business}} will get in touch to confirm it with you directly.

You keep your place on the waitlist in the meantime.
`,
		HTML: `<p>Hi {{.Name}},</p>
<p>Thank you for claiming the <b>{{.Service}}</b> slot{{if .Staff}} with {{.Staff}}{{end}} at {{.Business}} on {{.When}}. We couldn't confirm it with their booking system just now, so it isn't booked yet: {{.Business}} will get in touch to confirm it with you directly.</p>
<p>You keep your place on the waitlist in the meantime.</p>`,
	},
	TemplateExpired: {
		Subject: `Your hold on the {{.Service}} slot has ended`,
		SMS:     `{{.Business}}: the hold on the {{.Service}} slot on {{.When}} ran out, so we've moved on. You keep your place on the list.` + missesLeft,
		Text: `Hi {{.Name}},

The hold on the {{.Service}} slot on {{.When}} ran out, so we've moved on. You keep your place on the list, and we'll offer you the next one that fits.` + missesLeft + `
{{if .StatusLink}}
Your place: {{.StatusLink}}
{{end}}`,
		HTML: `<p>Hi {{.Name}},</p>
<p>The hold on the <b>{{.Service}}</b> slot on {{.When}} ran out, so we've moved on. You keep your place on the list, and we'll offer you the next one that fits.` + missesLeft + `</p>
{{if .StatusLink}}<p><a href="{{.StatusLink}}">See your place</a></p>{{end}}`,
	},
	TemplateRequeued: {
		Subject: `You're now at the back of the {{.Service}} waitlist`,
		SMS:     `{{.Business}}: ` + heldFor + `, so it went to the next person. You're still on the waitlist, now at the back of it; we'll offer you the next one that fits when it's your turn.` + missesLeft,
		Text: `Hi {{.Name}},

` + heldForCap + `, so it went to the next person.

You're still on the waitlist, but at the back of it now, behind everyone who was already waiting. When something that fits opens up and it's your turn again, we'll send you a new link.` + missesLeft + `
`,
		HTML: `<p>Hi {{.Name}},</p>
<p>` + heldForCap + `, so it went to the next person.</p>
<p>You're still on the waitlist, but <b>at the back of it now</b>, behind everyone who was already waiting. When something that fits opens up and it's your turn again, we'll send you a new link.` + missesLeft + `</p>`,
	},
	TemplateDropped: {
		Subject: `You're no longer on the {{.Service}} waitlist`,
		SMS:     `{{.Business}}: ` + heldFor + `. ` + dropped + ` Still interested? ` + joinAgain,
		Text: `Hi {{.Name}},

` + heldForCap + `. ` + dropped + `

Still interested? ` + joinAgain + `
`,
		HTML: `<p>Hi {{.Name}},</p>
<p>` + heldForCap + `. ` + dropped + `</p>
<p>Still interested? {{if .JoinLink}}You're welcome to <a href="{{.JoinLink}}">join again</a>; you'd start at the back of the list.{{else}}` + joinAgain + `{{end}}</p>`,
	},
	TemplateDeduped: {
		Subject: `You're off the {{.Other}} waitlist`,
		SMS:     `{{.Business}}: you booked {{.Service}}, {{.When}}, so you're off the {{.Other}} waitlist and won't get offers for it. Still want it? Join again any time.`,
		Text: `Hi {{.Name}},

You booked {{.Service}}, {{.When}}, so we have taken you off the waitlist for {{.Other}}: you won't get offers for it.

Still want it? You're welcome to join again any time.
`,
		HTML: `<p>Hi {{.Name}},</p>
<p>You booked {{.Service}}, {{.When}}, so we have taken you off the waitlist for {{.Other}}: you won't get offers for it.</p>
<p>Still want it? You're welcome to join again any time.</p>`,
	},
	TemplateJoined: {
		Subject: `You're on the {{.Business}} waitlist`,
		SMS:     `{{.Business}}: you're on the waitlist for {{.Service}}. We'll text you when a slot opens.{{if .StatusLink}} Your place: {{.StatusLink}}{{end}}`,
		Text: `Hi {{.Name}},

You're on the {{.Business}} waitlist for {{.Service}}. When a slot that fits opens up, we'll hold it for you and send you a link to claim it.
{{if .StatusLink}}
See your place, or leave the list, here: {{.StatusLink}}
{{end}}`,
		HTML: `<p>Hi {{.Name}},</p>
<p>You're on the {{.Business}} waitlist for <b>{{.Service}}</b>. When a slot that fits opens up, we'll hold it for you and send you a link to claim it.</p>
{{if .StatusLink}}<p>` + buttonStatus + `See your place</a></p>{{end}}`,
	},
	TemplateWaitlisted: {
		Subject: `You're on the waitlist for {{.Service}}`,
		SMS:     `{{.Business}}: {{.Service}} on {{.When}} is full, so you're on the waitlist{{if .Place}}, {{.Place}}{{end}}. If a seat frees up we'll text you a link to claim it. Your place, or leave: {{.StatusLink}}`,
		Text: `Hi {{.Name}},

{{.Service}} on {{.When}} is full, so you're on the waitlist{{if .Place}}: {{.Place}}{{end}}.

What happens next: if a seat frees up, we hold it for the next person in line and send them a link to claim it. When it's your turn you'll get that link here, and you can also claim it from your status page.

See your place, or leave the waitlist, here: {{.StatusLink}}
`,
		HTML: `<p>Hi {{.Name}},</p>
<p><b>{{.Service}}</b> on {{.When}} is full, so you're on the waitlist{{if .Place}}: <b>{{.Place}}</b>{{end}}.</p>
<p>What happens next: if a seat frees up, we hold it for the next person in line and send them a link to claim it. When it's your turn you'll get that link here, and you can also claim it from your status page.</p>
<p>` + buttonStatus + `See your place, or leave the waitlist</a></p>`,
	},
	TemplateStatusLink: {
		Subject: `Your place at {{.Service}}: your new link`,
		SMS:     `{{.Business}}: you're already registered for {{.Service}} on {{.When}}. Your place, from now on: {{.StatusLink}} (the link we sent before no longer works)`,
		Text: `Hi {{.Name}},

You asked to register for {{.Service}} on {{.When}} again, and you're already registered. Here is your link to your place, from now on:
{{.StatusLink}}

The link we sent you before no longer works. If you did not ask for this, nothing else has changed.
`,
		HTML: `<p>Hi {{.Name}},</p>
<p>You asked to register for <b>{{.Service}}</b> on {{.When}} again, and you're already registered. Here is your link to your place, from now on:</p>
<p>` + buttonStatus + `See your place</a></p>
<p style="color:#555">The link we sent you before no longer works. If you did not ask for this, nothing else has changed.</p>`,
	},
	TemplateHandback: {
		Subject: `Over to you: {{.Service}} on {{.When}}`,
		SMS:     `nextup: the {{.Service}} slot on {{.When}} is back with you. {{.Note}}`,
		Text: `The {{.Service}} slot{{if .Staff}} with {{.Staff}}{{end}} on {{.When}} is back with you.

{{.Note}}
`,
		HTML: `<p>The <b>{{.Service}}</b> slot{{if .Staff}} with {{.Staff}}{{end}} on <b>{{.When}}</b> is back with you.</p>
<p style="border-left:3px solid #ccc;padding-left:12px;white-space:pre-line">{{.Note}}</p>`,
	},
	TemplateReminder: {
		Subject: `Reminder: {{.Service}} on {{.When}}`,
		SMS:     `{{.Business}}: a reminder of your {{.Service}}{{if .Staff}} with {{.Staff}}{{end}} on {{.When}}.{{if .CancelLink}} Can't come? Cancel: {{.CancelLink}}{{else if .Contact}} Can't make it? Tell us: {{.Contact}}{{end}}`,
		Text: `Hi {{.Name}},

A reminder of your {{.Service}}{{if .Staff}} with {{.Staff}}{{end}} at {{.Business}} on {{.When}}{{if gt .Seats 1}} ({{.Seats}} seats){{end}}.
{{if .CancelLink}}
Can't come? Cancel here so someone on the waitlist gets your seat: {{.CancelLink}}
{{else if .Contact}}
Can't make it? Tell us at {{.Contact}} so someone on the waitlist can have it.
{{end}}`,
		HTML: `<p>Hi {{.Name}},</p>
<p>A reminder of your <b>{{.Service}}</b>{{if .Staff}} with {{.Staff}}{{end}} at {{.Business}} on <b>{{.When}}</b>{{if gt .Seats 1}} ({{.Seats}} seats){{end}}.</p>
{{if .CalendarLink}}<p><a href="{{.CalendarLink}}">Add it to your calendar</a></p>{{end}}
{{if .CancelLink}}<p style="color:#555">Can't come? <a href="{{.CancelLink}}">Cancel your place</a> so someone on the waitlist gets your seat.</p>{{else if .Contact}}<p style="color:#555">Can't make it? Tell us at <a href="mailto:{{.Contact}}">{{.Contact}}</a> so someone on the waitlist can have it.</p>{{end}}`,
	},
	TemplateRefunded: {
		Subject: `Refunded: your payment for {{.Service}}`,
		SMS:     `{{.Business}}: your payment{{if .Price}} of {{.Price}}{{end}} for {{.Service}} on {{.When}} arrived after your hold ended, so it has been refunded in full. You keep your place on the waitlist.`,
		Text: `Hi {{.Name}},

Your payment{{if .Price}} of {{.Price}}{{end}} for {{.Service}} at {{.Business}} on {{.When}} reached us after your hold on the seats had ended, so they were not booked for you.

We have refunded it in full; your bank shows it in a few days. You keep your place on the waitlist.
`,
		HTML: `<p>Hi {{.Name}},</p>
<p>Your payment{{if .Price}} of <b>{{.Price}}</b>{{end}} for <b>{{.Service}}</b> at {{.Business}} on {{.When}} reached us after your hold on the seats had ended, so they were not booked for you.</p>
<p>We have refunded it in full; your bank shows it in a few days. You keep your place on the waitlist.</p>`,
	},
	TemplateProposal: {
		Subject: `New request: {{.Name}} for {{.Service}}`,
		SMS:     `nextup: a new request from {{.Name}} for {{.Service}}. Approve: {{.ApproveLink}}`,
		Text: `A request came in that proposes a waitlist entry:

{{.Note}}

Approve it (they join the list as of when they asked): {{.ApproveLink}}
Reject it: {{.RejectLink}}

Each link opens a page that asks you to confirm.
`,
		HTML: `<p>A request came in that proposes a waitlist entry:</p>
<p style="border-left:3px solid #ccc;padding-left:12px;white-space:pre-line">{{.Note}}</p>
<p><a href="{{.ApproveLink}}" ` + buttonStyle + `>Approve</a>
&nbsp; <a href="{{.RejectLink}}" style="color:#8a1c1c">Reject</a></p>
<p style="color:#555">They join the list as of when they asked. Each link opens a page that asks you to confirm.</p>`,
	},
	TemplateEscalation: {
		Subject: `Still yours until {{.Until}}: a {{.Service}} slot`,
		SMS:     `{{.Business}}: in case you missed it, a {{.Service}} slot on {{.When}} is still held for you until {{.Until}}. Claim it: {{.Link}}`,
		Text: `Hi {{.Name}},

In case you missed our text: a {{.Service}} slot{{if .Staff}} with {{.Staff}}{{end}} at {{.Business}} on {{.When}} is still held for you until {{.Until}}.

Claim it here:
{{.Link}}

If it doesn't suit you, decline it on the same page and the next person gets their chance. {{.IfMissed}}
`,
		HTML: `<p>Hi {{.Name}},</p>
<p>In case you missed our text: a <b>{{.Service}}</b> slot{{if .Staff}} with {{.Staff}}{{end}} at {{.Business}} on <b>{{.When}}</b> is still held for you until <b>{{.Until}}</b>.</p>
<p>` + button + `Claim it</a></p>
<p style="color:#555">If it doesn't suit you, decline it on the same page and the next person gets their chance. {{.IfMissed}}</p>`,
	},
}

// Sentences the re-queue messages share (expired, requeued, dropped).
const (
	// heldFor says what happened to the hold: declined, or ran out.
	heldFor    = `{{if .Declined}}you declined {{.Service}} on {{.When}}, which we held for you{{else}}the hold we kept for you on {{.Service}} on {{.When}} ran out{{end}}`
	heldForCap = `{{if .Declined}}You declined {{.Service}} on {{.When}}, which we held for you{{else}}The hold we kept for you on {{.Service}} on {{.When}} ran out{{end}}`
	// missesLeft warns of the drop to come, when one will.
	missesLeft = `{{if eq .MissesLeft 1}} If the next one isn't taken up either, you'll be taken off the list.{{else if .MissesLeft}} After {{.MissesLeft}} more that aren't taken up, you'll be taken off the list.{{end}}`
	dropped    = `{{if gt .Lapses 1}}That's {{.Lapses}} offers not taken up, so we{{else}}We{{end}}'ve taken you off the waitlist, to give the next people in line their turn.`
	joinAgain  = `You're welcome to join again{{if .JoinLink}}: {{.JoinLink}}{{else if .Contact}} by writing to {{.Contact}}{{else}} by getting in touch with {{.Business}}{{end}}. You'd start at the back of the list.`
)

const (
	buttonStyle  = `style="display:inline-block;background:#1f6f5c;color:#ffffff;padding:12px 22px;border-radius:6px;text-decoration:none;font-weight:600"`
	button       = `<a href="{{.Link}}" ` + buttonStyle + `>`
	buttonStatus = `<a href="{{.StatusLink}}" ` + buttonStyle + `>`
)

// layout wraps every HTML email: the business's name on top, the content,
// and the unsubscribe link of mail a person may stop.
var layout = htmltemplate.Must(htmltemplate.New("layout").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>{{.Subject}}</title></head>
<body style="margin:0;padding:24px 12px;background:#f4f4f1;font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;font-size:16px;line-height:1.5;color:#1d1d1b">
<div style="max-width:520px;margin:0 auto;background:#ffffff;border-radius:8px;padding:24px">
<p style="margin:0 0 16px;font-size:14px;color:#666">{{.Business}}</p>
{{.Content}}
</div>
{{if .Unsubscribe}}<p style="max-width:520px;margin:12px auto 0;font-size:12px;color:#777;text-align:center">You get this because you joined the {{.Business}} waitlist. <a href="{{.Unsubscribe}}" style="color:#777">Stop these emails</a></p>{{end}}
</body></html>
`))

// compiled is one kind's templates, parsed.
type compiled struct {
	subject, text, sms *template.Template
	html               *htmltemplate.Template
}

func compile(kind string, t nextup.MessageTemplate) (compiled, []nextup.FieldError) {
	var c compiled
	var errs []nextup.FieldError
	fail := func(part string, err error) {
		errs = append(errs, nextup.FieldError{Field: "templates." + kind + "." + part, Message: err.Error()})
	}
	parse := func(part, src string) *template.Template {
		tt, err := template.New(kind + "." + part).Option("missingkey=error").Parse(src)
		if err == nil {
			err = plain(tt.Tree.Root)
		}
		if err != nil {
			fail(part, err)
		}
		return tt
	}
	c.subject, c.text, c.sms = parse("subject", t.Subject), parse("text", t.Text), parse("sms", t.SMS)
	h, err := htmltemplate.New(kind + ".html").Option("missingkey=error").Parse(t.HTML)
	if err == nil {
		err = plain(h.Tree.Root)
	}
	if err != nil {
		fail("html", err)
	}
	c.html = h
	return c, errs
}

// allowedFuncs are the functions a template may call: comparisons.
var allowedFuncs = map[string]bool{"eq": true, "ne": true, "lt": true, "le": true, "gt": true, "ge": true,
	"and": true, "or": true, "not": true}

// plain checks that a template only fills in fields and chooses with if:
// no range, with, template, block or variables, no functions but
// comparisons. A business's template runs inside the transactions that
// send its messages, so it must not be able to loop, nest or grow.
func plain(n parse.Node) error {
	switch n := n.(type) {
	case nil:
		return nil
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := plain(c); err != nil {
				return err
			}
		}
		return nil
	case *parse.TextNode, *parse.CommentNode:
		return nil
	case *parse.ActionNode:
		return plainPipe(n.Pipe)
	case *parse.IfNode:
		if err := plainPipe(n.Pipe); err != nil {
			return err
		}
		if err := plain(n.List); err != nil {
			return err
		}
		if n.ElseList != nil {
			return plain(n.ElseList)
		}
		return nil
	}
	return fmt.Errorf("only {{.Field}} and {{if}} … {{else}} … {{end}} may be used, not %q", shorten(n.String()))
}

func plainPipe(p *parse.PipeNode) error {
	if p == nil {
		return nil
	}
	if len(p.Decl) > 0 {
		return fmt.Errorf("variables may not be declared: %q", shorten(p.String()))
	}
	for _, cmd := range p.Cmds {
		for i, arg := range cmd.Args {
			switch a := arg.(type) {
			case *parse.FieldNode, *parse.DotNode, *parse.StringNode, *parse.NumberNode, *parse.BoolNode, *parse.NilNode:
			case *parse.VariableNode:
				if len(a.Ident) == 0 || a.Ident[0] != "$" {
					return fmt.Errorf("only $ may be used as a variable: %q", shorten(a.String()))
				}
			case *parse.IdentifierNode:
				if i != 0 || !allowedFuncs[a.Ident] {
					return fmt.Errorf("function %q may not be used (only comparisons: eq, ne, lt, le, gt, ge, and, or, not)", a.Ident)
				}
			case *parse.PipeNode:
				if err := plainPipe(a); err != nil {
					return err
				}
			default:
				return fmt.Errorf("%q may not be used", shorten(arg.String()))
			}
		}
	}
	return nil
}

func shorten(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// maxRendered bounds what one template part may write.
const maxRendered = 64 << 10

// capped is a writer that refuses to grow past maxRendered.
type capped struct{ bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if c.Len()+len(p) > maxRendered {
		return 0, fmt.Errorf("renders to more than %d KiB", maxRendered>>10)
	}
	return c.Buffer.Write(p)
}

// defaults is every kind's default, compiled once.
var defaults = func() map[string]compiled {
	out := map[string]compiled{}
	for kind, t := range defaultTemplates {
		c, errs := compile(kind, t)
		if len(errs) > 0 {
			panic(fmt.Sprintf("default template %s: %v", kind, errs))
		}
		out[kind] = c
	}
	return out
}()

// businessTemplates caches a business's own templates, compiled, by a hash
// of their source: a profile change makes a new entry.
var businessTemplates sync.Map // [32]byte -> map[string]compiled

func overrides(p nextup.Profile) map[string]compiled {
	if len(p.Templates) == 0 {
		return nil
	}
	raw, _ := json.Marshal(p.Templates)
	key := sha256.Sum256(raw)
	if c, ok := businessTemplates.Load(key); ok {
		return c.(map[string]compiled)
	}
	out := map[string]compiled{}
	for kind, t := range p.Templates {
		t = withDefaults(kind, t)
		if c, errs := compile(kind, t); len(errs) == 0 {
			out[kind] = c
		}
	}
	businessTemplates.Store(key, out)
	return out
}

// withDefaults fills the parts a business left empty with the default's.
func withDefaults(kind string, t nextup.MessageTemplate) nextup.MessageTemplate {
	d := defaultTemplates[kind]
	t.Subject = CmpOr(t.Subject, d.Subject)
	t.Text = CmpOr(t.Text, d.Text)
	t.HTML = CmpOr(t.HTML, d.HTML)
	t.SMS = CmpOr(t.SMS, d.SMS)
	return t
}

// CmpOr is a, or b when a is blank: a part a business left empty takes
// the default's.
func CmpOr(a, b string) string {
	if strings.TrimSpace(a) == "" {
		return b
	}
	return a
}

// sampleData fills every field, to try a business's template before it is
// saved.
var sampleData = TemplateData{Business: "Salon", Name: "Ada", Service: "Cut", Staff: "Anna", When: "Tue 1 Dec at 3:00 pm",
	Until: "2:25 pm", Countdown: "10 minutes", Link: "https://nextup.example/c/t", Seats: 2,
	StatusLink: "https://nextup.example/s/t", CalendarLink: "https://nextup.example/cal", Note: "Nobody on the list fits.",
	Contact: "owner@salon.example", ApproveLink: "https://nextup.example/p/t/approve", RejectLink: "https://nextup.example/p/t/reject",
	Lapses: 2, MissesLeft: 1, JoinLink: "https://nextup.example/b/salon/join", IfMissed: "You keep your place either way.", Other: "Colour"}

// Preview is a message of kind as t words it on sample data, for an owner
// editing their templates: the subject, the plain text, the email's HTML
// content (escaped as sent) and the SMS. t's empty parts take the
// defaults; a template that does not parse or run is its field errors.
func Preview(businessName, kind string, t nextup.MessageTemplate) (subject, text, html, sms string, errs []nextup.FieldError) {
	if errs = ValidateTemplates(map[string]nextup.MessageTemplate{kind: t}); len(errs) > 0 {
		return "", "", "", "", errs
	}
	c, _ := compile(kind, withDefaults(kind, t))
	d := sampleData
	d.Business = CmpOr(businessName, d.Business)
	r, err := c.run(d)
	if err != nil {
		return "", "", "", "", []nextup.FieldError{{Field: "templates." + kind, Message: err.Error()}}
	}
	return r.subject, r.text, r.html, r.sms, nil
}

// Default is the shipped wording of kind.
func Default(kind string) nextup.MessageTemplate { return defaultTemplates[kind] }

// maxTemplate bounds each template part's source, maxTemplates all of a
// business's together.
const (
	maxTemplate  = 16 << 10
	maxTemplates = 96 << 10
)

// ValidateTemplates checks a business's templates: known kinds, each part
// parses and runs on sample data (so a template naming a field that does
// not exist is refused when it is saved, not when a message is due).
func ValidateTemplates(ts map[string]nextup.MessageTemplate) []nextup.FieldError {
	var errs []nextup.FieldError
	total := 0
	for _, t := range ts {
		total += len(t.Subject) + len(t.Text) + len(t.HTML) + len(t.SMS)
	}
	if total > maxTemplates {
		// Every version is kept whole in one audit row (and the set in the
		// business's own), which a store bounds (DynamoDB: 400 KB an item).
		errs = append(errs, nextup.FieldError{Field: "templates", Message: "are longer than 96 KiB together"})
	}
	for _, kind := range slices.Sorted(maps.Keys(ts)) {
		t := ts[kind]
		if _, ok := defaultTemplates[kind]; !ok {
			errs = append(errs, nextup.FieldError{Field: "templates." + kind,
				Message: "unknown kind; want one of " + strings.Join(TemplateKinds, ", ")})
			continue
		}
		for part, src := range map[string]string{"subject": t.Subject, "text": t.Text, "html": t.HTML, "sms": t.SMS} {
			if len(src) > maxTemplate {
				errs = append(errs, nextup.FieldError{Field: "templates." + kind + "." + part, Message: "is longer than 16 KiB"})
			}
		}
		c, perrs := compile(kind, withDefaults(kind, t))
		if len(perrs) > 0 {
			errs = append(errs, perrs...)
			continue
		}
		r, err := c.run(sampleData)
		if err != nil {
			errs = append(errs, nextup.FieldError{Field: "templates." + kind, Message: err.Error()})
			continue
		}
		if kind == TemplateOffer || kind == TemplateEscalation {
			// An offer nobody can open claims nothing.
			for part, out := range map[string]string{"text": r.text, "html": r.html, "sms": r.sms} {
				if !strings.Contains(out, sampleData.Link) {
					errs = append(errs, nextup.FieldError{Field: "templates." + kind + "." + part, Message: "must contain the claim link {{.Link}}"})
				}
			}
		}
	}
	return errs
}

// rendered is one message's words.
type rendered struct {
	subject, text, sms, html string
}

func (c compiled) run(d TemplateData) (rendered, error) {
	var r rendered
	for _, p := range []struct {
		t   interface{ Execute(io.Writer, any) error }
		out *string
	}{{c.subject, &r.subject}, {c.text, &r.text}, {c.sms, &r.sms}, {c.html, &r.html}} {
		var b capped
		if err := p.t.Execute(&b, d); err != nil {
			return rendered{}, err
		}
		*p.out = b.String()
	}
	r.subject = strings.Join(strings.Fields(r.subject), " ") // one line
	return r, nil
}

// Compose words a message of kind for channel in the business's templates
// (its own where it has them, else the defaults), filling m's Subject, Body
// and HTML. unsubscribe, when set, is the one-click link the HTML footer
// offers. A business template that fails at run time (it was tried on
// sample data when saved, so this is a bug) falls back to the default: a
// message must never be lost to its wording.
func Compose(biz nextup.Business, kind string, d TemplateData, m *nextup.Message) {
	d.Business = biz.Name
	m.TemplateVersion = biz.Profile.TemplatesVersion
	if d.Contact == "" {
		d.Contact = biz.Profile.OwnerEmail
	}
	r, err := rendered{}, error(nil)
	c, own := overrides(biz.Profile)[kind]
	if own {
		if r, err = c.run(d); err != nil {
			slog.Warn("business template failed; using the default", "business_id", biz.ID, "kind", kind, "error", err)
		}
	}
	if !own || err != nil {
		if r, err = defaults[kind].run(d); err != nil {
			panic(fmt.Sprintf("default template %s: %v", kind, err)) // fixed templates, plain data
		}
	}
	if m.Channel == nextup.ChannelSMS {
		m.Subject, m.Body, m.HTML = "", r.sms, ""
		return
	}
	m.Subject, m.Body = r.subject, r.text
	var b bytes.Buffer
	err = layout.Execute(&b, struct {
		Subject, Business, Unsubscribe string
		Content                        htmltemplate.HTML
	}{r.subject, biz.Name, m.UnsubscribeURL, htmltemplate.HTML(r.html)}) // r.html was escaped by html/template
	if err != nil {
		panic(fmt.Sprintf("email layout: %v", err))
	}
	m.HTML = b.String()
}

// PlaceInLine is where someone at position is in line, in words, as the
// business's rules let them see it: "3rd in line" (exact), "in the next
// few" (bands), or "" (hidden, or no position).
func PlaceInLine(rules nextup.Rules, position int) string {
	if position <= 0 {
		return ""
	}
	switch rules.PositionVisibility {
	case nextup.PositionExact:
		return Ordinal(position) + " in line"
	case nextup.PositionBand:
		switch {
		case position <= 3:
			return "in the next few"
		case position <= 10:
			return "in the top 10"
		case position <= 25:
			return "in the top 25"
		}
		return "further back in line"
	}
	return ""
}

// Ordinal is n as "1st", "2nd", "3rd", "4th", "11th", "22nd".
func Ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}
