package nextup

import "time"

// Actors recorded on audit rows.
const (
	ActorSystem   = "system"   // the engine, deciding
	ActorTimer    = "timer"    // a durable timer firing
	ActorStaff    = "staff"    // staff, via API, dashboard or CLI
	ActorCustomer = "customer" // the person on the waitlist
)

// Subject types of audit rows.
const (
	SubjectSlot     = "slot"
	SubjectEntry    = "entry"
	SubjectOffer    = "offer"
	SubjectBooking  = "booking"
	SubjectHandBack = "handback"
	SubjectMessage  = "message"
	SubjectBusiness = "business"
	SubjectJob      = "job"
)

// AuditEvent is one row of the audit log: one state change of one subject,
// written in the same transaction as the change. SlotID ties every row that
// belongs to a slot's story together (offers, entries offered it, bookings).
type AuditEvent struct {
	ID          int64 // assigned by the store; increases in commit order per business
	BusinessID  string
	At          time.Time
	Actor       string
	SubjectType string
	SubjectID   string
	SlotID      string
	From        string
	To          string
	Reason      string
	RuleVersion int
	Detail      map[string]any
}
