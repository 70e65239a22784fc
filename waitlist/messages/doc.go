// Package messages holds the use cases of the outbox and of what people
// answer to it.
//
// The outbox as staff see it, and a dead message queued again (outbox.go).
// The timers that send something later: the follow-up of an offer nobody
// has opened by half its window, on the person's other channel
// (escalate.go), and a booking's reminders (reminders.go; package slots
// schedules them). A message that could not be delivered: the address
// opted out when it can never be reached, and the message sent again on
// the person's other channel, or the offer ended when there is none
// (fallback.go; the relay's dead letters and carriers' reports come here,
// and a mail provider's bounces, feedback.go, which also opts out an
// address whose owner reported a mail as spam).
// Texts people send: STOP, START, HELP and a YES that claims their one
// live offer (sms.go). The one-click unsubscribe of email (unsubscribe.go).
//
// The words of every message are package templates'; which message goes
// when an offer is made or a booking confirmed is decided by the use case
// that makes it. Everything here that writes a message writes it in the
// outbox in the same transaction as what it tells of.
package messages
