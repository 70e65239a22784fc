// Package business holds the use cases of a business as a tenant of
// nextup: creating it (its API key is shown once and kept only as a hash),
// authenticating that key, its profile and catalogue (services, staff,
// the webhook and booking-system URLs, its own message templates), its
// rules, whose every change is a new version on the record, and its daily
// housekeeping timer.
//
// Everything else a business does goes through the other use-case
// packages; this one only keeps the tenant itself in order.
package business
