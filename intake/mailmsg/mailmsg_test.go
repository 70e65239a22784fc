package mailmsg_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup/intake/mailmsg"
)

const corpus = "../testdata/inbox"

func readCorpus(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpus, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestExtractForwards checks that the original requester, not the
// forwarder, is found in each way mail clients forward, and that the
// original's own date is kept.
func TestExtractForwards(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, from, name, forwarder, sent string
		forwarded                         bool
		note                              string
	}{
		{"001.eml", "sarah.jones84@gmail.com", "Sarah Jones", "sarah.jones84@gmail.com", "2026-03-05T09:14:22Z", false, ""},
		{"002.eml", "priya.shah@outlook.com", "Priya Shah", "hello@studioninehair.co.uk", "2026-03-05T21:47:00Z", true, "She's a regular"},
		{"003.eml", "emma.clarke@icloud.com", "Emma Clarke", "chloe@studioninehair.co.uk", "2026-03-07T18:20:05Z", true, ""},
		{"004.eml", "mark.thompson@harrisonlaw.co.uk", "Thompson, Mark", "hello@studioninehair.co.uk", "2026-03-10T10:58:00Z", true, ""},
		{"007.eml", "m.hughes1952@btinternet.com", "Margaret Hughes", "hello@studioninehair.co.uk", "2026-03-17T16:22:00Z", true, ""},
		{"010.eml", "dan.okafor@yahoo.co.uk", "Daniel Okafor", "chloe@studioninehair.co.uk", "2026-03-24T07:55:03Z", true, "forwarding this as an attachment"},
		{"011.eml", "hannah.lee@gmail.com", "Hannah Lee", "hello@studioninehair.co.uk", "2026-03-25T14:03:00Z", true, ""},
		{"015.eml", "pwalsh@walshaccountants.ie", "Patrick Walsh", "reception@riversidedental.ie", "2026-04-06T16:45:10+01:00", true, ""},
		{"021.eml", "joshtaylor.91@bigpond.com", "Josh Taylor", "admin@backinmotionphysio.com.au", "2026-05-03T19:44:00+10:00", true, ""},
		{"038.eml", "julia.schneider@web.de", "Julia Schneider", "hallo@tonundco.de", "2026-03-27T14:05:00+01:00", true, ""},
		{"041.eml", "ben.fischer@posteo.de", "Ben Fischer", "mia@tonundco.de", "2026-04-07T19:02:44+02:00", true, ""},
		{"060.eml", "h.tanaka@mitsui.co.jp", "Hiroshi Tanaka", "reservations@lucastrattoria.com", "2026-05-20T21:05:00-04:00", true, "counter list"},
		{"063.eml", "andre.t@outlook.com", "Andre Thompson", "southsidebarbers@gmail.com", "2026-05-26T18:05:00-05:00", true, ""},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			r, err := mailmsg.Extract(readCorpus(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if r.From.Address != tc.from || r.From.Name != tc.name {
				t.Errorf("From = %q <%s>, want %q <%s>", r.From.Name, r.From.Address, tc.name, tc.from)
			}
			if r.Forwarder.Address != tc.forwarder {
				t.Errorf("Forwarder = %s, want %s", r.Forwarder.Address, tc.forwarder)
			}
			if r.Forwarded != tc.forwarded {
				t.Errorf("Forwarded = %v, want %v", r.Forwarded, tc.forwarded)
			}
			want, _ := time.Parse(time.RFC3339, tc.sent)
			if !r.Sent.Equal(want) {
				t.Errorf("Sent = %s, want %s", r.Sent, want)
			}
			if !strings.Contains(r.Note, tc.note) {
				t.Errorf("Note = %q, want it to contain %q", r.Note, tc.note)
			}
		})
	}
}

// TestExtractStripsHistory checks every corpus message: no quoted line, no
// reply introduction, no forward header and no mobile footer is left in
// the body.
func TestExtractStripsHistory(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(corpus, "*.eml"))
	if len(files) < 60 {
		t.Fatalf("corpus has %d messages, want at least 60", len(files))
	}
	for _, f := range files {
		r, err := mailmsg.Extract(readCorpus(t, filepath.Base(f)))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, l := range strings.Split(r.Body, "\n") {
			low := strings.ToLower(l)
			if strings.HasPrefix(l, ">") || strings.HasSuffix(low, "wrote:") || strings.HasPrefix(low, "from:") ||
				strings.HasPrefix(low, "sent from") || strings.Contains(low, "forwarded message") {
				t.Errorf("%s: history left in body: %q", filepath.Base(f), l)
			}
		}
		if r.Body == "" {
			t.Errorf("%s: empty body", filepath.Base(f))
		}
	}
}

