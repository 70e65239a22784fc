// Package sestest gives tests an SES v2 endpoint: aws-ses-v2-local (npm,
// installed in aws/node_modules by `npm install` in aws/, as .ci/run
// does), run with node once per test binary on a free port, or the server
// NEXTUP_TEST_SES names. Without either the test skips, loudly
// (internal/missing), and fails under NEXTUP_REQUIRE_ALL=1.
//
// Each Start gives the test a front of its own, in the test process, that
// passes SES's API through to the shared server and keeps what the SDK
// sent (the raw MIME message, the tags, the configuration set: the
// stand-in stores the parsed mail only). Its Emails are the mails sent
// through it, so parallel tests do not see each other's. Refuse makes it
// answer a SendEmail with one of SES's errors, in SES's wire format
// (restJson1: the status, an X-Amzn-ErrorType header and a JSON message),
// before the stand-in sees it.
package sestest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"github.com/nextup-dev/nextup/internal/missing"
)

// Env names a running aws-ses-v2-local (its base URL) that tests use
// instead of starting one.
const Env = "NEXTUP_TEST_SES"

const enable = "cd aws && npm install (aws-ses-v2-local, run with node), or set " + Env + "=http://host:port of a running aws-ses-v2-local"

var (
	once    sync.Once
	backend string // base URL of the shared stand-in
	reason  string
)

// Server is one test's SES endpoint. Refuse, if set, is asked about each
// SendEmail's first recipient: a non-nil Error is answered instead of
// sending.
type Server struct {
	// URL is the endpoint to give the SDK as BaseEndpoint.
	URL    string
	Refuse func(to string) *Error

	mu   sync.Mutex
	sent []request // SendEmail requests the stand-in accepted, oldest first
}

// Error is one of SES's error answers: the HTTP status, the error type the
// SDK reads from X-Amzn-ErrorType ("MessageRejected",
// "TooManyRequestsException", ...) and the message.
type Error struct {
	Status  int
	Type    string
	Message string
}

// request is what the SDK sent in one SendEmail, and the MessageId SES
// answered.
type request struct {
	ConfigurationSetName string
	Destination          struct{ ToAddresses []string }
	EmailTags            []struct{ Name, Value string }
	FromEmailAddress     string
	Content              struct {
		Raw *struct{ Data []byte } // JSON blobs are base64, as encoding/json reads []byte
	}
	messageID string
}

// Email is one mail SES accepted: as the stand-in parsed it (From to
// Attachments) and as the SDK sent it (Raw to Tags).
type Email struct {
	MessageID   string // SES's, as SendEmail answered
	From        string
	To          []string // the To header's addresses, as parsed
	Subject     string
	Text, HTML  string
	Attachments []Attachment

	// Raw is the MIME message of a raw send, byte for byte.
	Raw []byte
	// Destination is the request's envelope recipients.
	Destination []string
	// ConfigurationSet and Tags are the request's.
	ConfigurationSet string
	Tags             map[string]string
}

// Attachment is a part the parser took for an attachment.
type Attachment struct {
	Filename    string
	ContentType string
	Content     []byte
}

