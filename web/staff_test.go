package web_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/web"
)

// formClient is a minimal cookie-keeping client that does not follow
// redirects, so that tests see every Set-Cookie and Location. (The test
// server is plain http while the base URL is https, so a cookie jar would
// hold back the Secure cookies.)
type formClient struct {
	t       testing.TB
	a       *api
	cookies map[string]*http.Cookie
}

func (a *api) client() *formClient {
	return &formClient{t: a.t, a: a, cookies: map[string]*http.Cookie{}}
}

type page struct {
	status   int
	location string
	body     string
	header   http.Header
	set      map[string]*http.Cookie
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the first CSRF token in a page's forms.
func (p page) csrf(t testing.TB) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no csrf field in:\n%s", p.body)
	}
	return m[1]
}

func (b *formClient) do(method, path string, form url.Values) page {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.a.srv.URL+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, c := range b.cookies {
		req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	p := page{status: res.StatusCode, location: res.Header.Get("Location"), body: string(raw), header: res.Header, set: map[string]*http.Cookie{}}
	for _, c := range res.Cookies() {
		p.set[c.Name] = c
		if c.MaxAge < 0 {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c
		}
	}
	return p
}

// staffBundle is a business with a staff account and the means to sign in.
type staffBundle struct {
	*api
	svc   *waitlist.Service
	email string
	pass  string
}

func setupStaff(t *testing.T) *staffBundle {
	t.Helper()
	var svc *waitlist.Service
	a := setup(t, func(s *web.Server) { svc = s.Svc; svc.PasswordCost = bcrypt.MinCost })
	sb := &staffBundle{api: a, svc: svc, email: "owner@salon.example", pass: "correct horse battery"}
	if _, err := svc.AddStaff(context.Background(), waitlist.AddStaffParams{BusinessID: a.bid, Email: "Owner@Salon.example", Name: "Olive", Password: sb.pass}); err != nil {
		t.Fatal(err)
	}
	return sb
}

// signIn signs b in and returns the dashboard page.
func (sb *staffBundle) signIn(b *formClient, email, pass string) page {
	sb.t.Helper()
	login := b.do("GET", "/login", nil)
	p := b.do("POST", "/login", url.Values{"csrf": {login.csrf(sb.t)}, "email": {email}, "password": {pass}, "next": {"/dash"}})
	if p.status != http.StatusSeeOther || p.location != "/dash" {
		sb.t.Fatalf("sign in: %d %q\n%s", p.status, p.location, p.body)
	}
	d := b.do("GET", "/dash", nil)
	if d.status != 200 {
		sb.t.Fatalf("dashboard after sign-in: %d\n%s", d.status, d.body)
	}
	return d
}

func TestStaffSignInAndOut(t *testing.T) {
	t.Parallel()
	sb := setupStaff(t)
	b := sb.client()

	// Signed out, the dashboard sends you to sign in, and back after.
	if p := b.do("GET", "/dash", nil); p.status != http.StatusSeeOther || p.location != "/login?next=%2Fdash" {
		t.Fatalf("signed-out /dash: %d %q", p.status, p.location)
	}
	login := b.do("GET", "/login", nil)
	if login.status != 200 || !strings.Contains(login.body, `<label for="email">Email</label>`) {
		t.Fatalf("login page: %d\n%s", login.status, login.body)
	}
	// A wrong password: refused, the email kept, no session.
	p := b.do("POST", "/login", url.Values{"csrf": {login.csrf(t)}, "email": {sb.email}, "password": {"wrong password!"}})
	if p.status != http.StatusUnauthorized || !strings.Contains(p.body, "do not match") || !strings.Contains(p.body, `value="owner@salon.example"`) {
		t.Fatalf("wrong password: %d\n%s", p.status, p.body)
	}
	if _, ok := p.set["nextup_session"]; ok {
		t.Fatal("a failed sign-in set a session cookie")
	}
	// The right one (the email in another case): a session cookie that
	// scripts cannot read, not sent cross-site, only over https.
	p = b.do("POST", "/login", url.Values{"csrf": {login.csrf(t)}, "email": {"OWNER@salon.example"}, "password": {sb.pass}})
	c := p.set["nextup_session"]
	if p.status != http.StatusSeeOther || c == nil || !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteLaxMode {
		t.Fatalf("sign-in: %d cookie %+v", p.status, c)
	}
	d := b.do("GET", "/dash", nil)
	if d.status != 200 || !strings.Contains(d.body, "Salon") || !strings.Contains(d.body, "owner@salon.example") {
		t.Fatalf("dashboard: %d\n%s", d.status, d.body)
	}
	// Signing out needs the form's token; then the cookie no longer works.
	if p := b.do("POST", "/logout", url.Values{}); p.status != http.StatusForbidden {
		t.Fatalf("logout without csrf: %d", p.status)
	}
	old := c.Value
	p = b.do("POST", "/logout", url.Values{"csrf": {d.csrf(t)}})
	if p.status != http.StatusSeeOther || p.location != "/login?done=out" {
		t.Fatalf("logout: %d %q", p.status, p.location)
	}
	b.cookies["nextup_session"] = &http.Cookie{Name: "nextup_session", Value: old}
	if p := b.do("GET", "/dash", nil); p.status != http.StatusSeeOther {
		t.Fatalf("the old session still works after sign-out: %d", p.status)
	}
}

// A session token planted in the browser before sign-in is not the one
// the sign-in hands out, and never becomes valid.
func TestStaffSessionFixation(t *testing.T) {
	t.Parallel()
	sb := setupStaff(t)
	b := sb.client()
	planted := "attacker-chosen-session-token-0123456789"
	b.cookies["nextup_session"] = &http.Cookie{Name: "nextup_session", Value: planted}
	sb.signIn(b, sb.email, sb.pass)
	if got := b.cookies["nextup_session"].Value; got == planted {
		t.Fatal("sign-in kept the planted session token")
	}
	attacker := sb.client()
	attacker.cookies["nextup_session"] = &http.Cookie{Name: "nextup_session", Value: planted}
	if p := attacker.do("GET", "/dash", nil); p.status != http.StatusSeeOther {
		t.Fatalf("the planted token opens the dashboard: %d", p.status)
	}
}

// Forms without the CSRF token are refused and change nothing.
func TestStaffCSRF(t *testing.T) {
	t.Parallel()
	sb := setupStaff(t)
	var slot map[string]any
	sb.must(sb.do("POST", "/v1/businesses/"+sb.bid+"/slots", sb.key,
		`{"service":"cut","starts_at":"2026-12-03T10:00:00Z","ends_at":"2026-12-03T10:30:00Z"}`), 201, &slot)
	sid := slot["id"].(string)
	b := sb.client()
	d := sb.signIn(b, sb.email, sb.pass)
	for _, form := range []url.Values{{"reason": {"cancellation"}}, {"reason": {"cancellation"}, "csrf": {"forged"}}} {
		if p := b.do("POST", "/dash/slots/"+sid+"/release", form); p.status != http.StatusForbidden {
			t.Fatalf("release without a good token: %d", p.status)
		}
	}
	var got map[string]any
	sb.must(sb.do("GET", "/v1/slots/"+sid, sb.key, ""), 200, &got)
	if got["booked_seats"] != float64(1) {
		t.Fatalf("a refused form changed the slot: %v", got)
	}
	// Another session's token does not work either.
	other := sb.client()
	od := sb.signIn(other, sb.email, sb.pass)
	if p := b.do("POST", "/dash/slots/"+sid+"/release", url.Values{"reason": {"cancellation"}, "csrf": {od.csrf(t)}}); p.status != http.StatusForbidden {
		t.Fatalf("release with another session's token: %d", p.status)
	}
	// The sign-in form needs its token too.
	fresh := sb.client()
	if p := fresh.do("POST", "/login", url.Values{"email": {sb.email}, "password": {sb.pass}}); p.status != http.StatusForbidden {
		t.Fatalf("sign-in without csrf: %d", p.status)
	}
	// With the token the release goes through.
	if p := b.do("POST", "/dash/slots/"+sid+"/release", url.Values{"reason": {"cancellation"}, "csrf": {d.csrf(t)}}); p.status != http.StatusSeeOther {
		t.Fatalf("release: %d\n%s", p.status, p.body)
	}
}

// Staff of one business reach another's slots and offers only as 404s.
func TestStaffCrossBusiness(t *testing.T) {
	t.Parallel()
	sb := setupStaff(t)
	var other map[string]any
	sb.must(sb.do("POST", "/v1/businesses", adminToken, `{"name":"Other","timezone":"UTC"}`), 201, &other)
	var slot map[string]any
	sb.must(sb.do("POST", "/v1/businesses/"+other["id"].(string)+"/slots", other["api_key"].(string),
		`{"service":"cut","starts_at":"2026-12-03T10:00:00Z","ends_at":"2026-12-03T10:30:00Z"}`), 201, &slot)
	sid := slot["id"].(string)
	b := sb.client()
	d := sb.signIn(b, sb.email, sb.pass)
	if strings.Contains(d.body, sid) {
		t.Fatal("the dashboard lists another business's slot")
	}
	if p := b.do("GET", "/dash/slots/"+sid, nil); p.status != http.StatusNotFound {
		t.Fatalf("another business's slot story: %d", p.status)
	}
	for _, path := range []string{"/dash/slots/" + sid + "/release", "/dash/slots/" + sid + "/resize"} {
		if p := b.do("POST", path, url.Values{"csrf": {d.csrf(t)}, "reason": {"cancellation"}, "capacity": {"3"}}); p.status != http.StatusNotFound {
			t.Fatalf("POST %s of another business: %d", path, p.status)
		}
	}
	var got map[string]any
	sb.must(sb.do("GET", "/v1/slots/"+sid, other["api_key"].(string), ""), 200, &got)
	if got["booked_seats"] != float64(1) || got["capacity"] != float64(1) {
		t.Fatalf("another business's slot changed: %v", got)
	}
	// The same for its waitlist, offers and messages.
	var entry map[string]any
	sb.must(sb.do("POST", "/v1/businesses/"+other["id"].(string)+"/waitlist:join", other["api_key"].(string),
		`{"name":"Zed","email":"zed@example.com","service":"cut"}`), 201, &entry)
	var rel struct {
		Moves []map[string]any `json:"moves"`
	}
	sb.must(sb.do("POST", "/v1/slots/"+sid+":release", other["api_key"].(string), `{"reason":"cancellation"}`), 200, &rel)
	var msgs struct {
		Messages []map[string]any `json:"messages"`
	}
	sb.must(sb.do("GET", "/v1/businesses/"+other["id"].(string)+"/messages", other["api_key"].(string), ""), 200, &msgs)
	eid, oid, mid := entry["id"].(string), rel.Moves[0]["offer_id"].(string), msgs.Messages[0]["id"].(string)
	for _, path := range []string{"/dash/waitlist/" + eid, "/dash/waitlist/" + eid + "/remove", "/dash/offers/" + oid + "/withdraw", "/dash/messages/" + mid + "/retry"} {
		if p := b.do("POST", path, url.Values{"csrf": {d.csrf(t)}, "priority": {"1"}}); p.status != http.StatusNotFound {
			t.Errorf("POST %s of another business: %d", path, p.status)
		}
	}
	for _, page := range []string{"/dash/waitlist", "/dash/messages"} {
		if p := b.do("GET", page, nil); strings.Contains(p.body, "Zed") || strings.Contains(p.body, "zed@example.com") {
			t.Errorf("%s shows another business's customer", page)
		}
	}
	var o map[string]any
	sb.must(sb.do("GET", "/v1/offers/"+oid, other["api_key"].(string), ""), 200, &o)
	sb.must(sb.do("GET", "/v1/waitlist/"+eid, other["api_key"].(string), ""), 200, &entry)
	if o["state"] != "offered" || entry["priority"] == true {
		t.Fatalf("another business's offer %v or entry %v changed", o["state"], entry["priority"])
	}
}

// Five wrong passwords lock the account for a quarter of an hour, even
// against the right password; then it opens again.
func TestStaffLockOut(t *testing.T) {
	t.Parallel()
	sb := setupStaff(t)
	b := sb.client()
	csrf := b.do("GET", "/login", nil).csrf(t)
	try := func(pass string) page {
		return b.do("POST", "/login", url.Values{"csrf": {csrf}, "email": {sb.email}, "password": {pass}})
	}
	for i := range waitlist.MaxFailedSignIns {
		if p := try("guess number " + string(rune('a'+i))); p.status != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d", i+1, p.status)
		}
	}
	p := try(sb.pass)
	if p.status != http.StatusTooManyRequests || !strings.Contains(p.body, "try again in") {
		t.Fatalf("right password while locked: %d\n%s", p.status, p.body)
	}
	sb.clock.Advance(waitlist.LockFor + time.Second)
	if p := try(sb.pass); p.status != http.StatusSeeOther {
		t.Fatalf("right password after the lock: %d\n%s", p.status, p.body)
	}
}