func TestExtractSignatureAndCharsets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, inBody, inSig, notInBody string
	}{
		{"011.eml", "squeeze me in", "07911 222333", "Hannah Lee"},
		{"017.eml", "Thursday 16th", "", "Aoife"},
		{"003.eml", "Mornings are best", "Sent from my iPhone", "iPhone"},
		{"007.eml", "daughter’s car", "", "Original Message"},
		{"012.eml", "François Lefèvre", "", ""},
		{"039.eml", "für mich und meine Frau", "", ""},
		{"057.eml", "Bríd Kavanagh", "", ""},
		{"009.eml", "balayage? Ideally with Anna", "", "<div>"},
		{"055.eml", "Early June", "07911 334455", "Chloe"},
		{"005.eml", "Name: Lucy Green", "", "<td>"},
	} {
		r, err := mailmsg.Extract(readCorpus(t, tc.file))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if !strings.Contains(r.Body, tc.inBody) {
			t.Errorf("%s: body %q lacks %q", tc.file, r.Body, tc.inBody)
		}
		if !strings.Contains(r.Signature, tc.inSig) {
			t.Errorf("%s: signature %q lacks %q", tc.file, r.Signature, tc.inSig)
		}
		if tc.notInBody != "" && strings.Contains(r.Body, tc.notInBody) {
			t.Errorf("%s: body %q has %q", tc.file, r.Body, tc.notInBody)
		}
	}
}

func TestExtractBounds(t *testing.T) {
	t.Parallel()
	big := append([]byte("From: a@b.c\r\nSubject: x\r\n\r\n"), bytes.Repeat([]byte("a"), mailmsg.MaxSize)...)
	if _, err := mailmsg.Extract(big); !errors.Is(err, mailmsg.ErrTooLarge) {
		t.Errorf("oversized message: err = %v, want ErrTooLarge", err)
	}

	// Messages attached inside messages, deeper than any client nests.
	msg := "From: x@example.com\r\nSubject: hi\r\n\r\nhello\r\n"
	for i := range mailmsg.MaxDepth + 2 {
		msg = "From: f" + strings.Repeat("o", i) + "@example.com\r\nSubject: fw\r\nContent-Type: message/rfc822\r\n\r\n" + msg
	}
	if _, err := mailmsg.Extract([]byte(msg)); !errors.Is(err, mailmsg.ErrTooDeep) {
		t.Errorf("deep attached messages: err = %v, want ErrTooDeep", err)
	}

	// Multiparts inside multiparts.
	body := "Content-Type: text/plain\r\n\r\nhello\r\n"
	for i := range mailmsg.MaxDepth + 2 {
		b := "b" + strings.Repeat("x", i)
		body = "Content-Type: multipart/mixed; boundary=" + b + "\r\n\r\n--" + b + "\r\n" + body + "\r\n--" + b + "--\r\n"
	}
	if _, err := mailmsg.Extract([]byte("From: x@example.com\r\n" + body)); !errors.Is(err, mailmsg.ErrTooDeep) {
		t.Errorf("deep multiparts: err = %v, want ErrTooDeep", err)
	}

	if _, err := mailmsg.Extract([]byte("From: x@example.com\r\n\r\n \r\n")); !errors.Is(err, mailmsg.ErrNoText) {
		t.Errorf("empty message: err = %v, want ErrNoText", err)
	}
}

