package web

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

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
	if status == http.StatusServiceUnavailable && e != nil && e.Data["retry_after_seconds"] != nil {
		// A store that cannot take writes now (storage_full,
		// storage_read_only) says when to come back; the operator reads
		// the cause (SQLite's error) in the log.
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter(e)))
		s.logger().WarnContext(r.Context(), "write refused", "method", r.Method, "path", r.URL.Path, "code", p.Code, "error", err)
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

// retryAfter is the Retry-After of a rate-limited or storage error, in
// whole seconds:
// its "retry_after_seconds", or one.
func retryAfter(e *nextup.Error) int {
	if e != nil {
		if n, ok := e.Data["retry_after_seconds"].(int); ok && n > 0 {
			return n
		}
	}
	return 1
}

// storageHealth is a store that knows whether it can take writes: the
// embedded store, whose disk may be full or read-only (store/sqlite's
// Healthy).
type storageHealth interface {
	Healthy(ctx context.Context) error
}

// notReady answers /readyz for a store that cannot take writes, saying
// why, with Retry-After.
func (s *Server) notReady(w http.ResponseWriter, r *http.Request, err error) {
	var e *nextup.Error
	if !errors.As(err, &e) || (e.Code != nextup.CodeStorageFull && e.Code != nextup.CodeStorageReadOnly) {
		s.logger().ErrorContext(r.Context(), "readiness probe failed", "error", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "store unreachable"})
		return
	}
	body := map[string]any{"status": "storage full", "code": e.Code, "detail": e.Message}
	if e.Code == nextup.CodeStorageReadOnly {
		body["status"] = "storage read-only"
	}
	if since, ok := e.Data["since"].(time.Time); ok {
		body["since"] = since.Format(time.RFC3339)
	}
	w.Header().Set("Retry-After", strconv.Itoa(retryAfter(e)))
	writeJSON(w, http.StatusServiceUnavailable, body)
}
