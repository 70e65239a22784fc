// Package snstest runs a stand-in for Amazon SNS's SMS API in the test
// process, so that nextup's SMS sender is tested through the official SDK
// (BaseEndpoint pointing here). goaws, the SNS stand-in the AWS module
// uses for topics, implements neither a Publish to a phone number nor
// CheckIfPhoneNumberIsOptedOut.
//
// It speaks SNS's wire format, the awsQuery protocol: a form-encoded POST
// naming the Action and Version=2010-03-31, answered with the action's
// XML (<PublishResponse><PublishResult><MessageId>…, with
// <ResponseMetadata><RequestId>) or SNS's error XML
// (<ErrorResponse><Error><Type>Sender</Type><Code>InvalidParameter</Code>
// <Message>…</Message></Error><RequestId>…</RequestId></ErrorResponse>).
// As SNS does, it refuses a phone number that is not E.164 with
// InvalidParameter, and accepts a text to a number that opted out and
// drops it.
package snstest

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
)

const xmlns = "http://sns.amazonaws.com/doc/2010-03-31/"

// e164 is a phone number as SNS takes it: +, the country code, up to 15
// digits in all.
var e164 = regexp.MustCompile(`^\+[1-9][0-9]{4,14}$`)

// Text is one SMS Publish that SNS accepted.
type Text struct {
	MessageID   string
	PhoneNumber string
	Message     string
	// Attributes are the message attributes' string values by name
	// (AWS.SNS.SMS.SMSType, AWS.SNS.SMS.SenderID, AWS.MM.SMS.OriginationNumber).
	Attributes map[string]string
	// Dropped: the number had opted out, so SNS took the text and did
	// not deliver it.
	Dropped bool
}

// Error is one of SNS's error answers: the HTTP status, the Type (Sender
// or Receiver), the Code ("InvalidParameter", "Throttling", ...) and the
// Message.
type Error struct {
	Status        int
	Type          string
	Code, Message string
}

// Server is a running stand-in. Fail, if set, may answer an action
// ("Publish" or "CheckIfPhoneNumberIsOptedOut") about a number with an
// error instead.
type Server struct {
	URL  string
	Fail func(action, phone string) *Error

	mu       sync.Mutex
	texts    []Text
	optedOut map[string]bool
	checks   int
	seq      atomic.Int64
}

// Start runs a stand-in until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{optedOut: map[string]bool{}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Client returns an SDK client of the stand-in that does not retry (a
// test sees SNS's first answer).
func (s *Server) Client() *sns.Client {
	return sns.New(sns.Options{
		Region:           "us-east-1",
		Credentials:      credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint:     aws.String(s.URL),
		RetryMaxAttempts: 1,
	})
}

// OptOut puts numbers on the account's opt-out list (what a reply of
// STOP does at SNS).
func (s *Server) OptOut(numbers ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range numbers {
		s.optedOut[n] = true
	}
}

// Texts returns the accepted texts, oldest first.
func (s *Server) Texts() []Text {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Text(nil), s.texts...)
}

// Checks returns how many CheckIfPhoneNumberIsOptedOut calls were answered.
func (s *Server) Checks() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.checks
}

func (s *Server) requestID() string {
	return fmt.Sprintf("00000000-0000-4000-8000-%012d", s.seq.Add(1))
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		s.fail(w, &Error{Status: http.StatusBadRequest, Type: "Sender", Code: "InvalidAction", Message: "Only POST is served here"})
		return
	}
	if r.Header.Get("Authorization") == "" {
		s.fail(w, &Error{Status: http.StatusForbidden, Type: "Sender", Code: "MissingAuthenticationToken", Message: "Request is missing Authentication Token"})
		return
	}
	if err := r.ParseForm(); err != nil {
		s.fail(w, &Error{Status: http.StatusBadRequest, Type: "Sender", Code: "MalformedQueryString", Message: err.Error()})
		return
	}
	action := r.PostForm.Get("Action")
	if v := r.PostForm.Get("Version"); v != "2010-03-31" {
		s.fail(w, &Error{Status: http.StatusBadRequest, Type: "Sender", Code: "InvalidParameterValue", Message: fmt.Sprintf("Value (%s) for parameter Version is invalid.", v)})
		return
	}
	switch action {
	case "Publish":
		s.publish(w, r)
	case "CheckIfPhoneNumberIsOptedOut":
		s.checkOptedOut(w, r)
	default:
		s.fail(w, &Error{Status: http.StatusBadRequest, Type: "Sender", Code: "InvalidAction",
			Message: fmt.Sprintf("Could not find operation %s for version 2010-03-31", action)})
	}
}

