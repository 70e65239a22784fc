package web

import (
	"bytes"
	_ "embed"
	"net/http"
)

// openapiDoc is the API contract as OpenAPI 3.1, written by hand next to
// the routes. A test checks that the two list the same endpoints, and the
// web tests check every response they get against it (package webtest).
//
//go:embed openapi.json
var openapiDoc []byte

// OpenAPIDocument returns the API contract the server publishes at
// GET /v1/openapi.json, for tests that hold the server to it.
func OpenAPIDocument() []byte { return bytes.Clone(openapiDoc) }

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(openapiDoc)
}
