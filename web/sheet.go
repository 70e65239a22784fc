package web

import (
	"net/http"
	"time"

	"github.com/nextup-dev/nextup"
)

// putSheet is PUT /v1/businesses/{bid}/sheet {"url"|"spreadsheet_id",
// "range"?, "every_seconds"?:300}: mirror the waitlist from this sheet,
// first read at once. An empty body (or null) stops the mirror.
func (s *Server) putSheet(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	var in *nextup.SheetConfig
	if r.ContentLength != 0 {
		if err := s.body(r, &in); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	out, err := s.Svc.SetSheet(r.Context(), b.ID, in)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"sheet": out.Profile.Sheet})
}

// syncSheet is POST /v1/businesses/{bid}/sheet:sync: read the sheet now;
// the import result, and whether the content had changed.
func (s *Server) syncSheet(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	discard(r)
	res, err := s.Svc.SyncSheet(r.Context(), b.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := ImportResultJSON(res.Import).(importJSON)
	writeJSON(w, http.StatusOK, struct {
		importJSON
		Changed bool           `json:"changed"`
		Version map[string]any `json:"version"`
	}{out, res.Changed, versionOut(res.Version, bizLoc(b))})
}

// sheetVersions is GET /v1/businesses/{bid}/sheet/versions: every mirrored
// version, newest first.
func (s *Server) sheetVersions(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	vs, err := s.Svc.SheetVersions(r.Context(), b.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]map[string]any, 0, len(vs))
	for _, v := range vs {
		out = append(out, versionOut(v, bizLoc(b)))
	}
	writeJSON(w, http.StatusOK, map[string]any{"versions": out})
}

func versionOut(v nextup.SheetVersion, loc *time.Location) map[string]any {
	if v.ID == "" {
		return nil
	}
	return map[string]any{"id": v.ID, "source": v.Source, "fetched_at": v.FetchedAt.In(loc), "hash": v.Hash, "rows": v.Rows,
		"imported": v.Imported, "updated": v.Updated, "unchanged": v.Unchanged, "rejected": v.Rejected}
}
