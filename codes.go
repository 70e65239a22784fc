package nextup

// The stable error codes: the `code` of the API's problem+json, the one
// closed set the server answers with. Clients branch on these values, so a
// value never changes; a new failure gets a new code here, in the
// ErrorCode enum of web/openapi.json and in the table of docs/api.md
// (codes_test.go fails until all three agree, and fails on a code written
// as a string literal anywhere that could reach a client).
//
// Each comment starts with the HTTP status the code comes with.
const (
	// Request and authentication.

	// CodeValidation is 400: the request was refused before anything
	// changed — malformed JSON, an unknown field, a value out of bounds, a
	// bad time, a bad query parameter or Idempotency-Key header. The
	// problem's `errors` name each bad field.
	CodeValidation = "validation_failed"
	// CodeUnauthorized is 401: no Authorization: Bearer header, an unknown
	// business API key, a missing admin token, a webhook without a valid
	// signature, or (on the dashboard) no signed-in session.
	CodeUnauthorized = "unauthorized"
	// CodeNotFound is 404: no such object, or one of another business
	// (never 403), an unknown secret link, or no such endpoint.
	CodeNotFound = "not_found"
	// CodeMethodNotAllowed is 405: the path exists but not with this
	// method; the Allow header lists the methods it has.
	CodeMethodNotAllowed = "method_not_allowed"
	// CodeTooLarge is 413: the request body is over the limit (64 KiB for
	// JSON, the whole file for a CSV import, 10 MiB for an inbox mail).
	CodeTooLarge = "too_large"
	// CodeIdempotencyReuse is 422: this Idempotency-Key was used before
	// with a different request.
	CodeIdempotencyReuse = "idempotency_key_reuse"
	// CodeRateLimited is 429: too many attempts; the Retry-After header
	// says when to try again. The JSON API sets no rate limits today; the
	// contract reserves the code for it.
	CodeRateLimited = "rate_limited"
	// CodeConflict is 409: a state conflict without a more specific code
	// (two changes raced for the same object); reading it again and
	// retrying is safe.
	CodeConflict = "conflict"
	// CodeInternal is 500: something failed on the server's side; the
	// detail is logged, never shown.
	CodeInternal = "internal"
	// CodeError is 503: a system nextup depends on failed, and the error
	// carried no more specific code. No path of the server produces it
	// today (not the JSON API, nor a page); it is declared so that the set
	// stays closed.
	CodeError = "error"
	// CodeStorageFull is 503: the disk of the embedded store (SQLite) is
	// full, so the write was refused whole and nothing changed; Retry-After
	// says when to try again. Any write may answer it; reads go on. The
	// server is back by itself once space frees (GET /readyz says when).
	CodeStorageFull = "storage_full"
	// CodeStorageReadOnly is 503: the embedded store's file or disk cannot
	// be written (a read-only mount or file), so the write was refused
	// whole and nothing changed; Retry-After says when to try again. Any
	// write may answer it; reads go on. An operator must make the file
	// writable and restart the server.
	CodeStorageReadOnly = "storage_read_only"

	// Slots, offers and claims.

	// CodeSlotTaken is 409: the claim lost — someone else holds or booked
	// the seats, or the business's booking system says the slot is taken.
	CodeSlotTaken = "slot_taken"
	// CodeOfferExpired is 409: the offer's claim window ended before the
	// claim or decline.
	CodeOfferExpired = "offer_expired"
	// CodeOfferWithdrawn is 409: staff withdrew the offer, the person left,
	// or the slot was removed, before the claim or decline.
	CodeOfferWithdrawn = "offer_withdrawn"
	// CodeOfferDeclined is 409: the offer was declined before this claim.
	CodeOfferDeclined = "offer_declined"
	// CodeOfferClaimed is 409: a decline of an offer that was already
	// claimed.
	CodeOfferClaimed = "offer_claimed"
	// CodeOfferPending is 409: the offer is held back by quiet hours and
	// not sent yet, so it cannot be claimed or paid for.
	CodeOfferPending = "offer_pending"
	// CodeOfferNotLive is 409: staff tried to withdraw an offer that has
	// already ended.
	CodeOfferNotLive = "offer_not_live"
	// CodeNotEnoughBooked is 409: a release of more seats than are booked.
	CodeNotEnoughBooked = "not_enough_booked"
	// CodeCapacityBelowTaken is 409: a resize below the seats booked plus
	// held, or a resize of a booked or held unit slot.
	CodeCapacityBelowTaken = "capacity_below_taken"
	// CodeBookingEnded is 409: a cancel or no-show of a booking that is
	// already cancelled or a no-show.
	CodeBookingEnded = "booking_ended"
	// CodeBookingSystemUnavailable is 503: the business's booking system
	// did not confirm the claim; the business confirms it directly.
	CodeBookingSystemUnavailable = "booking_system_unavailable"

	// Waitlist entries.

	// CodeAlreadyWaiting is 409: the same contact is already waiting for
	// the same service or event; the problem's `entry_id` names the entry.
	CodeAlreadyWaiting = "already_waiting"
	// CodeEntryNotActive is 409: a change to, or a leave of, an entry that
	// has left, is booked or has expired.
	CodeEntryNotActive = "entry_not_active"
	// CodeEntryHasLiveOffer is 409: a change of the criteria (party size,
	// window, staff, availability) of an entry that holds a live offer; a
	// claim books what was offered, so answer or withdraw the offer first.
	CodeEntryHasLiveOffer = "entry_has_live_offer"

	// Events (RSVP).

	// CodeRegistrationClosed is 409: a registration after the event's
	// registration cutoff, or too close to its start to hold seats.
	CodeRegistrationClosed = "registration_closed"
	// CodeWaitlistFull is 409: the event is full and its waitlist has
	// reached its limit.
	CodeWaitlistFull = "waitlist_full"
	// CodeAlreadyRegistered is 409: this contact is registered for the
	// event already; the problem carries that registration's `id`,
	// `state` and `position`.
	CodeAlreadyRegistered = "already_registered"
	// CodeCancellationClosed is 409: a cancellation after the event's
	// cancellation cutoff.
	CodeCancellationClosed = "cancellation_closed"
	// CodeNotWaitlisted is 409: a promotion of a registration that is not
	// on the event's waitlist.
	CodeNotWaitlisted = "not_waitlisted"
	// CodeNoHistory is 409: the replay of an entry that joined before its
	// audit rows said where it joined the line (GET …/history and …/why).
	CodeNoHistory = "no_history"
	// CodeNotConfirmed is 409: a check-in or no-show of a registration
	// that is not confirmed.
	CodeNotConfirmed = "not_confirmed"
	// CodeNoOwnerEmail is 400: a test reminder of an event, for a
	// business whose profile has no owner_email to send it to (set it with
	// PATCH /v1/businesses/{bid}, or give it where the dashboard's event
	// page sends the test).
	CodeNoOwnerEmail = "no_owner_email"

	// Paid events.

	// CodePaymentRequired is 409: a claim of a paid event's held seats,
	// which are confirmed by paying (the claim page's Pay button); the
	// problem's `offer_id` names the offer.
	CodePaymentRequired = "payment_required"
	// CodeAlreadyPaid is 409: a checkout of seats that are already paid
	// for and confirmed (the claim page's Pay button, not the JSON API).
	CodeAlreadyPaid = "already_paid"
	// CodeNotPaid is 409: a checkout of a free event's offer, which is
	// claimed with its link instead (the claim page's Pay button, not the
	// JSON API).
	CodeNotPaid = "not_paid"
	// CodePaymentsNotSet is 503: a paid event's checkout or refund, on a
	// server with no payment provider configured (the claim page's Pay
	// button, not the JSON API: a registration goes without its
	// checkout_url, the payment webhook answers retry_later).
	CodePaymentsNotSet = "payments_not_set_up"
	// CodePaymentProviderUnavailable is 503: the payment provider did not
	// answer a checkout or a refund (the claim page's Pay button, not the
	// JSON API, as payments_not_set_up).
	CodePaymentProviderUnavailable = "payment_provider_unavailable"
	// CodeBadSignature is 400: a payment provider's webhook event whose
	// signature header does not match the endpoint's secret.
	CodeBadSignature = "bad_signature"
	// CodeRetryLater is 503: a correctly signed webhook event could not be
	// handled now (the store, a refund); the sender should send it again.
	CodeRetryLater = "retry_later"

	// Intake: proposals and the sheet mirror.

	// CodeProposalDecided is 409: an approve or reject of a proposal that
	// was decided already; the problem's `entry_id` names the entry an
	// approval made.
	CodeProposalDecided = "proposal_decided"
	// CodeProposalLinkExpired is 409: the owner's one-tap approve or reject
	// link has expired; the request is on the dashboard (a page, not the
	// JSON API).
	CodeProposalLinkExpired = "proposal_link_expired"
	// CodeNoSheet is 409: a sync of a business that mirrors no sheet.
	CodeNoSheet = "no_sheet"
	// CodeSheetUnreadable is 503: the mirrored sheet could not be read
	// (or this server reads no sheets); nothing changed.
	CodeSheetUnreadable = "sheet_unreadable"
	// CodeSheetNotVerified is 409: a Google Sheet none of whose cells (in
	// the range read) holds the business's connection code, so nextup does
	// not read it, store it or write to it: put the code in any cell of the
	// sheet and read it again. A published CSV needs no code.
	CodeSheetNotVerified = "sheet_not_verified"

	// Businesses, messages and staff.

	// CodeSlugTaken is 409: another business has the slug.
	CodeSlugTaken = "slug_taken"
	// CodeMessageNotDead is 409: a retry of a message that is not dead.
	CodeMessageNotDead = "message_not_dead"
	// CodeBadCredentials is 401: the dashboard's sign-in got an email and
	// password that match no account (a page, not the JSON API).
	CodeBadCredentials = "bad_credentials"
	// CodeAccountLocked is 429: too many failed sign-ins to the dashboard;
	// Retry-After says when to try again (a page, not the JSON API).
	CodeAccountLocked = "account_locked"
	// CodeEmailTaken is 409: a staff account with this email exists
	// already (`nextup staff add`, not the JSON API).
	CodeEmailTaken = "email_taken"
	// CodeResetLinkUnknown is 404: a password reset link that was used
	// already or never existed (a page, not the JSON API).
	CodeResetLinkUnknown = "reset_link_unknown"
	// CodeResetLinkExpired is 409: a password reset link that has expired
	// (a page, not the JSON API).
	CodeResetLinkExpired = "reset_link_expired"
)
