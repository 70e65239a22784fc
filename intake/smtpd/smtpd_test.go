package smtpd_test

import (
	"context"
	"errors"
	"net"
	"net/smtp"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/intake/smtpd"
	"github.com/nextup-dev/nextup/store/sqlite"
	"github.com/nextup-dev/nextup/waitlist"
)

type delivery struct{ bid, from, raw string }

// start runs a listener for inbound.example over a real store with one
// business, corner-cuts, that takes mail forwarded by desk@cornercuts.example.
func start(t *testing.T, mod func(*smtpd.Server)) (addr, bid string, got func() []delivery, fail func(error)) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir()+"/n.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := waitlist.New(st, nextup.NewFakeClock(time.Date(2031, 3, 10, 9, 0, 0, 0, time.UTC)), "https://nextup.test")
	b, _, err := svc.CreateBusiness(ctx, waitlist.CreateBusinessParams{Name: "Corner Cuts", Timezone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	slug, senders := "corner-cuts", []string{"Desk@CornerCuts.example"}
	if _, err := svc.UpdateProfile(ctx, b.ID, waitlist.ProfilePatch{Slug: &slug, InboundSenders: &senders}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var ds []delivery
	var failWith error
	s := &smtpd.Server{Directory: svc, Domain: "inbound.example", Deliver: func(_ context.Context, bid, from string, raw []byte) error {
		mu.Lock()
		defer mu.Unlock()
		if failWith != nil {
			return failWith
		}
		ds = append(ds, delivery{bid, from, string(raw)})
		return nil
	}}
	if mod != nil {
		mod(s)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() { s.Close() })
	return ln.Addr().String(), b.ID, func() []delivery {
			mu.Lock()
			defer mu.Unlock()
			return append([]delivery(nil), ds...)
		}, func(err error) {
			mu.Lock()
			defer mu.Unlock()
			failWith = err
		}
}

const mail = "From: Ann <ann@example.com>\r\nTo: desk@cornercuts.example\r\nSubject: Fwd: a cut\r\n" +
	"Message-ID: <m1@example.com>\r\n\r\nCould I get a cut on Tuesday?\r\n"

// send delivers one mail with net/smtp and returns the SMTP code of the
// first refusal (0 when accepted).
func send(t *testing.T, addr, from, to, body string) int {
	t.Helper()
	c, err := smtp.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	code := func(err error) int {
		var te *textproto.Error
		if errors.As(err, &te) {
			return te.Code
		}
		t.Fatalf("not an SMTP reply: %v", err)
		return 0
	}
	if err := c.Mail(from); err != nil {
		return code(err)
	}
	if err := c.Rcpt(to); err != nil {
		return code(err)
	}
	w, err := c.Data()
	if err != nil {
		return code(err)
	}
	if _, err := w.Write([]byte(body)); err != nil {
		return code(err)
	}
	if err := w.Close(); err != nil {
		return code(err)
	}
	_ = c.Quit()
	return 0
}

func TestListenerAcceptsForwardedMail(t *testing.T) {
	t.Parallel()
	addr, bid, got, _ := start(t, nil)
	if c := send(t, addr, "desk@cornercuts.example", "Corner-Cuts@Inbound.example", mail); c != 0 {
		t.Fatalf("refused with %d", c)
	}
	ds := got()
	if len(ds) != 1 || ds[0].bid != bid || ds[0].from != "desk@cornercuts.example" || !strings.Contains(ds[0].raw, "Could I get a cut") {
		t.Fatalf("deliveries %+v", ds)
	}
}

func TestListenerRefusals(t *testing.T) {
	t.Parallel()
	addr, _, got, fail := start(t, func(s *smtpd.Server) { s.MaxBytes = 2048; s.PerMinute = 7 })
	for _, c := range []struct {
		name, from, to, body string
		want                 int
	}{
		{"unknown business", "desk@cornercuts.example", "nobody@inbound.example", mail, 550},
		{"another domain", "desk@cornercuts.example", "corner-cuts@elsewhere.example", mail, 550},
		{"a sender not allowed", "someone@else.example", "corner-cuts@inbound.example", mail, 550},
		{"too big", "desk@cornercuts.example", "corner-cuts@inbound.example", mail + strings.Repeat(strings.Repeat("x", 70)+"\r\n", 60), 552},
	} {
		if code := send(t, addr, c.from, c.to, c.body); code != c.want {
			t.Errorf("%s: %d, want %d", c.name, code, c.want)
		}
	}
	// The lane failing is a temporary refusal: the sender tries again.
	fail(errors.New("store down"))
	if code := send(t, addr, "desk@cornercuts.example", "corner-cuts@inbound.example", mail); code != 451 {
		t.Errorf("lane failing: %d, want 451", code)
	}
	// The lane's own refusal (too big to read) goes back as it is.
	fail(smtpd.ErrTooBig)
	if code := send(t, addr, "desk@cornercuts.example", "corner-cuts@inbound.example", mail); code != 552 {
		t.Errorf("lane refusing the size: %d, want 552", code)
	}
	fail(nil)
	// Seven messages a minute from one client: the next is told to slow down.
	if code := send(t, addr, "desk@cornercuts.example", "corner-cuts@inbound.example", mail); code != 0 {
		t.Errorf("seventh: %d", code)
	}
	if code := send(t, addr, "desk@cornercuts.example", "corner-cuts@inbound.example", mail); code != 421 {
		t.Errorf("eighth in a minute: %d, want 421", code)
	}
	if n := len(got()); n != 1 {
		t.Errorf("%d deliveries, want 1", n)
	}
}
