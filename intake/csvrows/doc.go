// Package csvrows reads a waitlist kept in a spreadsheet: the CSV file a
// business exports (ReadCSV) and the mapping of its columns and cells to
// the fields of a waitlist entry (Parse). The CSV import uses both; the
// sheet mirror hands Parse the rows it fetched. Nothing here touches a
// store: a row comes out with its fields typed and normalised, or with the
// problems that keep it out, and the caller decides what to write.
//
// # The file
//
// ReadCSV takes what spreadsheets actually save: UTF-8 with or without a
// byte order mark, UTF-16 with one (Excel's "Unicode text"), and, when the
// bytes are not UTF-8, Windows-1252 (Excel's "CSV" on Windows). The
// separator is a comma, a semicolon (spreadsheets in locales whose decimal
// mark is a comma) or a tab; it is the one with which a header row is
// recognised, quotes respected, or else the one the first line has most of
// outside quotes. Excel's "sep=;" first line is honoured and is not a row.
// Quoted cells may hold separators, doubled quotes and line breaks. Rows
// are numbered as a spreadsheet shows them: the first line is row 1, a
// quoted line break does not start a row, a blank line does. A stray quote
// spoils only its own row, which comes back as a Record with Err set.
// Files are bounded: MaxBytes bytes and MaxRows rows below the header;
// beyond that ReadCSV and Parse return ErrTooLarge.
//
// # The header
//
// The header is the first of the first ten rows that names at least two
// fields, one of them the person (a name) or a way to reach them. Rows above
// it (a title, a date) are skipped. Header cells are compared without case,
// accents kept, punctuation and a trailing hint in parentheses dropped
// ("E-mail:" and "Phone (mobile)" are email and phone). A cell naming no
// field is listed in Header.Ignored. When two columns name one field (phone
// and mobile) a row takes the first that is not blank.
//
//	field      header names (also German, French, Spanish and Dutch ones; see synonyms)
//	name       name, full name, customer, customer name, client, client name, guest name, contact name
//	first/last first name, given name / last name, surname, family name (joined into name)
//	email      email, e-mail, email address, mail
//	phone      phone, phone number, mobile, mobile number, cell, tel, telephone, sms
//	service    service, treatment, service type, appointment type
//	party_size party, party size, guests, covers, people, pax, seats, size, number of guests
//	earliest   earliest, from, start, after, earliest date, from date, available from
//	latest     latest, to, until, end, before, by, latest date, to date, available until
//	date       date, day: the earliest; a date without a time with no latest column is that whole day
//	staff      staff, with, stylist, therapist, practitioner, staff member, preferred staff
//	notes      notes, note, comments, comment, remarks (read, not stored)
//	priority   priority, vip, urgent
//	channel    channel, contact by, contact via, preferred channel
//	joined_at  joined, joined at, added, date added, signed up, created, timestamp (Google Forms)
//	status     status, booking status, waitlist status, booked? (read, not stored: the sheet mirror writes "Booked …" there)
//
// A person may choose the field of each header cell instead (Options.Columns,
// the dashboard's column mapping): then the header is the first of the first
// ten rows with a cell mapped to a person's field or a way to reach them, and
// only the cells the mapping names fill fields.
//
// # Cells
//
// Dates are read in the business timezone: 2026-12-01; 01/12/2026 and
// 01-12-2026 day first, or month first when the business's country writes
// dates that way (the US and its territories, the Philippines, Micronesia,
// the Marshall Islands, Palau) or Options.DateOrder says so; 1.12.2026 is
// always day first; two-digit years are 20yy; month names in English
// (1 Dec 2026, Dec 1, 2026, 1-Dec-26), a weekday in front ignored;
// 20261201; and spreadsheet date numbers (46357 is 1 Dec 2026, 46357.5 its
// noon), which a sheet exports when a date column is formatted as a
// number. Any of them may carry a time (14:30, 14:30:00, 2:30 pm), and an
// RFC 3339 time carries its own offset. A date without a time means the
// whole day: its first instant as an earliest bound, its last as a latest.
//
// Phone numbers become E.164 (+447700900123), read with the business's
// country when they have no international prefix; a number a spreadsheet
// turned into 4.47E+11 is refused, its digits are gone. Party sizes are
// whole numbers ("4", "4 people"); priority is yes/no, true/false, 1/0, x or
// ✓ (blank: no); channel is email or sms (text, phone and mobile mean sms).
// A service or staff name that matches the business's catalogue (a name or
// a synonym, any case) is written as the catalogue writes it; anything else
// is kept as it is.
//
// A row whose person, contact, service, date and staff cells are all blank
// is skipped without a word (spreadsheets export hundreds of them below the
// data, checkboxes and all).
package csvrows
