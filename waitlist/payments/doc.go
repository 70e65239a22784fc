// Package payments holds the use cases of paid events' payments.
//
// Paid events. Nobody is charged while waiting: a checkout exists only
// for seats held for someone (a live offer). When an offer of a paid event
// is made, a checkout session is created after the transaction commits,
// expiring with the offer (the provider's limits clamp it: Stripe takes 30
// minutes to 24 hours, see pay/stripepay.ClampExpiry). The claim link's
// page sends the person to it (making a new one if the first could not be
// made or expired before the offer did). The claim itself happens when the
// provider's signed "completed" event arrives: the same conditional write
// as a tap on Claim. A payment that arrives for an offer that has ended
// (expired, withdrawn, or taken) is refunded in full and the person told;
// an offer that ends unpaid rolls on like any other.
//
// Making and closing checkouts after a commit is package core's (any use
// case's commit may call for it: an offer sent, an offer ended); the
// claim a payment makes is package offers' (ClaimPaid). This package is
// the provider's side of the story: the checkout link, the completed
// event, and late refunds.
package payments
