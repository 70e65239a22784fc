package web

import (
	"net/http"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// putSheet is PUT /v1/businesses/{bid}/sheet {"url"|"spreadsheet_id",
// "range"?, "every_seconds"?:300, "columns"?:[{"header","field"}]}:
// mirror the waitlist from this sheet (a Google Sheets link as the url is
// its id), first read at once, through the owner's column mapping when
// given. An empty body (or null) stops the mirror. For a Google Sheet the
// answer carries the business's connection_code, which must be in a cell
// of the sheet before it is read.
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
	res := map[string]any{"sheet": out.Profile.Sheet}
	if out.Profile.Sheet.Writable() { // a Google Sheet: read only with the code in it
		res["connection_code"] = waitlist.SheetCode(out)
	}
	writeJSON(w, http.StatusOK, res)
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
	missing := make([]map[string]any, 0, len(v.Missing))
	for _, m := range v.Missing {
		missing = append(missing, map[string]any{"entry_id": m.EntryID, "name": m.Name, "state": m.State})
	}
	return map[string]any{"id": v.ID, "source": v.Source, "fetched_at": v.FetchedAt.In(loc), "hash": v.Hash, "rows": v.Rows,
		"imported": v.Imported, "updated": v.Updated, "unchanged": v.Unchanged, "rejected": v.Rejected,
		"missing": missing, "held_back": v.MissingIn(nextup.SheetMissingHeld)}
}

// sheetVersion is GET /v1/businesses/{bid}/sheet/versions/{vid}: one
// version with the rows it read (content null for a version kept before
// versions kept their rows).
func (s *Server) sheetVersion(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	v, err := s.Svc.SheetVersion(r.Context(), b.ID, r.PathValue("vid"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := versionOut(v, bizLoc(b))
	out["content"] = nil
	if c := v.Content; c != nil {
		header := []string{}
		if c.HeaderRow >= 1 && c.HeaderRow <= len(c.Rows) {
			header = c.Rows[c.HeaderRow-1]
		}
		rows := make([]map[string]any, 0, len(c.Rows))
		for i, cells := range c.Rows {
			if i+1 == c.HeaderRow {
				continue
			}
			key := ""
			if i < len(c.Keys) {
				key = c.Keys[i]
			}
			rows = append(rows, map[string]any{"row": i + 1, "key": key, "cells": nonNil(cells)})
		}
		out["content"] = map[string]any{"header_row": c.HeaderRow, "header": nonNil(header), "rows": rows, "cut": c.Cut}
	}
	writeJSON(w, http.StatusOK, out)
}

func nonNil(cells []string) []string {
	if cells == nil {
		return []string{}
	}
	return cells
}

// sheetDiff is GET /v1/businesses/{bid}/sheet/versions/{vid}/diff?from=:
// what changed from version from (default: the one before) to vid, row
// by row.
func (s *Server) sheetDiff(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	d, err := s.Svc.SheetDiff(r.Context(), b.ID, r.URL.Query().Get("from"), r.PathValue("vid"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	loc := bizLoc(b)
	rows := func(rs []waitlist.SheetRowDiff) []map[string]any {
		out := make([]map[string]any, 0, len(rs))
		for _, rd := range rs {
			cells := make([]map[string]any, 0, len(rd.Cells))
			for _, c := range rd.Cells {
				cells = append(cells, map[string]any{"before": c.Before, "after": c.After, "changed": c.Changed})
			}
			out = append(out, map[string]any{"key": rd.Key, "from_row": rd.FromRow, "to_row": rd.ToRow, "cells": cells})
		}
		return out
	}
	writeJSON(w, http.StatusOK, map[string]any{"from": versionOut(d.From, loc), "to": versionOut(d.To, loc), "columns": nonNil(d.Columns),
		"added": rows(d.Added), "removed": rows(d.Removed), "changed": rows(d.Changed), "same": d.Same, "partial": d.Partial})
}

// confirmSheetVersion is POST /v1/businesses/{bid}/sheet/versions/{vid}:confirm:
// the owner's word on a read that held rows back (too many went at once):
// their entries still waiting are withdrawn; the version saying so.
func (s *Server) confirmSheetVersion(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	discard(r)
	v, err := s.Svc.ConfirmSheetWithdrawals(r.Context(), b.ID, r.PathValue("vid"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"version": versionOut(v, bizLoc(b))})
}
