package dynamo

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nextup-dev/nextup"
)

// load reads the record at pk into rec (strongly consistent): ErrNotFound,
// naming what, when there is none.
func load[T any](ctx context.Context, t *Tx, pk, what string) (T, error) {
	return loadWith[T](ctx, t, pk, what, t.get)
}

// loadLocked is load of an item the commit checks (Tx.lock).
func loadLocked[T any](ctx context.Context, t *Tx, pk, what string) (T, error) {
	return loadWith[T](ctx, t, pk, what, t.lock)
}

func loadWith[T any](ctx context.Context, t *Tx, pk, what string, get func(context.Context, string) (item, error)) (T, error) {
	var rec T
	it, err := get(ctx, pk)
	if err != nil {
		return rec, err
	}
	if it == nil {
		return rec, fmt.Errorf("%s: %w", what, nextup.ErrNotFound)
	}
	return rec, decode(it, &rec)
}

// byIndex reads the record whose lookup partition (gsi1) is part: one
// item, read again from the base table (Tx.query). ErrNotFound, naming
// what, when part is only its prefix (an empty key) or nothing is there.
func byIndex[T any](ctx context.Context, t *Tx, prefix, key, what string) (T, error) {
	var zero T
	if key == "" {
		return zero, notFound(what)
	}
	its, err := t.query(ctx, query{index: "gsi1", part: prefix + key, limit: 1})
	if err != nil || len(its) == 0 {
		return zero, cmpErr(err, notFound(what))
	}
	return load[T](ctx, t, str(its[0], attrPK), what)
}

// byMarker reads the record the marker at markerPK points at (pk makes
// the record's key from the id). ErrNotFound, naming what, when there is
// no such marker.
func byMarker[T any](ctx context.Context, t *Tx, markerPK string, pk func(id string) string, what string) (T, error) {
	var zero T
	id, err := t.markerGet(ctx, markerPK)
	if err != nil || id == "" {
		return zero, cmpErr(err, notFound(what))
	}
	return load[T](ctx, t, pk(id), what)
}

// loadAll decodes the items of a query.
func loadAll[T any](its []item) ([]T, error) {
	out := make([]T, 0, len(its))
	for _, it := range its {
		var rec T
		if err := decode(it, &rec); err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}

// exists reports whether there is an item at pk (as the transaction sees
// it).
func (t *Tx) exists(ctx context.Context, pk string) (bool, error) {
	it, err := t.get(ctx, pk)
	return it != nil, err
}

// conflict is ErrConflict naming what.
func conflict(what string) error { return fmt.Errorf("%s: %w", what, nextup.ErrConflict) }

// notFound is ErrNotFound naming what.
func notFound(what string) error { return fmt.Errorf("%s: %w", what, nextup.ErrNotFound) }

// marker is an item that holds one value under a unique key: a business's
// slug, a staff email, an entry's live offer (doc.go, "Markers").
type marker struct {
	Of string // the id it points at
}

// markerGet returns the id the marker at pk points at, or "".
func (t *Tx) markerGet(ctx context.Context, pk string) (string, error) {
	it, err := t.get(ctx, pk)
	if err != nil || it == nil {
		return "", err
	}
	var m marker
	if err := decode(it, &m); err != nil {
		return "", err
	}
	return m.Of, nil
}

// markerSet points the marker at pk to id: ErrConflict when it points at
// another id already.
func (t *Tx) markerSet(ctx context.Context, pk, id, what string) error {
	of, err := t.markerGet(ctx, pk)
	if err != nil {
		return err
	}
	if of != "" && of != id {
		return conflict(what)
	}
	if of == id {
		return nil
	}
	it, err := newItem(marker{Of: id})
	if err != nil {
		return err
	}
	return t.put(pk, it)
}

// markerDrop removes the marker at pk when it points at id.
func (t *Tx) markerDrop(ctx context.Context, pk, id string) error {
	of, err := t.markerGet(ctx, pk)
	if err != nil || of != id {
		return err
	}
	return t.del(pk)
}

// ignoreNotFound is nil for ErrNotFound, err otherwise.
func ignoreNotFound(err error) error {
	if errors.Is(err, nextup.ErrNotFound) {
		return nil
	}
	return err
}

// rid is an insertion order for rows that the SQL stores order by their
// row id (audit events, messages, offers of a slot made at one instant):
// the wall clock in nanoseconds, made strictly increasing within the
// process, as a fixed-width sort key. It is only a tie-breaker among rows
// with equal times of the domain's clock, which stays the injected one;
// rows written by different processes at the same nanosecond are ordered
// by id.
func rid() string {
	for {
		last := lastRID.Load()
		n := max(last+1, time.Now().UnixNano())
		if lastRID.CompareAndSwap(last, n) {
			return seqKey(n)
		}
	}
}

var lastRID atomic.Int64

// next takes the next number of the counter at pk (an atomic ADD outside
// the transaction: numbers a rolled-back transaction took are skipped,
// which leaves gaps, never repeats).
func (t *Tx) next(ctx context.Context, pk string) (int64, error) {
	if !t.write {
		return 0, errReadOnly
	}
	out, err := t.s.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &t.s.table,
		Key:                       key(pk),
		UpdateExpression:          aws.String("ADD #n :one"),
		ExpressionAttributeNames:  map[string]string{"#n": "n"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}},
		ReturnValues:              types.ReturnValueUpdatedNew,
		ReturnConsumedCapacity:    t.s.rcc(),
	})
	if err != nil {
		return 0, t.s.err("counter "+pk, err)
	}
	t.sink.add("UpdateItem", out.ConsumedCapacity)
	return num(out.Attributes, "n"), nil
}
