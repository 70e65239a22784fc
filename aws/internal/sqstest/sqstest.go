// Package sqstest is a local stand-in for Amazon SQS: an httptest server
// speaking the service's JSON wire format (awsJson1_0, which the current
// SDK speaks; goaws v0.4.5, the stand-in DEPENDENCIES.md names, answers
// only the older query protocol), for the official SDK client pointed at
// it with BaseEndpoint. It answers SendMessage as the service does (the
// queue must exist, DelaySeconds 0 to 900, a body of 1 byte to 1 MiB,
// MD5OfMessageBody that the SDK checks) and keeps the messages for the
// test, which plays the Lambda event source mapping: Take returns the
// messages visible at a time the test gives.
package sqstest

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Message is one message on the queue.
type Message struct {
	ID    string
	Queue string // its URL
	Body  string
	// Sent is when it was sent, by the time the test gave (Now); it
	// becomes visible DelaySeconds later.
	Sent      time.Time
	VisibleAt time.Time
}

// Server is the stand-in. Its methods are safe for concurrent use.
type Server struct {
	*httptest.Server
	// Now is the time a message is sent at (default the wall clock):
	// tests on a fake clock give theirs.
	Now func() time.Time

	mu     sync.Mutex
	queues map[string][]Message // by URL
	seq    int
	failN  int
}

// New starts a server with the named queues, closed when the test ends.
func New(t testing.TB, queues ...string) *Server {
	s := &Server{queues: map[string][]Message{}, Now: time.Now}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	for _, q := range queues {
		s.queues[s.QueueURL(q)] = nil
	}
	t.Cleanup(s.Close)
	return s
}

// QueueURL is the URL of the named queue on this server.
func (s *Server) QueueURL(name string) string { return s.URL + "/123456789012/" + name }

// FailNext makes the next n calls fail as the service does when it is
// unavailable (a 500 the SDK retries, then reports).
func (s *Server) FailNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failN += n
}

// Len is how many messages the queue holds, visible or not.
func (s *Server) Len(queueURL string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queues[queueURL])
}

// Take removes and returns the messages of the queue visible at now, in
// the order sent.
func (s *Server) Take(queueURL string, now time.Time) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out, keep []Message
	for _, m := range s.queues[queueURL] {
		if m.VisibleAt.After(now) {
			keep = append(keep, m)
		} else {
			out = append(out, m)
		}
	}
	s.queues[queueURL] = keep
	return out
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	op, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS.")
	if !ok || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-amz-json-1.0") {
		fail(w, http.StatusBadRequest, "InvalidAction", "not an SQS JSON request")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failN > 0 {
		s.failN--
		fail(w, http.StatusInternalServerError, "InternalError", "the stand-in was told to fail")
		return
	}
	switch op {
	case "SendMessage":
		var in struct {
			QueueUrl     string
			MessageBody  string
			DelaySeconds int
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			fail(w, http.StatusBadRequest, "InvalidParameterValue", err.Error())
			return
		}
		q, ok := s.queues[in.QueueUrl]
		if !ok {
			fail(w, http.StatusBadRequest, "QueueDoesNotExist", "The specified queue does not exist.")
			return
		}
		if in.DelaySeconds < 0 || in.DelaySeconds > 900 {
			fail(w, http.StatusBadRequest, "InvalidParameterValue", fmt.Sprintf("Value %d for parameter DelaySeconds is invalid. Reason: must be between 0 and 900, if provided.", in.DelaySeconds))
			return
		}
		if in.MessageBody == "" || len(in.MessageBody) > 1<<20 {
			fail(w, http.StatusBadRequest, "InvalidParameterValue", "The message body must be 1 byte to 1 MiB long.")
			return
		}
		s.seq++
		now := s.Now()
		m := Message{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", s.seq), Queue: in.QueueUrl, Body: in.MessageBody,
			Sent: now, VisibleAt: now.Add(time.Duration(in.DelaySeconds) * time.Second)}
		s.queues[in.QueueUrl] = append(q, m)
		sum := md5.Sum([]byte(in.MessageBody))
		reply(w, map[string]string{"MessageId": m.ID, "MD5OfMessageBody": hex.EncodeToString(sum[:])})
	default:
		fail(w, http.StatusBadRequest, "InvalidAction", "The action "+op+" is not valid for this endpoint (this stand-in answers SendMessage).")
	}
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	_ = json.NewEncoder(w).Encode(v)
}

// queryErrors are the legacy query protocol's codes the service sends
// along in x-amzn-query-error (the SDK reports those as ErrorCode()).
var queryErrors = map[string]string{
	"QueueDoesNotExist":     "AWS.SimpleQueueService.NonExistentQueue;Sender",
	"InvalidParameterValue": "InvalidParameterValue;Sender",
	"InvalidAction":         "InvalidAction;Sender",
	"InternalError":         "InternalError;Receiver",
}

// fail answers as the service does in its JSON protocol: the error's
// shape in __type, the legacy query code in x-amzn-query-error.
func fail(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("x-amzn-query-error", queryErrors[code])
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": "com.amazonaws.sqs#" + code, "message": msg})
}