func (s *Server) publish(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	phone, message := f.Get("PhoneNumber"), f.Get("Message")
	switch {
	case f.Get("TopicArn") != "" || f.Get("TargetArn") != "":
		s.fail(w, &Error{Status: http.StatusBadRequest, Type: "Sender", Code: "InvalidParameter", Message: "Invalid parameter: snstest publishes to phone numbers only"})
		return
	case phone == "":
		s.fail(w, &Error{Status: http.StatusBadRequest, Type: "Sender", Code: "InvalidParameter", Message: "Invalid parameter: TopicArn or TargetArn Reason: no value for required parameter"})
		return
	case message == "":
		s.fail(w, &Error{Status: http.StatusBadRequest, Type: "Sender", Code: "InvalidParameter", Message: "Invalid parameter: Empty message"})
		return
	case !e164.MatchString(phone):
		s.fail(w, &Error{Status: http.StatusBadRequest, Type: "Sender", Code: "InvalidParameter",
			Message: fmt.Sprintf("Invalid parameter: PhoneNumber Reason: %s is not valid to publish to", phone)})
		return
	}
	if s.Fail != nil {
		if e := s.Fail("Publish", phone); e != nil {
			s.fail(w, e)
			return
		}
	}
	attrs := map[string]string{}
	for i := 1; ; i++ {
		p := fmt.Sprintf("MessageAttributes.entry.%d.", i)
		name := f.Get(p + "Name")
		if name == "" {
			break
		}
		if dt := f.Get(p + "Value.DataType"); dt == "" {
			s.fail(w, &Error{Status: http.StatusBadRequest, Type: "Sender", Code: "ParameterValueInvalid",
				Message: fmt.Sprintf("The message attribute '%s' must contain non-empty message attribute type.", name)})
			return
		}
		attrs[name] = f.Get(p + "Value.StringValue")
	}
	if t := attrs["AWS.SNS.SMS.SMSType"]; t != "" && t != "Promotional" && t != "Transactional" {
		s.fail(w, &Error{Status: http.StatusBadRequest, Type: "Sender", Code: "ParameterValueInvalid",
			Message: fmt.Sprintf("The message attribute 'AWS.SNS.SMS.SMSType' has an invalid message attribute value: %s", t)})
		return
	}
	id := fmt.Sprintf("00000000-0000-4000-9000-%012d", s.seq.Add(1))
	s.mu.Lock()
	s.texts = append(s.texts, Text{MessageID: id, PhoneNumber: phone, Message: message, Attributes: attrs, Dropped: s.optedOut[phone]})
	s.mu.Unlock()
	s.answer(w, struct {
		XMLName   xml.Name `xml:"PublishResponse"`
		Xmlns     string   `xml:"xmlns,attr"`
		MessageID string   `xml:"PublishResult>MessageId"`
		RequestID string   `xml:"ResponseMetadata>RequestId"`
	}{Xmlns: xmlns, MessageID: id, RequestID: s.requestID()})
}

func (s *Server) checkOptedOut(w http.ResponseWriter, r *http.Request) {
	phone := r.PostForm.Get("phoneNumber")
	if !e164.MatchString(phone) {
		s.fail(w, &Error{Status: http.StatusBadRequest, Type: "Sender", Code: "InvalidParameter",
			Message: "Invalid parameter: PhoneNumber Reason: input incorrectly formatted"})
		return
	}
	if s.Fail != nil {
		if e := s.Fail("CheckIfPhoneNumberIsOptedOut", phone); e != nil {
			s.fail(w, e)
			return
		}
	}
	s.mu.Lock()
	out := s.optedOut[phone]
	s.checks++
	s.mu.Unlock()
	s.answer(w, struct {
		XMLName    xml.Name `xml:"CheckIfPhoneNumberIsOptedOutResponse"`
		Xmlns      string   `xml:"xmlns,attr"`
		IsOptedOut bool     `xml:"CheckIfPhoneNumberIsOptedOutResult>isOptedOut"`
		RequestID  string   `xml:"ResponseMetadata>RequestId"`
	}{Xmlns: xmlns, IsOptedOut: out, RequestID: s.requestID()})
}

func (s *Server) answer(w http.ResponseWriter, v any) {
	b, err := xml.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	_, _ = w.Write(append([]byte(xml.Header), b...))
}

func (s *Server) fail(w http.ResponseWriter, e *Error) {
	b, err := xml.Marshal(struct {
		XMLName   xml.Name `xml:"ErrorResponse"`
		Xmlns     string   `xml:"xmlns,attr"`
		Type      string   `xml:"Error>Type"`
		Code      string   `xml:"Error>Code"`
		Message   string   `xml:"Error>Message"`
		RequestID string   `xml:"RequestId"`
	}{Xmlns: xmlns, Type: e.Type, Code: e.Code, Message: e.Message, RequestID: s.requestID()})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(e.Status)
	_, _ = w.Write(append([]byte(xml.Header), b...))
}
