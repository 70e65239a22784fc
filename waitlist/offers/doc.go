// Package offers holds the use cases of an offer, from the moment the
// engine makes it to its end: the claim link viewed (it never claims: mail
// scanners open links) and claimed — one conditional write that turns the
// held seats into a booking, so nobody is ever double-booked — declined,
// withdrawn by staff, expired when its window ends, and sent when quiet
// hours that held it back are over.
//
// A business whose own booking system holds the truth has every claim
// booked there too: a saga of local transactions around the remote call,
// with a durable timer for the part still to do (booksys.go). A paid
// event's offer is claimed by its payment (package payments, through
// ClaimPaid); a YES texted back claims through ClaimByHash (package
// messages).
//
// Making an offer and ending one unclaimed are the engine's moves, in
// package core, since every use case that frees seats rolls a slot on.
package offers