// Start returns an endpoint for t, starting the shared aws-ses-v2-local
// the first time; it skips t (or fails it under NEXTUP_REQUIRE_ALL=1)
// when there is none.
func Start(t testing.TB) *Server {
	t.Helper()
	once.Do(start)
	if backend == "" {
		missing.Skip(t, "SES (aws-ses-v2-local)", reason, enable)
	}
	target, err := url.Parse(backend)
	if err != nil {
		t.Fatalf("sestest: %s: %v", backend, err)
	}
	s := &Server{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v2/email/outbound-emails" {
			s.sendEmail(w, r, proxy)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Client returns an SDK client of the endpoint that does not retry (a
// test sees SES's first answer).
func (s *Server) Client() *sesv2.Client {
	return sesv2.New(sesv2.Options{
		Region:           "us-east-1",
		Credentials:      credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint:     aws.String(s.URL),
		RetryMaxAttempts: 1,
	})
}

// sendEmail refuses the request or passes it on, keeping it with the
// MessageId the stand-in answers.
func (s *Server) sendEmail(w http.ResponseWriter, r *http.Request, proxy *httputil.ReverseProxy) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, &Error{Status: http.StatusBadRequest, Type: "BadRequestException", Message: "Request body is not valid JSON: " + err.Error()})
		return
	}
	if s.Refuse != nil && len(req.Destination.ToAddresses) > 0 {
		if e := s.Refuse(req.Destination.ToAddresses[0]); e != nil {
			writeError(w, e)
			return
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := httptest.NewRecorder()
	proxy.ServeHTTP(rec, r)
	var out struct{ MessageId string }
	if rec.Code == http.StatusOK && json.Unmarshal(rec.Body.Bytes(), &out) == nil && out.MessageId != "" {
		req.messageID = out.MessageId
		s.mu.Lock()
		s.sent = append(s.sent, req)
		s.mu.Unlock()
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// writeError answers as SES does: restJson1, the type in X-Amzn-ErrorType.
func writeError(w http.ResponseWriter, e *Error) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", e.Type)
	w.Header().Set("X-Amzn-RequestId", fmt.Sprintf("sestest-%d", time.Now().UnixNano()))
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": e.Message})
}

// stored is a mail in the stand-in's store (GET /store).
type stored struct {
	MessageID   string `json:"messageId"`
	From        string `json:"from"`
	Destination struct {
		To []string `json:"to"`
	} `json:"destination"`
	Subject string `json:"subject"`
	Body    struct {
		Text string `json:"text"`
		HTML string `json:"html"`
	} `json:"body"`
	Attachments []struct {
		Filename    string `json:"filename"`
		ContentType string `json:"contentType"`
		Content     string `json:"content"` // base64
	} `json:"attachments"`
}

// Emails returns the mails sent through s, oldest first, as the stand-in
// holds them (GET /store) with what the SDK sent.
func (s *Server) Emails(t testing.TB) []Email {
	t.Helper()
	res, err := http.Get(backend + "/store")
	if err != nil {
		t.Fatalf("sestest: GET /store: %v", err)
	}
	defer res.Body.Close()
	var store struct {
		Emails []stored `json:"emails"`
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("sestest: GET /store: %s", res.Status)
	}
	if err := json.NewDecoder(res.Body).Decode(&store); err != nil {
		t.Fatalf("sestest: GET /store: %v", err)
	}
	s.mu.Lock()
	sent := slices.Clone(s.sent)
	s.mu.Unlock()
	var out []Email
	for _, req := range sent {
		i := slices.IndexFunc(store.Emails, func(e stored) bool { return e.MessageID == req.messageID })
		if i < 0 {
			t.Fatalf("sestest: SES answered MessageId %s but its store does not hold it", req.messageID)
		}
		e := store.Emails[i]
		m := Email{MessageID: e.MessageID, From: e.From, To: e.Destination.To, Subject: e.Subject,
			Text: e.Body.Text, HTML: e.Body.HTML, Destination: req.Destination.ToAddresses,
			ConfigurationSet: req.ConfigurationSetName, Tags: map[string]string{}}
		if req.Content.Raw != nil {
			m.Raw = req.Content.Raw.Data
		}
		for _, tag := range req.EmailTags {
			m.Tags[tag.Name] = tag.Value
		}
		for _, a := range e.Attachments {
			b, err := base64.StdEncoding.DecodeString(a.Content)
			if err != nil {
				t.Fatalf("sestest: attachment %s: %v", a.Filename, err)
			}
			m.Attachments = append(m.Attachments, Attachment{Filename: a.Filename, ContentType: a.ContentType, Content: b})
		}
		out = append(out, m)
	}
	return out
}

func start() {
	if u := os.Getenv(Env); u != "" {
		backend = strings.TrimRight(u, "/")
		return
	}
	node, err := exec.LookPath("node")
	if err != nil {
		reason = "no node on PATH"
		return
	}
	cli := script()
	if cli == "" {
		reason = "no aws-ses-v2-local in aws/node_modules, and " + Env + " is not set"
		return
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		reason = err.Error()
		return
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(node, cli, "--host", "127.0.0.1", "--port", fmt.Sprint(port))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	// The server dies with the test binary, its parent: nothing else
	// knows its port.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		reason = fmt.Sprintf("start %s: %v", cli, err)
		return
	}
	u := fmt.Sprintf("http://127.0.0.1:%d", port)
	c := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		res, err := c.Get(u + "/health-check")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				backend = u
				go func() { _ = cmd.Wait() }()
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	reason = cli + " did not answer within 20s"
}

// script finds aws-ses-v2-local's command in aws/node_modules (from this
// file's place in the source tree).
func script() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	p := filepath.Join(filepath.Dir(file), "..", "..", "node_modules", "aws-ses-v2-local", "dist", "cli.js")
	if fi, err := os.Stat(p); err != nil || fi.IsDir() {
		return ""
	}
	return p
}
