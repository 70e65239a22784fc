package ses

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"strings"
)

// Kind is what SES reports about a recipient of a mail. Its values are
// the kinds waitlist.MailFeedback takes.
type Kind string

// Kinds of feedback.
const (
	// PermanentBounce: the address can never get mail (a "Permanent"
	// bounce, SES's suppression lists included).
	PermanentBounce Kind = "permanent_bounce"
	// TransientBounce: not delivered this time ("Transient" or
	// "Undetermined").
	TransientBounce Kind = "transient_bounce"
	// Complaint: the recipient marked the mail as spam.
	Complaint Kind = "complaint"
)

// Feedback is one recipient's bounce or complaint.
type Feedback struct {
	// MessageID is the outbox message's id, from the mail's
	// nextup_message_id tag or its X-Nextup-Message-Id header; "" when
	// the mail names none (it was not nextup's).
	MessageID string
	// SESMessageID is SES's id of the mail (the sender's provider id).
	SESMessageID string
	// Address is the recipient's address.
	Address string
	Kind    Kind
	// Reason says why, for people: the bounce's type, subtype and the
	// receiving server's diagnostic, or the complaint's feedback type.
	Reason string
}

// notification is the JSON SES publishes to an SNS topic: an event of a
// configuration set's event destination ("eventType"), or an identity's
// feedback notification ("notificationType"), which share the bounce,
// complaint and mail objects. Fields nextup does not use are left out.
type notification struct {
	EventType        string `json:"eventType"`
	NotificationType string `json:"notificationType"`
	Bounce           *struct {
		BounceType        string `json:"bounceType"`
		BounceSubType     string `json:"bounceSubType"`
		BouncedRecipients []struct {
			EmailAddress   string `json:"emailAddress"`
			Status         string `json:"status"`
			DiagnosticCode string `json:"diagnosticCode"`
		} `json:"bouncedRecipients"`
	} `json:"bounce"`
	Complaint *struct {
		ComplainedRecipients []struct {
			EmailAddress string `json:"emailAddress"`
		} `json:"complainedRecipients"`
		ComplaintFeedbackType string `json:"complaintFeedbackType"`
		ComplaintSubType      string `json:"complaintSubType"`
	} `json:"complaint"`
	Mail struct {
		MessageID string              `json:"messageId"`
		Tags      map[string][]string `json:"tags"`
		Headers   []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"headers"`
	} `json:"mail"`
}

// ParseFeedback reads the body of an SES notification (the Message of
// the SNS notification that carried it). A bounce or complaint gives one
// Feedback per recipient; any other event (a delivery, a send, an open)
// gives none and no error. Bytes that are not such a notification are an
// error.
func ParseFeedback(b []byte) ([]Feedback, error) {
	var n notification
	if err := json.Unmarshal(b, &n); err != nil {
		return nil, fmt.Errorf("ses notification: %w", err)
	}
	typ := n.EventType
	if typ == "" {
		typ = n.NotificationType
	}
	if typ == "" {
		return nil, errors.New("ses notification: neither eventType nor notificationType")
	}
	id := messageID(n)
	var out []Feedback
	add := func(addr string, kind Kind, reason string) {
		if a := address(addr); a != "" {
			out = append(out, Feedback{MessageID: id, SESMessageID: n.Mail.MessageID, Address: a, Kind: kind, Reason: reason})
		}
	}
	switch typ {
	case "Bounce":
		if n.Bounce == nil {
			return nil, errors.New("ses notification: a Bounce without its bounce")
		}
		kind := TransientBounce
		if n.Bounce.BounceType == "Permanent" {
			kind = PermanentBounce
		}
		for _, r := range n.Bounce.BouncedRecipients {
			reason := join(n.Bounce.BounceType+" bounce", n.Bounce.BounceSubType, r.Status, r.DiagnosticCode)
			add(r.EmailAddress, kind, reason)
		}
	case "Complaint":
		if n.Complaint == nil {
			return nil, errors.New("ses notification: a Complaint without its complaint")
		}
		reason := join("complaint", n.Complaint.ComplaintFeedbackType, n.Complaint.ComplaintSubType)
		for _, r := range n.Complaint.ComplainedRecipients {
			add(r.EmailAddress, Complaint, reason)
		}
	}
	return out, nil
}

// messageID is the outbox id the mail names: its tag (SES events carry
// the message's tags) or else its header (identity notifications carry
// the headers when asked to).
func messageID(n notification) string {
	if v := n.Mail.Tags[TagMessageID]; len(v) > 0 && strings.TrimSpace(v[0]) != "" {
		return strings.TrimSpace(v[0])
	}
	for _, h := range n.Mail.Headers {
		if strings.EqualFold(h.Name, "X-Nextup-Message-Id") && strings.TrimSpace(h.Value) != "" {
			return strings.TrimSpace(h.Value)
		}
	}
	return ""
}

// address is the bare address of a recipient SES names ("ada@example.com",
// or now and then with a display name).
func address(s string) string {
	if a, err := mail.ParseAddress(s); err == nil {
		return a.Address
	}
	return strings.TrimSpace(s)
}

// join is the non-empty parts, "; " between them.
func join(parts ...string) string {
	var keep []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, "; ")
}
