package web

import (
	"fmt"
	"net/http"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// cancelLinkPage is GET /r/{bid}/{token}, the self-service cancel link of
// an event registration's confirmation: the event, and a button. Viewing
// changes nothing.
func (s *Server) cancelLinkPage(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	v, err := s.Svc.CancelLinkView(r.Context(), r.PathValue("bid"), r.PathValue("token"))
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	s.render(w, http.StatusOK, "cancel", cancelPageData(v, r, false))
}

// cancelLinkPost is POST /r/{bid}/{token}: the person cancels.
func (s *Server) cancelLinkPost(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	discard(r)
	v, err := s.Svc.CancelByLink(r.Context(), r.PathValue("bid"), r.PathValue("token"))
	status := http.StatusOK
	if nextup.ErrorCode(err) == nextup.CodeCancellationClosed {
		if v, err = s.Svc.CancelLinkView(r.Context(), r.PathValue("bid"), r.PathValue("token")); err == nil {
			status = http.StatusConflict
		}
	}
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	s.render(w, status, "cancel", cancelPageData(v, r, true))
}

func cancelPageData(v waitlist.CancelView, r *http.Request, posted bool) pageData {
	reg := v.Registration
	d := pageData{Title: v.Event.Title, Business: v.Business.Name, Service: v.Event.Title,
		When: waitlist.FormatWhen(v.Event.StartsAt, v.Location), Seats: reg.Entry.PartySize,
		Token: r.PathValue("bid") + "/" + r.PathValue("token")}
	switch {
	case reg.State == waitlist.RegCancelled:
		d.Heading, d.Message = "Your place is cancelled", "Thank you for letting us know: your seat goes to the next person on the waitlist."
	case reg.State != waitlist.RegConfirmed:
		d.Heading, d.Message = "Nothing to cancel", fmt.Sprintf("This registration is %s.", reg.State)
	case v.Closed:
		d.Heading, d.Message = "Cancellations have closed", "It is too late to cancel online. Please contact "+v.Business.Name+" directly."
	default:
		d.Heading, d.Message, d.CanLeave = "Can't come after all?", "Cancel your place and the next person on the waitlist gets your seat.", true
		if v.Event.Event.Paid() {
			d.Detail = "Cancelling does not refund your payment by itself: ask " + v.Business.Name + " about a refund."
		}
		if posted {
			d.Heading = "Not cancelled yet"
		}
	}
	return d
}

// payPost is POST /c/{token}/pay: the offer page's Pay button, sent on to
// the payment provider's checkout.
func (s *Server) payPost(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	discard(r)
	url, err := s.Svc.CheckoutByToken(r.Context(), r.PathValue("token"))
	if err != nil {
		info, infoErr := s.Svc.ViewClaim(r.Context(), r.PathValue("token"))
		if infoErr != nil {
			s.errorPage(w, r, infoErr)
			return
		}
		d := claimPageData(info, r.PathValue("token"), s.now())
		d.Heading, d.Message = "Payment is not possible right now", "The payment service did not answer. Please try again in a minute; your seats stay held until "+d.Until+"."
		if msg, ok := endedMessages[nextup.ErrorCode(err)]; ok {
			d.Heading, d.Message = msg[0], msg[1]
		}
		s.render(w, http.StatusConflict, "result", d)
		return
	}
	http.Redirect(w, r, url, http.StatusSeeOther)
}

// statusPayPost is POST /s/{token}/pay: the status page's Pay button for
// a paid event's held seats, sent on to the provider's checkout (which
// brings the person back to their status page).
func (s *Server) statusPayPost(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	discard(r)
	token := r.PathValue("token")
	url, err := s.Svc.CheckoutByStatus(r.Context(), token)
	switch code := nextup.ErrorCode(err); {
	case err == nil:
		http.Redirect(w, r, url, http.StatusSeeOther)
	case code == nextup.CodeNotFound:
		s.errorPage(w, r, err)
	case endedMessages[code] != [2]string{}:
		s.statusWith(w, r, token, endedMessages[code][1])
	default:
		s.statusWith(w, r, token, "The payment service did not answer. Please try again in a minute; your seats stay held.")
	}
}

// payReturnPage is GET /pay/{oid}: where the payment provider sends a
// person back when the checkout was made without their claim link (at
// registration). It says what is true without revealing anything.
func (s *Server) payReturnPage(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	d := pageData{Title: "Payment", Heading: "Thank you", Message: "If your payment went through, your seats are confirmed in a moment and a confirmation is on its way. If you left the payment page, nothing was charged."}
	s.render(w, http.StatusOK, "result", d)
}
