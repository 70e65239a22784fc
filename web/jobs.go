package web

import (
	"net/http"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// bulkRelease is POST /v1/businesses/{bid}/slots:release: every slot the
// filter matches is freed by a job, in waves; 202 with the job's id and
// how many slots it frees.
func (s *Server) bulkRelease(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	var in struct {
		Filter struct {
			From    *time.Time `json:"from"`
			To      *time.Time `json:"to"`
			Service string     `json:"service"`
			Staff   string     `json:"staff"`
			IDs     []string   `json:"ids"`
		} `json:"filter"`
		Reason string `json:"reason"`
	}
	if err := s.body(r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	f := waitlist.ReleaseFilter{Service: in.Filter.Service, Staff: in.Filter.Staff, IDs: in.Filter.IDs}
	if in.Filter.From != nil {
		f.From = *in.Filter.From
	}
	if in.Filter.To != nil {
		f.To = *in.Filter.To
	}
	job, err := s.Svc.BulkRelease(r.Context(), b.ID, f, in.Reason)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/jobs/"+job.ID)
	writeJSON(w, http.StatusAccepted, map[string]any{"job_id": job.ID, "slots": job.Total, "job": jobOut(job, bizLoc(b))})
}

// getJob is GET /v1/jobs/{id}: a job's progress.
func (s *Server) getJob(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	job, err := s.Svc.GetJob(r.Context(), b.ID, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, jobOut(job, bizLoc(b)))
}

func jobOut(j nextup.Job, loc *time.Location) map[string]any {
	out := map[string]any{"id": j.ID, "kind": j.Kind, "state": j.State, "done": j.Done, "total": j.Total,
		"reason": j.Reason, "seats_freed": j.Freed, "offers": j.Offers, "slot_ids": slotIDs(j),
		"created_at": j.CreatedAt.In(loc), "updated_at": j.UpdatedAt.In(loc)}
	if j.Error != "" {
		out["error"] = j.Error
	}
	return out
}

// slotIDs is a job's slots, never null.
func slotIDs(j nextup.Job) []string {
	if j.SlotIDs == nil {
		return []string{}
	}
	return j.SlotIDs
}