// A forgotten password: the link goes out through the outbox, sets a new
// password once, and signs out every session that had the old one.
func TestStaffPasswordReset(t *testing.T) {
	t.Parallel()
	sb := setupStaff(t)
	signedIn := sb.client()
	sb.signIn(signedIn, sb.email, sb.pass)

	b := sb.client()
	f := b.do("GET", "/login/forgot", nil)
	for _, email := range []string{"nobody@salon.example", sb.email} {
		p := b.do("POST", "/login/forgot", url.Values{"csrf": {f.csrf(t)}, "email": {email}})
		if p.status != 200 || !strings.Contains(p.body, "If "+email+" has an account") {
			t.Fatalf("forgot %s: %d\n%s", email, p.status, p.body)
		}
	}
	msgs, err := sb.svc.ListMessages(context.Background(), nextup.MessageFilter{BusinessID: sb.bid})
	if err != nil {
		t.Fatal(err)
	}
	var link string
	for _, m := range msgs {
		if m.Kind == waitlist.MessagePasswordReset {
			if m.To != sb.email || link != "" {
				t.Fatalf("reset mail to %s (second: %v)", m.To, link != "")
			}
			link = regexp.MustCompile(`https://nextup\.test(/reset/\S+)`).FindStringSubmatch(m.Body)[1]
		}
	}
	if link == "" {
		t.Fatal("no reset mail in the outbox")
	}
	r := b.do("GET", link, nil)
	if p := b.do("POST", link, url.Values{"csrf": {r.csrf(t)}, "password": {"new password 1"}, "confirm": {"new password 2"}}); p.status != http.StatusBadRequest {
		t.Fatalf("mismatched passwords: %d", p.status)
	}
	if p := b.do("POST", link, url.Values{"csrf": {r.csrf(t)}, "password": {"short"}, "confirm": {"short"}}); p.status != http.StatusBadRequest || !strings.Contains(p.body, "at least 10") {
		t.Fatalf("short password: %d\n%s", p.status, p.body)
	}
	if p := b.do("POST", link, url.Values{"csrf": {r.csrf(t)}, "password": {"a brand new password"}, "confirm": {"a brand new password"}}); p.status != http.StatusSeeOther || p.location != "/login?done=reset" {
		t.Fatalf("reset: %d %q\n%s", p.status, p.location, p.body)
	}
	if p := b.do("POST", link, url.Values{"csrf": {r.csrf(t)}, "password": {"another new password"}, "confirm": {"another new password"}}); p.status != http.StatusNotFound {
		t.Fatalf("second use of the link: %d", p.status)
	}
	if p := signedIn.do("GET", "/dash", nil); p.status != http.StatusSeeOther {
		t.Fatalf("a session from before the reset still works: %d", p.status)
	}
	sb.signIn(sb.client(), sb.email, "a brand new password")
}

