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
	Hash       string // hex SHA-256 of the rows as read (and of the owner's column mapping, when there is one)
	Rows       int    // data rows, without the header
	Imported   int
	Updated    int
	Unchanged  int
	Rejected   int // rows that became proposals with problems
	// Missing are the sheet's entries whose rows this read did not find,
	// each with what became of it (the mirror's grace rule, package
	// waitlist/intake); empty when every row was there.
	Missing []SheetMissing
	// Content is the sheet as this read found it. SheetVersionList leaves
	// it nil (a version's rows can run to megabytes); SheetVersionGet
	// reads it. It is nil too for versions kept before rows were, and
	// for versions older than the newest few (SheetVersionTrim).
	Content *SheetContent
}

// MissingIn counts the version's missing rows in state st.
func (v SheetVersion) MissingIn(st SheetMissingState) int {
	n := 0
	for _, m := range v.Missing {
		if m.State == st {
			n++
		}
	}
	return n
}

// SheetMissing is an entry that came from the sheet whose row a read did
// not find.
type SheetMissing struct {
	EntryID string            `json:"entry_id"`
	Name    string            `json:"name"`
	State   SheetMissingState `json:"state"`
	// Since is when a read first found the row gone (the grace rule
	// withdraws the entry only on a read a while after it); zero in
	// versions kept before it was recorded.
	Since time.Time `json:"since,omitzero"`
}

// SheetMissingState is what a read did with an entry whose row was gone.
type SheetMissingState string

// What a read did with an entry whose row was gone.
const (
	// SheetMissingPending: gone for the first time (or again, too soon
	// after); the entry is withdrawn if a read a while later does not
	// find its row either.
	SheetMissingPending SheetMissingState = "pending"
	// SheetMissingKept: gone again, but the entry holds a live offer,
	// which is left to run; it is withdrawn by a later read once it is
	// only waiting.
	SheetMissingKept SheetMissingState = "kept"
	// SheetMissingHeld: gone in a read that lost too many rows at once
	// (a sheet half edited, a filter left on), or in the first read of
	// another sheet: nothing is withdrawn until the owner confirms.
	SheetMissingHeld SheetMissingState = "held"
	// SheetMissingWithdrawn: taken off the waitlist by this read (or by
	// the owner's confirmation).
	SheetMissingWithdrawn SheetMissingState = "withdrawn"
)

// SheetContent is what one read of a sheet held: every row as read (the
// header among them, each cell as the sheet shows it), where the header
// is, and which person and service each data row names, so that two
// versions can be compared row by row.
type SheetContent struct {
	Rows [][]string `json:"rows"`
	// HeaderRow is the header's place in Rows, from 1; 0 when none was
	// recognised.
	HeaderRow int `json:"header_row,omitempty"`
	// Keys has one key per row of Rows: the person (email, else phone)
	// and service a data row names, as the import pairs rows with
	// entries; "" for the header, the rows above it, and rows naming no
	// one.
	Keys []string `json:"keys,omitempty"`
	// Cut counts the rows at the end a store left out to keep within its
	// item limit (DynamoDB's 400 KB, after compression); Rows and Keys
	// hold the ones before. 0 when the content is whole.
	Cut int `json:"cut,omitempty"`
}
