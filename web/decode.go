package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/nextup-dev/nextup"
)

// errTooLarge marks a request body over the limit (413 too_large).
var errTooLarge = errors.New("request body too large")

// readBody reads the whole body up to limit bytes.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, invalidf("body", "could not read the request body")
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: the limit is %d bytes", errTooLarge, limit)
	}
	return b, nil
}

// decodeStrict decodes one JSON object into v: no body is the empty
// object; anything else that is not an object (null, an array, a
// string), unknown fields, trailing data and type mismatches are 400
// validation_failed naming the field.
func decodeStrict(body []byte, v any) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		body = []byte("{}")
	}
	if body[0] != '{' {
		// encoding/json would take null as "nothing to set" and act on it.
		return invalidf("body", "must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te):
			return invalidf(te.Field, fmt.Sprintf("must be a %s", te.Type))
		case errors.As(err, &se):
			return invalidf("body", fmt.Sprintf("malformed JSON at byte %d", se.Offset))
		}
		return invalidf("body", err.Error())
	}
	if dec.More() {
		return invalidf("body", "trailing data after the JSON object")
	}
	return nil
}

func invalidf(field, msg string) error {
	return &nextup.Error{Kind: nextup.ErrInvalid, Code: nextup.CodeValidation, Message: field + ": " + msg,
		Fields: []nextup.FieldError{{Field: field, Message: msg}}}
}