// The dashboard's one-tap release offers the slot to the next person, and
// the slot's story tells what happened in words.
func TestStaffDashboardRelease(t *testing.T) {
	t.Parallel()
	sb := setupStaff(t)
	var slot map[string]any
	sb.must(sb.do("POST", "/v1/businesses/"+sb.bid+"/slots", sb.key,
		`{"service":"cut","staff":"Ana","starts_at":"2026-12-02T14:00:00Z","ends_at":"2026-12-02T14:30:00Z"}`), 201, &slot)
	sid := slot["id"].(string)
	sb.must(sb.do("POST", "/v1/businesses/"+sb.bid+"/waitlist:join", sb.key, `{"name":"Ann","email":"ann@example.com","service":"cut"}`), 201, nil)
	b := sb.client()
	d := sb.signIn(b, sb.email, sb.pass)
	if !strings.Contains(d.body, `id="slot-`+sid+`" data-state="full"`) || !strings.Contains(d.body, ">Cancelled</button>") {
		t.Fatalf("the booked slot with its one-tap buttons is not on the dashboard:\n%s", d.body)
	}
	p := b.do("POST", "/dash/slots/"+sid+"/release", url.Values{"csrf": {d.csrf(t)}, "reason": {"no_show"}})
	if p.status != http.StatusSeeOther || !strings.Contains(p.location, "Offered+to+the+next+person") {
		t.Fatalf("release: %d %q", p.status, p.location)
	}
	live := b.do("GET", "/dash/live", nil)
	if !strings.Contains(live.body, `data-state="offered"`) || !strings.Contains(live.body, "<td>Ann</td>") {
		t.Fatalf("the live fragment does not show Ann's offer:\n%s", live.body)
	}
	story := b.do("GET", "/dash/slots/"+sid, nil)
	for _, want := range []string{"Seats freed: no show.", "Offered to Ann."} {
		if !strings.Contains(story.body, want) {
			t.Errorf("the slot's story lacks %q:\n%s", want, story.body)
		}
	}
	// A slot added from the dashboard as "free now" goes straight to the
	// next person who fits — nobody, here: Ann holds an offer already.
	p = b.do("POST", "/dash/slots", url.Values{"csrf": {d.csrf(t)}, "service": {"cut"}, "date": {"2026-12-04"}, "time": {"09:30"},
		"minutes": {"45"}, "capacity": {"1"}, "free": {"1"}})
	if p.status != http.StatusSeeOther || !strings.Contains(p.location, "Slot+added") {
		t.Fatalf("add slot: %d %q\n%s", p.status, p.location, p.body)
	}
	// Capacity edits of a class: up is fine, below what is taken is
	// refused, saying why; a held chair cannot be resized at all.
	class := sb.slot(`{"service":"yoga","seating":"shared","capacity":4,"booked_seats":4,"starts_at":"2026-12-05T09:00:00Z","ends_at":"2026-12-05T10:00:00Z"}`)["id"].(string)
	if p := b.do("POST", "/dash/slots/"+class+"/resize", url.Values{"csrf": {d.csrf(t)}, "capacity": {"6"}}); p.status != http.StatusSeeOther || !strings.Contains(p.location, "Capacity+set+to+6") {
		t.Fatalf("resize to 6: %d %q\n%s", p.status, p.location, p.body)
	}
	for _, tc := range []struct{ id, capacity, want string }{{class, "1", "below the 4 seats"}, {sid, "2", "cannot be resized"}} {
		if p := b.do("POST", "/dash/slots/"+tc.id+"/resize", url.Values{"csrf": {d.csrf(t)}, "capacity": {tc.capacity}}); p.status != http.StatusConflict || !strings.Contains(p.body, `role="alert"`) || !strings.Contains(p.body, tc.want) {
			t.Fatalf("refused resize of %s: %d %q\n%s", tc.id, p.status, p.location, p.body)
		}
	}
	// A form with a bad time keeps the page and says why.
	p = b.do("POST", "/dash/slots", url.Values{"csrf": {d.csrf(t)}, "service": {"cut"}, "date": {"2026-12-04"}, "time": {"half past"}})
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, "date and a time") {
		t.Fatalf("bad time: %d\n%s", p.status, p.body)
	}
}

