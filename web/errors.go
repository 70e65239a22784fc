package web

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/nextup-dev/nextup"
)

// errMethodNotAllowed marks a request for a path that is served, but not
// with its method (405, with the Allow header).
var errMethodNotAllowed = errors.New("method not allowed")

// problem is an RFC 9457 problem details body.
type problem struct {
	Type   string              `json:"type"`
	Title  string              `json:"title"`
	Status int                 `json:"status"`
	Detail string              `json:"detail,omitempty"`
	Code   string              `json:"code"`
	Errors []nextup.FieldError `json:"errors,omitempty"`
}

// statusOf maps an error kind to its HTTP status: the one place that does.
func statusOf(err error) int {
	var e *nextup.Error
	if errors.As(err, &e) && e.Code == nextup.CodeIdempotencyReuse {
		return http.StatusUnprocessableEntity
	}
	switch {
	case errors.Is(err, errTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, errMethodNotAllowed):
		return http.StatusMethodNotAllowed
	case errors.Is(err, nextup.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, nextup.ErrUnauthorized):
		return http.StatusUnauthorized
	case errors.Is(err, nextup.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, nextup.ErrConflict):
		return http.StatusConflict
	case errors.Is(err, nextup.ErrRateLimited):
		return http.StatusTooManyRequests
	case errors.Is(err, nextup.ErrUnavailable):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// writeError writes err as problem+json. Internal errors are logged with
// their detail and shown only as a generic message.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	p := problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Code: nextup.ErrorCode(err)}
	var e *nextup.Error
	if errors.As(err, &e) {
		p.Detail, p.Errors = e.Message, e.Fields
	}
	switch status {
	case http.StatusInternalServerError:
		s.logger().ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "error", err)
		p.Code, p.Detail = nextup.CodeInternal, "something went wrong on our side; it has been logged"
	case http.StatusRequestEntityTooLarge:
		p.Code, p.Detail = nextup.CodeTooLarge, err.Error()
	}
	if p.Code == "" && status == http.StatusTooManyRequests {
		p.Code = nextup.CodeRateLimited
	}
	if p.Code == "" {
		p.Code = nextup.CodeError
	}
	body := map[string]any{"type": p.Type, "title": p.Title, "status": p.Status, "code": p.Code}
	if p.Detail != "" {
		body["detail"] = p.Detail
	}
	if len(p.Errors) > 0 {
		body["errors"] = p.Errors
	}
	if e != nil {
		for k, v := range e.Data { // extra members, e.g. the existing entry of already_waiting
			if _, taken := body[k]; !taken {
				body[k] = v
			}
		}
	}
	if status == http.StatusUnauthorized {
		// RFC 9110 section 15.5.2: a 401 names the scheme that would work.
		w.Header().Set("WWW-Authenticate", "Bearer")
	}
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter(e)))
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func (s *Server) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// retryAfter is the Retry-After of a rate-limited error, in whole seconds:
// its "retry_after_seconds", or one.
func retryAfter(e *nextup.Error) int {
	if e != nil {
		if n, ok := e.Data["retry_after_seconds"].(int); ok && n > 0 {
			return n
		}
	}
	return 1
}
