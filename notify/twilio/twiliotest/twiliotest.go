// Package twiliotest runs a fake of Twilio's Messages API in the test
// process, speaking its wire format — form-encoded POSTs to
// /2010-04-01/Accounts/{sid}/Messages.json with Basic auth, answered with
// the message resource's JSON or Twilio's error JSON — so that nextup's
// SMS channel is tested through the official SDK.
package twiliotest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Credentials the fake accepts (the SDK wants alphanumeric ones).
const (
	AccountSID = "AC00000000000000000000000000000001"
	AuthToken  = "0123456789abcdef0123456789abcdef"
)

// Text is one message Twilio accepted.
type Text struct {
	SID                                             string
	To, From, MessagingServiceSID, Body, StatusHook string
}

// Server is a running fake. Fail, if set, may refuse a text: a non-zero
// status answers with Twilio's error JSON carrying code.
type Server struct {
	URL  string
	Fail func(to string) (status, code int)

	mu    sync.Mutex
	texts []Text
	ch    chan struct{}
}

// Start runs a fake until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{ch: make(chan struct{})}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Texts returns the accepted texts, oldest first.
func (s *Server) Texts() []Text {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Text(nil), s.texts...)
}

// Wait returns once n texts have been accepted, or fails the test.
func (s *Server) Wait(t testing.TB, n int, timeout time.Duration) []Text {
	t.Helper()
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		got, ch := len(s.texts), s.ch
		s.mu.Unlock()
		if got >= n {
			return s.Texts()
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("twiliotest: %d texts arrived, want %d", got, n)
		}
	}
}

func twilioError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"code": code, "message": msg,
		"more_info": fmt.Sprintf("https://www.twilio.com/docs/errors/%d", code), "status": status})
}

// ServeHTTP answers the Messages API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	user, pass, ok := r.BasicAuth()
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/2010-04-01/Accounts/"+AccountSID+"/Messages.json":
		twilioError(w, http.StatusNotFound, 20404, "The requested resource "+r.URL.Path+" was not found")
		return
	case !ok || user != AccountSID || pass != AuthToken:
		twilioError(w, http.StatusUnauthorized, 20003, "Authenticate")
		return
	case !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded"):
		twilioError(w, http.StatusBadRequest, 20001, "not form-encoded")
		return
	}
	if err := r.ParseForm(); err != nil {
		twilioError(w, http.StatusBadRequest, 20001, err.Error())
		return
	}
	f := r.PostForm
	if f.Get("To") == "" || f.Get("Body") == "" || (f.Get("From") == "") == (f.Get("MessagingServiceSid") == "") {
		twilioError(w, http.StatusBadRequest, 21604, "A 'To', a 'Body' and one of 'From' or 'MessagingServiceSid' are required")
		return
	}
	if s.Fail != nil {
		if status, code := s.Fail(f.Get("To")); status != 0 {
			twilioError(w, status, code, "refused by the fake")
			return
		}
	}
	s.mu.Lock()
	txt := Text{SID: fmt.Sprintf("SM%032d", len(s.texts)+1), To: f.Get("To"), From: f.Get("From"),
		MessagingServiceSID: f.Get("MessagingServiceSid"), Body: f.Get("Body"), StatusHook: f.Get("StatusCallback")}
	s.texts = append(s.texts, txt)
	close(s.ch)
	s.ch = make(chan struct{})
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]any{"sid": txt.SID, "status": "queued", "to": txt.To, "from": txt.From,
		"body": txt.Body, "account_sid": AccountSID, "messaging_service_sid": txt.MessagingServiceSID})
}
