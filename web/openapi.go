package web

import (
	_ "embed"
	"net/http"
)

// openapiDoc is the API contract as OpenAPI 3.1, written by hand next to
// the routes; a test checks that the two list the same endpoints.
//
//go:embed openapi.json
var openapiDoc []byte

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(openapiDoc)
}
