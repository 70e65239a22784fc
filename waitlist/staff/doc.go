// Package staff holds the use cases of staff accounts: adding one to a
// business, signing in with a password (bcrypt, slow on purpose, so it is
// hashed outside any transaction; wrong passwords lock the account for a
// while; an unknown address takes as long as a known one), the sessions
// behind the dashboard's cookie, signing out, and resetting a password by
// an emailed single-use link, which ends every session of the account.
package staff
