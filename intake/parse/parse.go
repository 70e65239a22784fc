// Package parse proposes a waitlist row from what a person wrote when
// asking for a booking: who they are, how to reach them, what they want,
// for how many, when and with whom. It is deterministic and uses no model
// and no network: the same words, sent at the same time to the same
// business, always give the same proposal.
//
// It reads English as people write it in booking emails ("table for 4
// this Friday around 7:30", "me and my sister", "any weekday next week",
// "mornings, not Fridays", "a week on Tuesday", "between now and Friday",
// "with Anna"), and dates, times and party sizes in German, French,
// Spanish and Dutch too ("nächste Woche", "du lundi 4 au vendredi 8
// janvier", "el próximo martes", "volgende week dinsdag", "mesa para
// cuatro", "met z'n drieën"). It places the holidays of the countries
// nextup serves, the movable ones too ("the night before Thanksgiving",
// "Ostermontag"), reads a line a mail client wrapped as one, and takes
// what is not asked for as background: a told past event ("I chipped a
// tooth on Saturday"), an occasion and its time ("the christening is at
// 1"), an absence ("I'm away until the 5th" is from the 6th on) and a
// notice line ("Office closed 24 Dec - 2 Jan"). What it cannot read it leaves
// empty and says so in Problems, with a low confidence, so that staff look
// before they approve; dates it could read more than one way (04/05 where
// the country does not settle the order, "Friday" written on a Friday, a
// weekday that is not its date's) it reads as best it can, and says so the
// same way.
//
// The package knows no MIME, store or HTTP: the inbox lane feeds it what
// package mailmsg extracted, and any other lane can feed it text.
package parse

import (
	"sort"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
)

// MaxText is how much of the text Propose reads; a booking request is a
// few hundred words, and the bound keeps a pasted novel cheap.
const MaxText = 64 << 10

// Input is what the requester wrote and when.
type Input struct {
	// Text is the requester's own words, quotes and signature removed.
	Text string
	// Signature is the sign-off block cut from the text, read for the
	// name and phone number only.
	Signature string
	// Subject is the message subject without Re:/Fwd: prefixes.
	Subject string
	// Reply reports whether the message answered an earlier one; a name
	// in its greeting is then not taken as a staff preference.
	Reply bool
	// FromName and FromAddress are the requester's mailbox as their mail
	// client wrote it.
	FromName    string
	FromAddress string
	// Sent is when the request was written; relative dates ("tomorrow",
	// "next week") count from it, in the business's timezone.
	Sent time.Time
}

// Business is what Propose matches against.
type Business struct {
	// Location is the business's timezone; nil means UTC.
	Location *time.Location
	// Country is the ISO 3166-1 alpha-2 region for phone numbers written
	// without a country code.
	Country  string
	Services []nextup.Service
	Staff    []string
}

// Field names, as in the API's proposal "fields" and "confidence".
const (
	FieldName         = "name"
	FieldEmail        = "email"
	FieldPhone        = "phone"
	FieldService      = "service"
	FieldPartySize    = "party_size"
	FieldEarliest     = "earliest"
	FieldLatest       = "latest"
	FieldStaff        = "staff"
	FieldAvailability = "availability"
)

// Proposal is a proposed waitlist row. Empty fields were not found.
type Proposal struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	// Phone is E.164 ("+447911123456").
	Phone string `json:"phone"`
	// Service is the name of one of the business's services.
	Service   string `json:"service"`
	PartySize int    `json:"party_size"`
	// Earliest and Latest bound the acceptable start in the business
	// timezone; a whole day runs from its midnight to its last
	// microsecond, as the API's date-only bounds do.
	Earliest time.Time `json:"earliest"`
	Latest   time.Time `json:"latest"`
	// Staff is one of the business's staff names.
	Staff string `json:"staff"`
	// Availability holds weekly windows ("Tuesdays and Thursdays from
	// 10", "weekday lunchtimes") when the request names some.
	Availability []nextup.Availability `json:"availability,omitempty"`
	// Confidence is 0..1 per field name; a field that was not found has 0.
	Confidence map[string]float64 `json:"confidence"`
	// Problems are what staff should check, in plain words.
	Problems []string `json:"problems"`
}

// Propose reads in against b and proposes a row.
func Propose(in Input, b Business) Proposal {
	if b.Location == nil {
		b.Location = time.UTC
	}
	for _, f := range []*string{&in.Text, &in.Signature, &in.Subject, &in.FromName, &in.FromAddress} {
		*f = strings.ToValidUTF8(*f, "\uFFFD")
	}
	in.Text = clipText(in.Text, MaxText)
	in.Signature = clipText(in.Signature, MaxText/4)
	in.Subject = clipText(in.Subject, 1024)
	in.FromName = clipText(in.FromName, 256)
	in.FromAddress = clipText(in.FromAddress, 256)

	p := Proposal{Confidence: map[string]float64{}}
	text := normalize(in.Text)
	sig := normalize(in.Signature)
	subject := normalize(in.Subject)

	c := findContact(in, text, sig, b.Country)
	p.Name, p.Confidence[FieldName] = c.name, c.nameConf
	p.Email, p.Confidence[FieldEmail] = c.email, c.emailConf
	p.Phone, p.Confidence[FieldPhone] = c.phone, c.phoneConf
	p.Problems = append(p.Problems, c.problems...)

	svc := matchService(text, subject, b.Services)
	p.Service, p.Confidence[FieldService] = svc.name, svc.conf
	p.Problems = append(p.Problems, svc.problems...)

	st := matchStaff(text, subject, in.Reply, p.Name, b.Staff)
	p.Staff, p.Confidence[FieldStaff] = st.name, st.conf
	p.Problems = append(p.Problems, st.problems...)

	party := findPartySize(text, subject)
	p.PartySize, p.Confidence[FieldPartySize] = party.n, party.conf
	p.Problems = append(p.Problems, party.problems...)

	sent := in.Sent
	if sent.IsZero() {
		p.Problems = append(p.Problems, "the sending time is unknown, so relative dates could not be placed")
	} else {
		w := findWhen(text, subject, sent.In(b.Location), b.Country)
		p.Earliest, p.Latest, p.Availability = w.earliest, w.latest, w.availability
		p.Confidence[FieldEarliest], p.Confidence[FieldLatest] = w.conf, w.conf
		if len(w.availability) > 0 {
			p.Confidence[FieldAvailability] = w.conf
		}
		p.Problems = append(p.Problems, w.problems...)
		if !p.Latest.IsZero() && p.Latest.Before(sent) {
			p.Problems = append(p.Problems, "the requested time is already past when the request was sent")
		}
	}

	if p.Email == "" && p.Phone == "" {
		p.Problems = append(p.Problems, "no email address or phone number to reach the requester")
	}
	for k, v := range p.Confidence {
		p.Confidence[k] = min(max(v, 0), 1)
	}
	p.Problems = dedupe(p.Problems)
	return p
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	out := ss[:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	if len(out) > 20 {
		out = out[:20]
	}
	return out
}

// normalize straightens typographic quotes and dashes and no-break spaces
// so that patterns need to know only one spelling.
func normalize(s string) string {
	return strings.NewReplacer(
		"\u2019", "'", "\u2018", "'", "\u00b4", "'", "`", "'",
		"\u201c", `"`, "\u201d", `"`,
		"\u2013", "-", "\u2014", "-", "\u2012", "-", "\u2212", "-",
		"\u00a0", " ", "\u202f", " ", "\r", "",
	).Replace(s)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
