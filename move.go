package nextup

// MoveKind is one of the engine's four moves.
type MoveKind string

// The four moves.
const (
	MoveNobodyFits MoveKind = "nobody_fits"
	MoveOffer      MoveKind = "offer"
	MoveRollOn     MoveKind = "roll_on"
	MoveHandBack   MoveKind = "hand_back"
)

// Hand-back reasons.
const (
	HandBackListExhausted   = "list_exhausted"
	HandBackTryCap          = "try_cap"
	HandBackTooSoon         = "too_soon"
	HandBackPromotionCutoff = "promotion_cutoff"
)

// Move is what the engine decided for a slot, as applied and reported by
// the API: `{"move","offer_id"?,"entry_id"?,"reason"?}`.
type Move struct {
	Move    MoveKind `json:"move"`
	SlotID  string   `json:"slot_id,omitempty"`
	OfferID string   `json:"offer_id,omitempty"`
	EntryID string   `json:"entry_id,omitempty"`
	Reason  string   `json:"reason,omitempty"`
}
