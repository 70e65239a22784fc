// Package templates holds the words of every message nextup sends: the
// default wording of each kind (offer, confirmation, reminder, hand-back,
// ...), a business's own templates (checked on sample data before they
// are saved, and allowed to fill in fields and choose with if, nothing
// more, because they run inside the transactions that send them), the
// layout that wraps every HTML email, and the formatting a person reads
// (times in the business's timezone, countdowns, prices, the calendar
// invite, the plain-language rules of HowTheOrderWorks).
//
// It decides nothing and reads nothing: the use cases choose who gets
// what and when, and call Compose for the words. That is why it sits
// below them all, the decision engine's moves included, and imports
// nothing of the waitlist.
package templates
