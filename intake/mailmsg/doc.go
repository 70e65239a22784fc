// Package mailmsg adapts an RFC 5322 / MIME message, as it reaches the
// inbox lane, to the one thing the lane cares about: what the person who
// asked for a booking wrote, who they are and when they wrote it.
//
// Staff rarely send us the requester's message itself. They forward it, and
// every mail client forwards differently:
//
//   - Gmail puts "---------- Forwarded message ---------" and a small header
//     block (From, Date, Subject, To) above the original text, with the
//     marker and some header names in the user's language ("Doorgestuurd
//     bericht", "Van:") and the date in its format ("mar, 3 nov 2026", where
//     "mar" is Tuesday, not March);
//   - Apple Mail writes "Begin forwarded message:" and quotes the original,
//     header block included, with "> ";
//   - Outlook writes "-----Original Message-----" (or its translation,
//     "-----Ursprüngliche Nachricht-----") or a line of underscores followed
//     by From, Sent, To and Subject, named in the user's language (Van,
//     Verzonden, Aan, Onderwerp);
//   - "forward as attachment" wraps the original whole as a message/rfc822
//     part.
//
// Extract finds the innermost original in any of these shapes (in the plain
// text part, or in the HTML part converted to text when there is no usable
// plain text), decodes transfer encodings and charsets, and strips what is
// not the requester's request: quoted replies ("On ... wrote:" and its
// German, French, Spanish and Dutch forms, "> " lines, Outlook's reply
// headers) and signatures ("-- ", "Sent from my iPhone", disclaimers). The
// signature is returned on its own, because a requester's phone number
// often lives there.
//
// The package knows nothing of businesses, stores or HTTP: the SMTP
// listener, the inbox webhook and the CLI all hand it raw bytes. Deciding
// whether the forwarder may forward to a business is the caller's job; the
// forwarder's address is returned for it.
package mailmsg