// TestFrontDoor: GET / is a page saying what this is with the way to the
// dashboard's sign-in, not a JSON 404; only the demo's shows its
// credentials and the outbox; any other path is still a 404 problem.
func TestFrontDoor(t *testing.T) {
	t.Parallel()
	for _, demo := range []*web.DemoLogin{nil, {Email: "owner@demo-salon.test", Password: "demo-abc123"}} {
		a := setup(t, func(s *web.Server) { s.Demo = demo })
		r := a.do("GET", "/", "", "")
		body := string(r.body)
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") || !strings.Contains(body, `action="/login"`) ||
			!strings.Contains(body, "A waitlist that fills cancelled slots") {
			t.Fatalf("GET / = %d %s\n%s", r.status, r.header.Get("Content-Type"), body)
		}
		if shown := strings.Contains(body, "demo-abc123") && strings.Contains(body, `href="/dev/outbox"`); shown != (demo != nil) {
			t.Errorf("demo %v: credentials and outbox shown = %v", demo != nil, shown)
		}
		if r := a.do("GET", "/nothing-here", "", ""); r.status != 404 || !strings.Contains(r.header.Get("Content-Type"), "problem+json") {
			t.Errorf("GET /nothing-here = %d %s", r.status, r.header.Get("Content-Type"))
		}
	}
}
