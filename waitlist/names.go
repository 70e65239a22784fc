package waitlist

import (
	"context"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/business"
	"github.com/nextup-dev/nextup/waitlist/entries"
	"github.com/nextup-dev/nextup/waitlist/events"
	"github.com/nextup-dev/nextup/waitlist/intake"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
	"github.com/nextup-dev/nextup/waitlist/messages"
	"github.com/nextup-dev/nextup/waitlist/offers"
	"github.com/nextup-dev/nextup/waitlist/payments"
	"github.com/nextup-dev/nextup/waitlist/slots"
	"github.com/nextup-dev/nextup/waitlist/staff"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

// The names below live in the packages that own them (see doc.go); they
// are repeated here so that the web layer, the CLI and the simulation
// keep one import, waitlist, for everything the use cases offer.

// Template kinds (see package templates).
const (
	TemplateOffer        = templates.TemplateOffer
	TemplateConfirmation = templates.TemplateConfirmation
	TemplateFilled       = templates.TemplateFilled
	TemplateExpired      = templates.TemplateExpired
	TemplateJoined       = templates.TemplateJoined
	TemplateHandback     = templates.TemplateHandback
	TemplateReminder     = templates.TemplateReminder
	TemplateEscalation   = templates.TemplateEscalation
	TemplateUnconfirmed  = templates.TemplateUnconfirmed
	TemplateProposal     = templates.TemplateProposal
	TemplateRefunded     = templates.TemplateRefunded
)

// TemplateKinds lists the template kinds in the order staff see them.
var TemplateKinds = templates.TemplateKinds

// TemplateData is what a template can say (templates.TemplateData).
type TemplateData = templates.TemplateData

// FormatWhen is a slot start as a customer reads it, in the business
// timezone: "Tue 1 Dec at 3:00 pm".
func FormatWhen(t time.Time, loc *time.Location) string { return templates.FormatWhen(t, loc) }

// FormatUntil is a deadline in the customer's words: "4:10 pm" today,
// "Tue 4:10 pm" on another day (relative to now, in the business timezone).
func FormatUntil(deadline, now time.Time, loc *time.Location) string {
	return templates.FormatUntil(deadline, now, loc)
}

// Countdown is a claim window in words: "10 minutes", "2 hours",
// "1 hour 30 minutes", "2 days".
func Countdown(d time.Duration) string { return templates.Countdown(d) }

// FormatPrice is an amount as a customer reads it: "EUR 25.00".
func FormatPrice(cents int64, currency string) string { return templates.FormatPrice(cents, currency) }

// CalendarICS is a booking as an iCalendar (RFC 5545) object (see
// templates.CalendarICS).
func CalendarICS(b nextup.Booking, sl nextup.Slot, businessName string) string {
	return templates.CalendarICS(b, sl, businessName)
}

// HowTheOrderWorks explains a business's rules in plain sentences (see
// templates.HowTheOrderWorks).
func HowTheOrderWorks(r nextup.Rules) []string { return templates.HowTheOrderWorks(r) }

// One request, one transaction (see core.Request).
type (
	// Request is one caller's unit of work; see Service.Begin.
	Request = core.Request
	// Idempotency is the Idempotency-Key a request carries, as the web
	// layer hands it over.
	Idempotency = core.Idempotency
	// Response is what a request answered, as stored for a replay.
	Response = core.Response
)

// Detached returns ctx without its request: what is done with it runs in
// transactions of its own. For work that must not join the request (the
// debug clock runs the sweeper, which has transactions of its own).
func Detached(ctx context.Context) context.Context { return core.Detached(ctx) }

// ErrRerun is Begin's error when the store asked for the request to start
// again: call Begin again.
var ErrRerun = core.ErrRerun

// The seams of the configuration (core.Config).
type (
	// MailParser reads a booking request into a proposed row: the
	// model-based adapter (intake/anthropic) when one is configured.
	MailParser = core.MailParser
	// Narrator writes the monthly summary's narrative from its figures (a
	// model; package insight checks its numbers).
	Narrator = core.Narrator
	// SheetReader reads the rows of a mirrored sheet (intake/sheet).
	SheetReader = core.SheetReader
	// SheetWriter writes a claim back to a mirrored Google Sheet
	// (intake/sheet's Reader is one).
	SheetWriter = core.SheetWriter
)

// WebhookEvent is the JSON body of a webhook delivery.
type WebhookEvent = core.WebhookEvent

// Message kinds the core sends.
const (
	MessageWebhook  = core.MessageWebhook
	MessageHandback = core.MessageHandback
)

// Businesses (package business).
type (
	// CreateBusinessParams are the inputs of CreateBusiness.
	CreateBusinessParams = business.CreateBusinessParams
	// ProfilePatch changes parts of a business's profile.
	ProfilePatch = business.ProfilePatch
	// TemplatesVersion is one version of a business's message templates.
	TemplatesVersion = business.TemplatesVersion
)

// Staff accounts (package staff).
const (
	SessionTTL           = staff.SessionTTL
	MaxFailedSignIns     = staff.MaxFailedSignIns
	LockFor              = staff.LockFor
	ResetTTL             = staff.ResetTTL
	MinPasswordLen       = staff.MinPasswordLen
	MessagePasswordReset = staff.MessagePasswordReset
)

// AddStaffParams are a new staff account.
type AddStaffParams = staff.AddStaffParams

// Slots and bookings (package slots).
type (
	// SlotParams are the inputs of CreateSlot.
	SlotParams = slots.SlotParams
	// ReleaseFilter chooses the slots of a bulk release.
	ReleaseFilter = slots.ReleaseFilter
	// SlotView is a slot with its offers.
	SlotView = slots.SlotView
	// BookingEvent is one event of a business's booking tool.
	BookingEvent = slots.BookingEvent
	// Appointment is the booking tool's appointment an event is about.
	Appointment = slots.Appointment
	// BookingEventResult is what a booking-tool event did.
	BookingEventResult = slots.BookingEventResult
)

// Booking-tool event types.
const (
	AppointmentCancelled = slots.AppointmentCancelled
	AppointmentNoShow    = slots.AppointmentNoShow
	AppointmentCreated   = slots.AppointmentCreated
	OpeningCreated       = slots.OpeningCreated
)

// Release reasons.
const (
	ReasonCancellation = slots.ReasonCancellation
	ReasonNoShow       = slots.ReasonNoShow
	ReasonOpening      = slots.ReasonOpening
)

// The waitlist's entries (package entries).
type (
	// JoinParams are the inputs of Join.
	JoinParams = entries.JoinParams
	// JoinResult is a new entry with its status-page token.
	JoinResult = entries.JoinResult
	// EntryPatch changes an entry's criteria.
	EntryPatch = entries.EntryPatch
	// EntryView is an entry with its place and its live offer.
	EntryView = entries.EntryView
)

// MessageWaitlisted is the kind of an event's waitlist confirmation.
const MessageWaitlisted = events.MessageWaitlisted

// MessageStatusLink is the kind of a registrant's new status link.
const MessageStatusLink = events.MessageStatusLink

// MessageJoined is the kind of the "you're on the list" message.
const MessageJoined = entries.MessageJoined

// Offers and claims (package offers).
type (
	// ClaimInfo is what the claim page and GET /v1/claims/{token} show.
	ClaimInfo = offers.ClaimInfo
	// ClaimResult is the outcome of a successful claim.
	ClaimResult = offers.ClaimResult
)

// Audit reasons of the booking-system saga (see package offers).
const (
	ReasonSlotTaken                = offers.ReasonSlotTaken
	ReasonBookingSystemConfirmed   = offers.ReasonBookingSystemConfirmed
	ReasonBookingSystemRetry       = offers.ReasonBookingSystemRetry
	ReasonBookingSystemUnavailable = offers.ReasonBookingSystemUnavailable
	ReasonBookingSystemRefused     = offers.ReasonBookingSystemRefused
	ReasonBookingSystemRemoved     = offers.ReasonBookingSystemRemoved
)

// Message kinds of offers and the saga.
const (
	MessageBookingFailed = offers.MessageBookingFailed
	MessageStaffNotice   = offers.MessageStaffNotice
	MessageExpired       = offers.MessageExpired
	MessageFilled        = offers.MessageFilled
	MessageRequeued      = offers.MessageRequeued
	MessageDropped       = offers.MessageDropped
	// MessageDeduped tells a person a booking took them off another list.
	MessageDeduped = core.MessageDeduped
)

// Events (package events).
type (
	// EventParams are an event as the organiser sets it up.
	EventParams = events.EventParams
	// RegisterParams are a registration as the person gives it.
	RegisterParams = events.RegisterParams
	// Registration is a person's registration for an event.
	Registration = events.Registration
	// CancelView is what the cancel link's page shows.
	CancelView = events.CancelView
	// EventStats is what an organiser reads about an event.
	EventStats = events.EventStats
	// PositionRate is how offers made at one waitlist place ended.
	PositionRate = events.PositionRate
	// Promotion is one offer of an event's seats, or a staff override.
	Promotion = events.Promotion
)

// Registration states as organisers read them.
const (
	RegConfirmed  = events.RegConfirmed
	RegWaitlisted = events.RegWaitlisted
	RegOffered    = events.RegOffered
	RegCancelled  = events.RegCancelled
	RegNoShow     = events.RegNoShow
	RegExpired    = events.RegExpired
)

// RegistrationStates lists the registration states for validation and
// filters.
var RegistrationStates = events.RegistrationStates

// NewEventParams are the defaults a new event starts from.
func NewEventParams() EventParams { return events.NewEventParams() }

// EventParamsOf is an event's current setup, for a patch to change.
func EventParamsOf(sl nextup.Slot) EventParams { return events.EventParamsOf(sl) }

// ValidateEvent checks an event's setup (and normalises its title and
// currency): a validation error naming every bad field, or nil.
func ValidateEvent(p *EventParams) error { return events.ValidateEvent(p) }

// Payments of paid events (package payments).

// PaymentResult is what a completed checkout came to.
type PaymentResult = payments.PaymentResult

// MessagePaymentRefunds is the message kind of the refund notice.
const MessagePaymentRefunds = payments.MessagePaymentRefunds

// Messages and answers to them (package messages).
type (
	// SMSReply is what an inbound text did and what to answer.
	SMSReply = messages.SMSReply
	// Unsubscription is what the unsubscribe page shows.
	Unsubscription = messages.Unsubscription
)

// Message kinds of follow-ups, reminders and fallbacks.
const (
	MessageEscalation = messages.MessageEscalation
	MessageReminder   = messages.MessageReminder
	MessageFallback   = messages.MessageFallback
	// MessageReminderTest is an event's reminder sent to the organiser to
	// try it (Service.TestReminder).
	MessageReminderTest = messages.MessageReminderTest
)

// SampleGuest is the name a test reminder greets (Service.TestReminder).
const SampleGuest = messages.SampleGuest

// Kinds of what a mail provider reports about a mail (MailFeedback).
const (
	MailPermanentBounce = messages.MailPermanentBounce
	MailTransientBounce = messages.MailTransientBounce
	MailComplaint       = messages.MailComplaint
)

// PermanentSMSError reports whether a carrier error code means the number
// can never get a text.
func PermanentSMSError(code string) bool { return messages.PermanentSMSError(code) }

// Requests that reach a business other than by the API (package intake).
type (
	// ProposeParams is a request turned into a proposed row by a parser.
	ProposeParams = intake.ProposeParams
	// ProposalOverrides are staff's corrections of a proposal's fields.
	ProposalOverrides = intake.ProposalOverrides
	// ImportOptions tune how a file is read.
	ImportOptions = intake.ImportOptions
	// ImportResult says what an import did, row by row.
	ImportResult = intake.ImportResult
	// ImportRow is a row that was imported, updated or found unchanged.
	ImportRow = intake.ImportRow
	// ImportRejected is a row that was left out, and why.
	ImportRejected = intake.ImportRejected
	// ImportOutcome is what an import did with one row.
	ImportOutcome = intake.ImportOutcome
	// SheetSync is what one read of the sheet did.
	SheetSync = intake.SheetSync
	// SheetDiff is what changed in a sheet between two versions.
	SheetDiff = intake.SheetDiff
	// SheetRowDiff is one row of a SheetDiff.
	SheetRowDiff = intake.SheetRowDiff
	// SheetCellDiff is one cell of a SheetRowDiff.
	SheetCellDiff = intake.SheetCellDiff
	// SheetPreview is a sheet's header with the field of each column.
	SheetPreview = intake.SheetPreview
)

// Import outcomes of a row that was not rejected.
const (
	ImportImported  = intake.ImportImported
	ImportUpdated   = intake.ImportUpdated
	ImportUnchanged = intake.ImportUnchanged
)

// Names of the intake lanes.
const (
	SourceImport       = intake.SourceImport
	DefaultSheetEvery  = intake.DefaultSheetEvery
	MaxSheetWithdraw   = intake.MaxSheetWithdraw
	MessageProposal    = intake.MessageProposal
	MessageJoinConfirm = intake.MessageJoinConfirm
)

// Audit reasons of the sheet mirror: an entry withdrawn because its row
// was deleted, and the write-back of a claim to the sheet (on the booking).
const (
	ReasonSheetRowDeleted = intake.ReasonSheetRowDeleted
	ReasonSheetMarked     = intake.ReasonSheetMarked
	ReasonSheetMarkRetry  = intake.ReasonSheetMarkRetry
	ReasonSheetMarkGaveUp = intake.ReasonSheetMarkGaveUp
	ReasonSheetRowGone    = intake.ReasonSheetRowGone
	// ReasonSheetMarkSkipped: the row's status cell held the owner's
	// words, which were left as they are.
	ReasonSheetMarkSkipped = intake.ReasonSheetMarkSkipped
)

// SheetVersionsWithRows is how many of a business's newest sheet versions
// keep their rows.
const SheetVersionsWithRows = intake.SheetVersionsWithRows

// SheetCode is the business's connection code, which the owner puts in a
// cell of their Google Sheet to show that it is theirs (see
// intake.SheetCode).
func SheetCode(b nextup.Business) string { return intake.SheetCode(b) }

// ColumnNames names the columns of a sheet's header row as a diff does.
func ColumnNames(header []string) []string { return intake.ColumnNames(header) }

// ErrMailTooLarge is a mail over the inbox lane's limits.
var ErrMailTooLarge = intake.ErrMailTooLarge

// ValidBusinessSlug and ValidEventSlug report whether a slug has the form
// UpdateProfile and UpdateEvent take.
var (
	ValidBusinessSlug = business.ValidSlug
	ValidEventSlug    = events.ValidSlug
)
