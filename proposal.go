package nextup

import "time"

// ProposalState is where a proposed row is: open until staff approve it
// (it becomes an entry) or reject it.
type ProposalState string

// Proposal states.
const (
	ProposalOpen     ProposalState = "open"
	ProposalApproved ProposalState = "approved"
	ProposalRejected ProposalState = "rejected"
)

// Proposal sources.
const (
	ProposalFromEmail = "email" // a forwarded booking request (SMTP listener, inbox webhook, CLI)
	ProposalFromSheet = "sheet" // a mirrored sheet row that needs a look
)

// ProposalFields is what a parser read from a request: the entry it
// proposes. Empty fields were not found.
type ProposalFields struct {
	Name      string    `json:"name,omitempty"`
	Email     string    `json:"email,omitempty"`
	Phone     string    `json:"phone,omitempty"`
	Service   string    `json:"service,omitempty"`
	PartySize int       `json:"party_size,omitempty"`
	Earliest  time.Time `json:"earliest,omitzero"`
	Latest    time.Time `json:"latest,omitzero"`
	Staff     string    `json:"staff,omitempty"`
	// Availability holds weekly windows the request names ("Tuesday
	// mornings", "not Fridays").
	Availability []Availability `json:"availability,omitempty"`
}

// Proposal is a row a request proposes, for staff to approve with one tap
// (it then becomes an entry whose joined-at is ReceivedAt, so a request
// forwarded late does not cost its sender their place) or reject.
type Proposal struct {
	ID         string
	BusinessID string
	Source     string
	// SourceRef names the request within its source (a mail's
	// Message-ID, a sheet's row key): one proposal per request, so the
	// same mail forwarded twice proposes one row.
	SourceRef  string
	ReceivedAt time.Time
	Excerpt    string // the request's words, trimmed, for staff to check the parse
	Fields     ProposalFields
	Confidence map[string]float64 // by field name, 0 to 1
	Problems   []string
	State      ProposalState
	// ActionHash is the hash of the secret in the owner's one-tap
	// approve/reject links; they work until ActionExpiresAt, once.
	ActionHash      string
	ActionExpiresAt time.Time
	EntryID         string // the entry an approval made
	DecidedAt       *time.Time
	DecidedBy       string // staff id, or "owner-link"
	CreatedAt       time.Time
}

// ProposalDecision is an approval or rejection of an open proposal.
type ProposalDecision struct {
	To      ProposalState // approved or rejected
	EntryID string        // for an approval
	At      time.Time
	By      string
}

// SheetVersion is one mirrored version of a business's sheet: what was
// read, when, and what the import made of it. A version is kept for every
// read whose content changed (its hash differs from the last one's).
type SheetVersion struct {
	ID         string
	BusinessID string
	Source     string // the spreadsheet id and range, or the CSV URL
	FetchedAt  time.Time
	Hash       string // hex SHA-256 of the rows as read
	Rows       int    // data rows, without the header
	Imported   int
	Updated    int
	Unchanged  int
	Rejected   int // rows that became proposals with problems
}
