// Package slots holds the use cases of slots and their bookings: creating
// a slot (a new opening goes through the engine at once), releasing seats
// (a cancellation, a no-show, an opening: bookings made through nextup end
// first, newest first, so booking rows never account for more seats than
// are booked), resizing, the hand-backs staff resolve, the engine's dry
// run (Preview), and the bookings staff read, cancel or mark a no-show,
// with the calendar link's read.
//
// A booking's reminders are scheduled here when it is made and cancelled
// when it ends. Ending a booking frees its seats and runs the engine for
// the slot; an event's registration ends with its booking. Events and
// offers end bookings through EndBookingIn and SetBookingEnded.
package slots