// TestExtractInlineShapes covers forward and reply shapes written inline,
// one case each, so that a regression names its shape.
func TestExtractInlineShapes(t *testing.T) {
	t.Parallel()
	const outer = "From: Desk <desk@salon.test>\r\nDate: Mon, 02 Mar 2026 10:00:00 +0000\r\nSubject: %s\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"
	for _, tc := range []struct {
		name, subject, body  string
		from, sent, wantBody string
		forwarded            bool
		notInBody            string
	}{
		{"outlook original message", "FW: hi", "-----Original Message-----\nFrom: Jo Bloggs [mailto:jo@x.test]\nSent: Sunday, March 1, 2026 4:05 PM\nTo: desk\nSubject: hi\n\nA cut please\n",
			"jo@x.test", "2026-03-01T16:05:00Z", "A cut please", true, ""},
		{"reply quoting an original message is no forward", "RE: hi", "Yes Tuesday\n\n-----Original Message-----\nFrom: Desk [mailto:desk@salon.test]\nSent: Sunday, March 1, 2026 4:05 PM\nSubject: hi\n\nWould Tuesday suit?\n",
			"desk@salon.test", "2026-03-02T10:00:00Z", "Yes Tuesday", false, "Would Tuesday"},
		{"thunderbird", "Fwd: hi", "-------- Forwarded Message --------\nSubject: \thi\nDate: \tSun, 1 Mar 2026 16:05:00 +0100\nFrom: \tJo Bloggs <jo@x.test>\nTo: \tdesk@salon.test\n\nA cut please\n",
			"jo@x.test", "2026-03-01T15:05:00Z", "A cut please", true, ""},
		{"wrapped reply intro", "Re: hi", "Tuesday is fine\n\nOn Sun, 1 Mar 2026 at 16:05, Desk Person <\ndesk@salon.test> wrote:\n\n> Would Tuesday suit?\n",
			"desk@salon.test", "2026-03-02T10:00:00Z", "Tuesday is fine", false, "wrote"},
		{"signature delimiter", "hi", "A cut please\n-- \nJo\n07911 123456\n", "desk@salon.test", "2026-03-02T10:00:00Z", "A cut please", false, "07911"},
		{"dutch gmail forward", "Fwd: hi", "---------- Doorgestuurd bericht ---------\nVan: Eva Visser <eva@x.test>\nDate: ma 5 okt 2026 om 09:10\nSubject: hi\nTo: <desk@salon.test>\n\nGraag een massage\n",
			"eva@x.test", "2026-10-05T09:10:00Z", "Graag een massage", true, "Doorgestuurd"},
		{"dutch outlook forward", "FW: hi", "________________________________\nVan: Eva Visser <eva@x.test>\nVerzonden: maandag 5 oktober 2026 09:10\nAan: Desk\nOnderwerp: hi\n\nGraag een massage\n",
			"eva@x.test", "2026-10-05T09:10:00Z", "Graag een massage", true, "Verzonden"},
		{"dutch apple mail forward", "Fwd: hi", "Begin doorgestuurd bericht:\n\n> Van: Eva Visser <eva@x.test>\n> Onderwerp: hi\n> Datum: 5 oktober 2026 om 09:10:00 CEST\n> Aan: desk@salon.test\n>\n> Graag een massage\n",
			"eva@x.test", "2026-10-05T07:10:00Z", "Graag een massage", true, "Datum"},
		{"spanish gmail forward dated on a tuesday", "Fwd: hi", "---------- Mensaje reenviado ---------\nDe: Ana Ruiz <ana@x.test>\nDate: mar, 3 nov 2026, 10:15\nSubject: hi\nTo: <desk@salon.test>\n\nUna mesa para dos\n",
			"ana@x.test", "2026-11-03T10:15:00Z", "Una mesa para dos", true, ""},
		{"spanish gmail forward in march", "Fwd: hi", "---------- Mensaje reenviado ---------\nDe: Ana Ruiz <ana@x.test>\nDate: mar, 3 mar 2026, 10:15\nSubject: hi\nTo: <desk@salon.test>\n\nUna mesa para dos\n",
			"ana@x.test", "2026-03-03T10:15:00Z", "Una mesa para dos", true, ""},
		{"spanish outlook forward", "RV: hi", "________________________________\nDe: Ana Ruiz <ana@x.test>\nEnviado: martes, 3 de noviembre de 2026 10:15\nPara: Desk\nAsunto: hi\n\nUna mesa para dos\n",
			"ana@x.test", "2026-11-03T10:15:00Z", "Una mesa para dos", true, ""},
		{"spanish outlook forward, enviado el", "RV: hi", "________________________________\nDe: Ana Ruiz <ana@x.test>\nEnviado el: martes, 3 de noviembre de 2026 10:15\nPara: Desk\nAsunto: hi\n\nUna mesa para dos\n",
			"ana@x.test", "2026-11-03T10:15:00Z", "Una mesa para dos", true, ""},
		{"spanish outlook forward with a note above", "RV: hi", "Para la lista de espera.\n\n________________________________\nDe: Ana Ruiz <ana@x.test>\nEnviado el: martes, 3 de noviembre de 2026 10:15\nPara: Desk\nAsunto: hi\n\nUna mesa para dos\n",
			"ana@x.test", "2026-11-03T10:15:00Z", "Una mesa para dos", true, "Para la lista de espera."},
		{"french gmail forward dated on a tuesday", "Fwd: hi", "---------- Forwarded message ---------\nDe : Anne Girard <anne@x.test>\nDate: mar. 3 nov. 2026 à 10:15\nSubject: hi\nTo: <desk@salon.test>\n\nUne coupe\n",
			"anne@x.test", "2026-11-03T10:15:00Z", "Une coupe", true, ""},
		{"german outlook reply", "AW: hi", "Dienstag passt\n\n-----Ursprüngliche Nachricht-----\nVon: Desk <desk@salon.test>\nGesendet: Montag, 2. November 2026 09:00\nBetreff: hi\n\nPasst Ihnen Dienstag?\n",
			"desk@salon.test", "2026-03-02T10:00:00Z", "Dienstag passt", false, "Passt Ihnen"},
		{"german gmail reply intro", "Re: hi", "Dienstag passt\n\nAm Di., 3. Nov. 2026 um 10:15 Uhr schrieb Jana Weber <\njana@x.test>:\n\n> Passt Ihnen Dienstag?\n",
			"desk@salon.test", "2026-03-02T10:00:00Z", "Dienstag passt", false, "schrieb"},
		{"dutch gmail reply intro", "Re: hi", "Dinsdag is goed\n\nOp ma 2 nov 2026 om 08:30 schreef Fysio Oost <info@x.test>:\n\n> Past dinsdag?\n",
			"desk@salon.test", "2026-03-02T10:00:00Z", "Dinsdag is goed", false, "schreef"},
		{"french gmail reply intro", "Re: hi", "Mardi me va\n\nLe mar. 3 nov. 2026 à 10:15, Anne Girard <anne@x.test> a écrit :\n\n> Mardi ?\n",
			"desk@salon.test", "2026-03-02T10:00:00Z", "Mardi me va", false, "écrit"},
		{"spanish gmail reply intro", "Re: hi", "El martes me va bien\n\nEl mar, 3 nov 2026 a las 10:15, Ana Ruiz (<ana@x.test>) escribió:\n\n> ¿El martes?\n",
			"desk@salon.test", "2026-03-02T10:00:00Z", "El martes me va bien", false, "escribió"},
		{"a line that only looks like a reply intro", "hi", "Am Ende schrieb ich:\nbitte Dienstag\n",
			"desk@salon.test", "2026-03-02T10:00:00Z", "bitte Dienstag", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			raw := strings.Replace(outer, "%s", tc.subject, 1) + strings.ReplaceAll(tc.body, "\n", "\r\n")
			r, err := mailmsg.Extract([]byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			want, _ := time.Parse(time.RFC3339, tc.sent)
			if r.From.Address != tc.from || !r.Sent.Equal(want) || r.Forwarded != tc.forwarded {
				t.Errorf("got from %s sent %s forwarded %v; want %s %s %v", r.From.Address, r.Sent, r.Forwarded, tc.from, want, tc.forwarded)
			}
			if !strings.Contains(r.Body, tc.wantBody) || (tc.notInBody != "" && strings.Contains(r.Body, tc.notInBody)) {
				t.Errorf("body %q: want %q and not %q", r.Body, tc.wantBody, tc.notInBody)
			}
		})
	}
}

