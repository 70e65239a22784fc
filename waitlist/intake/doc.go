// Package intake holds the use cases of requests that reach a business
// other than by the API: a booking request forwarded by mail (the inbox
// lane, inbox.go), a waitlist kept in a spreadsheet and mirrored every few
// minutes (sheet.go) — both ways with a Google Sheet, whose claimed rows
// are marked booked (sheetmark.go) — with the versions it kept for the
// owner to open and compare (sheetview.go), a CSV file imported once
// (import.go), and the public
// join form's checks and its confirmation message (joinform.go).
//
// What a person wrote is read by a parser (intake/parse, or the model
// parser MailParser) into a proposal that staff approve or reject, by the
// dashboard or by one-tap links mailed to the owner (proposals.go); rows
// of a file or a sheet that read cleanly join at once, as Join does, and
// the rest become proposals. Either way the entry joins through package
// entries, checked the same way as any other, with its place counted from
// when the person asked.
//
// The readers of formats and providers (intake/csvrows, intake/mailmsg,
// intake/sheet, intake/smtpd, ...) live outside the waitlist; this
// package is the use cases that turn what they read into entries.
package intake
