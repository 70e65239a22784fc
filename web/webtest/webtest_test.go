package webtest_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/nextup-dev/nextup/web/webtest"
)

// TestCheck: the contract check accepts what the document describes and
// refuses each way of not matching it.
func TestCheck(t *testing.T) {
	t.Parallel()
	c, err := webtest.Load()
	if err != nil {
		t.Fatal(err)
	}
	const key = "Bearer nxk_x"
	const rules = `{"version":2,"claim_window_seconds":60,"order_policy":"fcfs-priority/v1","quiet_hours":{"start":"21:00","end":"08:00"},
		"time_critical_through_quiet":false,"min_lead_seconds":900,"max_offers_per_person_per_day":3,"max_offers_per_slot":null,
		"down_fit":false,"position_visibility":"exact","reminder_offsets_seconds":[86400,3600],"requeue":{"policy":"keep","drop_after":0},
		"claim_window_ladder":[],"follow_up":{"after_share":0.5,"same_channel_when_no_other":false},"dedupe":"off"}`
	problem := func(status int, code string) string {
		return `{"type":"about:blank","title":"x","status":` + strconv.Itoa(status) + `,"code":"` + code + `"}`
	}
	for _, tc := range []struct {
		name               string
		method, path, auth string
		reqBody            string
		status             int
		contentType, allow string
		wwwAuth            string
		body               string
		ok                 bool
	}{
		{name: "health", method: "GET", path: "/healthz", status: 200, contentType: "application/json; charset=utf-8", body: `{"status":"ok"}`, ok: true},
		{name: "a field the document does not name", method: "GET", path: "/healthz", status: 200, contentType: "application/json", body: `{"status":"ok","uptime":3}`},
		{name: "an enum value it does not list", method: "GET", path: "/healthz", status: 200, contentType: "application/json", body: `{"status":"fine"}`},
		{name: "an undocumented status", method: "GET", path: "/healthz", status: 418, contentType: "application/json", body: `{"status":"ok"}`},
		{name: "an undeclared content type", method: "GET", path: "/healthz", status: 200, contentType: "text/plain", body: `ok`},
		{name: "no such path", method: "GET", path: "/v1/nothing", status: 404, contentType: "application/problem+json", body: problem(404, "not_found"), ok: true},
		{name: "no such path answered 200", method: "GET", path: "/v1/nothing", status: 200, contentType: "application/json", body: `{}`},
		{name: "405 with Allow", method: "DELETE", path: "/healthz", status: 405, contentType: "application/problem+json", allow: "GET, HEAD", body: problem(405, "method_not_allowed"), ok: true},
		{name: "405 without Allow", method: "DELETE", path: "/healthz", status: 405, contentType: "application/problem+json", body: problem(405, "method_not_allowed")},
		{name: "a wrong method answered 404", method: "DELETE", path: "/healthz", status: 404, contentType: "application/problem+json", body: problem(404, "not_found")},
		{name: "a code the operation lists", method: "POST", path: "/v1/slots/slot_1:release", auth: key, reqBody: `{"reason":"cancellation"}`,
			status: 409, contentType: "application/problem+json", body: problem(409, "not_enough_booked"), ok: true},
		{name: "a code it does not list", method: "POST", path: "/v1/slots/slot_1:release", auth: key, reqBody: `{"reason":"cancellation"}`,
			status: 409, contentType: "application/problem+json", body: problem(409, "slot_taken")},
		{name: "a problem whose status member differs", method: "POST", path: "/v1/slots/slot_1:release", auth: key, reqBody: `{"reason":"cancellation"}`,
			status: 409, contentType: "application/problem+json", body: problem(400, "not_enough_booked")},
		{name: "a refused request answered 4xx", method: "POST", path: "/v1/slots/slot_1:release", auth: key, reqBody: `{"reason":"tuesday"}`,
			status: 400, contentType: "application/problem+json", body: problem(400, "validation_failed"), ok: true},
		{name: "a request within the bounds", method: "PATCH", path: "/v1/businesses/biz_1/rules", auth: key, reqBody: `{"claim_window_seconds":60}`,
			status: 200, contentType: "application/json", body: rules, ok: true},
		{name: "a request out of bounds that succeeded", method: "PATCH", path: "/v1/businesses/biz_1/rules", auth: key, reqBody: `{"claim_window_seconds":5}`,
			status: 200, contentType: "application/json", body: rules},
		{name: "no Authorization, yet 200", method: "GET", path: "/v1/offers/off_1", status: 200, contentType: "application/json",
			body: `{"id":"off_1","slot_id":"s","entry_id":"e","seats":1,"state":"offered","created_at":"2026-12-01T10:00:00Z","sent_at":null,"expires_at":"2026-12-01T10:10:00Z","resolved_at":null,"channel":"email"}`},
		{name: "the same with Authorization", method: "GET", path: "/v1/offers/off_1", auth: key, status: 200, contentType: "application/json",
			body: `{"id":"off_1","slot_id":"s","entry_id":"e","seats":1,"state":"offered","created_at":"2026-12-01T10:00:00Z","sent_at":null,"expires_at":"2026-12-01T10:10:00Z","resolved_at":null,"channel":"email"}`, ok: true},
		{name: "401 with WWW-Authenticate", method: "GET", path: "/v1/offers/off_1", status: 401, contentType: "application/problem+json", wwwAuth: "Bearer", body: problem(401, "unauthorized"), ok: true},
		{name: "401 without it", method: "GET", path: "/v1/offers/off_1", status: 401, contentType: "application/problem+json", body: problem(401, "unauthorized")},
		{name: "a page outside the contract", method: "GET", path: "/dash/anything", status: 200, contentType: "text/html", body: `<p>`, ok: true},
		{name: "an HTML page of the contract", method: "GET", path: "/c/tok", status: 200, contentType: "text/html; charset=utf-8", body: `<p>`, ok: true},
	} {
		u, _ := url.Parse("http://nextup.test" + tc.path)
		ex := webtest.Exchange{Method: tc.method, URL: u, ReqHeader: http.Header{}, ReqBody: []byte(tc.reqBody),
			Status: tc.status, Header: http.Header{"Content-Type": {tc.contentType}}, Body: []byte(tc.body)}
		if tc.auth != "" {
			ex.ReqHeader.Set("Authorization", tc.auth)
		}
		if tc.reqBody != "" {
			ex.ReqHeader.Set("Content-Type", "application/json")
		}
		if tc.allow != "" {
			ex.Header.Set("Allow", tc.allow)
		}
		if tc.wwwAuth != "" {
			ex.Header.Set("WWW-Authenticate", tc.wwwAuth)
		}
		err := c.Check(context.Background(), ex)
		if tc.ok && err != nil {
			t.Errorf("%s: refused: %v", tc.name, err)
		}
		if !tc.ok && err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}
