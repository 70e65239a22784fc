package dynamo

import (
	"context"
	"time"

	"github.com/nextup-dev/nextup"
)

var _ = time.Time{}

func (t *Tx) EntryCreate(ctx context.Context, e nextup.Entry) (nextup.Entry, error) {
	return nextup.Entry{}, todo("EntryCreate")
}

func (t *Tx) EntryGet(ctx context.Context, id string) (nextup.Entry, error) {
	return nextup.Entry{}, todo("EntryGet")
}

func (t *Tx) EntryByStatusHash(ctx context.Context, hash string) (nextup.Entry, error) {
	return nextup.Entry{}, todo("EntryByStatusHash")
}

func (t *Tx) EntryUpdate(ctx context.Context, e nextup.Entry) error {
	return todo("EntryUpdate")
}

func (t *Tx) EntrySetState(ctx context.Context, id string, from []nextup.EntryState, to nextup.EntryState, at time.Time) error {
	return todo("EntrySetState")
}

func (t *Tx) EntryCandidates(ctx context.Context, q nextup.CandidateQuery) ([]nextup.Entry, error) {
	return nil, todo("EntryCandidates")
}

func (t *Tx) EntryList(ctx context.Context, f nextup.EntryFilter) ([]nextup.Entry, error) {
	return nil, todo("EntryList")
}

func (t *Tx) EntryPosition(ctx context.Context, e nextup.Entry) (int, error) {
	return 0, todo("EntryPosition")
}

func (t *Tx) EntryActiveByContact(ctx context.Context, businessID, contactKey, service, eventID string) (nextup.Entry, error) {
	return nextup.Entry{}, todo("EntryActiveByContact")
}

func (t *Tx) EntryByContact(ctx context.Context, businessID, contactKey, service, eventID string, states []nextup.EntryState) (nextup.Entry, error) {
	return nextup.Entry{}, todo("EntryByContact")
}

func (t *Tx) EntryExpireBefore(ctx context.Context, businessID string, before time.Time, limit int) ([]nextup.Entry, error) {
	return nil, todo("EntryExpireBefore")
}