// FuzzExtract feeds the corpus and mutations of it to Extract: it must
// not panic, must refuse what is over the bounds, and must never return
// more text than it was given (plus the small expansion a charset or an
// HTML entity can cause).
func FuzzExtract(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(corpus, "*.eml"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("From: a@b.c\r\nContent-Type: message/rfc822\r\n\r\nFrom: d@e.f\r\n\r\nhi"))
	f.Add([]byte("Content-Type: text/html\r\n\r\n<blockquote><blockquote><div>Begin forwarded message:</div>From: x <y@z.w></blockquote>"))
	f.Add([]byte("From: a@b.c\r\nSubject: Fwd: x\r\n\r\n---------- Doorgestuurd bericht ---------\r\nVan: E <e@x.nl>\r\nDate: ma 5 okt 2026 om 09:10\r\n\r\nhoi\r\n\r\nOp ma 5 okt 2026 om 08:30 schreef F <f@x.nl>:\r\n> eerder\r\n"))
	f.Add([]byte("From: a@b.c\r\nSubject: RV: x\r\n\r\n________________________________\r\nDe: A <a@x.es>\r\nEnviado: mar, 3 nov 2026 10:15\r\nAsunto: x\r\n\r\nhola\r\n\r\nEl mar, 3 nov 2026 a las 9:00, B (<b@x.es>) escribió:\r\n> antes\r\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		r, err := mailmsg.Extract(raw)
		if err != nil {
			return
		}
		total := len(r.Body) + len(r.Signature) + len(r.Note) + len(r.Subject)
		if total > 8*len(raw)+1024 {
			t.Fatalf("%d bytes of text out of %d bytes in", total, len(raw))
		}
		if len(r.Warnings) > 32 {
			t.Fatalf("%d warnings", len(r.Warnings))
		}
	})
}
