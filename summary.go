package nextup

import "time"

// Summary is a business's monthly summary: the month's figures, computed
// once when its timer fires (waitlist/insight), the narrative that went
// with them, and whether and when it was emailed to the owner. One per
// business and month.
type Summary struct {
	BusinessID string
	Month      string // "2026-11", in the business's timezone
	// Figures are the month's figures and the month before's, as JSON
	// (insight.Report): the store keeps them as they were, opaque.
	Figures     []byte
	Narrative   string // the plain-words paragraph sent
	NarrativeBy string // "template", or "model" when the model's text passed its check
	CreatedAt   time.Time
	SentAt      *time.Time // nil: not emailed (no owner email)
	MessageID   string     // the outbox message of the email, if any
}
