package dynamo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nextup-dev/nextup"
)

// Importing a business's history copied from another store (`nextup copy`,
// store/storecopy.RecordDestination): each record becomes the item, and
// the markers, that the store's own methods write for it (the same
// builders: bizItem, slotItem, entryItem, …), with its ids kept — entry
// Seq numbers, timer ids and audit event ids too — and the counters
// seq#entries and seq#timers moved past the copied numbers at the end.
// Creation-order keys (messages, offers, bookings, payments, hand-backs)
// take rid() in the order the records come, which is the source's
// insertion order.

// ImportRecords runs fn and stores every record it puts (nextup.Business,
// nextup.Slot, nextup.Entry, nextup.Offer, nextup.Booking, nextup.Payment,
// nextup.HandBack, nextup.AuditEvent, nextup.Message, nextup.Timer,
// nextup.Suppression, nextup.Staff, nextup.Session, nextup.PasswordReset,
// nextup.Proposal, nextup.SheetVersion, nextup.Guest, nextup.Job or
// nextup.Summary, as values; a business's records after the business) as
// the items the store writes for it, ids kept
// (store/storecopy.RecordDestination).
//
// DynamoDB has no transaction as large as a business's history: items are
// created with conditional puts (attribute_not_exists) in
// TransactWriteItems of at most MaxTxActions items, so they appear in the
// table batch by batch, pending timers and due messages (which the
// store-wide sweepers look for) last. When fn, a write or the moving of
// the counters fails, every item this import wrote is deleted again and
// the error, saying so, returned: a failed copy leaves nothing behind
// (best effort: items it could not delete are named in the error). A
// business that exists in the table already makes the import fail before
// it writes anything of that business; any other item that exists (an
// id, a slug, a staff email or a provider's session another business
// has) makes it fail with ErrConflict. Nothing should use a business
// while it is being copied.
func (s *Store) ImportRecords(ctx context.Context, fn func(put func(rec any) error) error) error {
	if err := s.check(); err != nil {
		return err
	}
	im := &importer{s: s}
	err := fn(func(rec any) error { return im.put(ctx, rec) })
	if err == nil {
		err = im.finish(ctx)
	}
	if err == nil {
		return nil
	}
	n := len(im.written)
	if n == 0 {
		return fmt.Errorf("dynamodb: import (nothing was written): %w", err)
	}
	if left := im.undo(context.WithoutCancel(ctx)); left != nil {
		return fmt.Errorf("dynamodb: import: %w; and %w", err, left)
	}
	return fmt.Errorf("dynamodb: import (nothing was kept: the %d items it wrote were deleted): %w", n, err)
}

// importer batches the items of an import.
type importer struct {
	s        *Store
	batch    []pkItem // not written yet
	size     int      // bytes of batch
	last     []pkItem // written at the end
	written  []string // pks written, for undo
	seq, tid int64    // the largest entry Seq and timer id
	// ranks are the counts of the rank tree (rank.go) of the waiting
	// entries imported, written at the end.
	ranks map[string]map[string]int64
}

type pkItem struct {
	pk string
	it item
}

// put adds the items of one record.
func (im *importer) put(ctx context.Context, rec any) error {
	its, err := im.items(ctx, rec)
	if err != nil {
		return err
	}
	for _, pi := range its {
		if str(pi.it, "gsi1pk") == timerDue || str(pi.it, "gsi4pk") == "msgdue" {
			im.last = append(im.last, pi)
			continue
		}
		if err := im.add(ctx, pi); err != nil {
			return err
		}
	}
	return nil
}

// items are the items of one record, as the store's methods write them.
func (im *importer) items(ctx context.Context, rec any) ([]pkItem, error) {
	var (
		out []pkItem
		err error
	)
	// one adds the item at pk built by build.
	one := func(pk string, it item, berr error) {
		if err == nil {
			err = berr
			out = append(out, pkItem{pk, it})
		}
	}
	// mark adds the marker at pk pointing at id.
	mark := func(pk, id string) {
		it, merr := newItem(marker{Of: id})
		one(pk, it, merr)
	}
	switch r := rec.(type) {
	case nextup.Business:
		if err := im.absent(ctx, bizPK(r.ID), "business "+r.ID); err != nil {
			return nil, err
		}
		it, berr := bizItem(r)
		one(bizPK(r.ID), it, berr)
		if r.Profile.Slug != "" {
			mark(slugPK(r.Profile.Slug), r.ID)
		}
	case nextup.Slot:
		it, berr := slotItem(r)
		one(slotPK(r.ID), it, berr)
	case nextup.Entry:
		im.seq = max(im.seq, r.Seq)
		if r.State == nextup.EntryWaiting {
			if im.ranks == nil {
				im.ranks = map[string]map[string]int64{}
			}
			pks, nodes := rankPath(r)
			for i, pk := range pks {
				if im.ranks[pk] == nil {
					im.ranks[pk] = map[string]int64{}
				}
				im.ranks[pk][strconv.FormatInt(nodes[i], 10)]++
			}
		}
		it, berr := entryItem(r)
		one(entPK(r.ID), it, berr)
	case nextup.Offer:
		it, berr := offerItem(r, order(nil, r.CreatedAt))
		one(offerPK(r.ID), it, berr)
		if r.State.Live() {
			mark(offerLivePK(r.EntryID), r.ID)
		}
	case nextup.Booking:
		it, berr := bookingItem(r, order(nil, r.CreatedAt))
		one(bookingPK(r.ID), it, berr)
		if r.OfferID != "" {
			mark(bookingOfferPK(r.OfferID), r.ID)
		}
	case nextup.Payment:
		it, berr := paymentItem(r, order(nil, r.CreatedAt))
		one(paymentPK(r.ID), it, berr)
		mark(paymentSessionPK(r.Provider, r.SessionID), r.ID)
	case nextup.Guest:
		it, berr := guestItem(r)
		one(guestPK(r.EntryID, r.Index), it, berr)
	case nextup.HandBack:
		it, berr := handBackItem(r, order(nil, r.CreatedAt))
		one(handBackPK(r.ID), it, berr)
	case nextup.AuditEvent:
		it, berr := auditItem(r)
		one(auditPK(seqKey(r.ID)), it, berr)
	case nextup.Message:
		it, berr := msgItem(r, rid())
		one(msgPK(r.ID), it, berr)
	case nextup.Timer:
		im.tid = max(im.tid, r.ID)
		it, berr := timerItem(r)
		one(timerPK(r.ID), it, berr)
		if r.Key != "" && r.DoneAt == nil {
			mark(timerKeyPK(r.Key), strconv.FormatInt(r.ID, 10))
		}
	case nextup.Suppression:
		it, berr := newItem(r)
		one(supPK(r.BusinessID, r.Channel, r.Address), it, berr)
	case nextup.Staff:
		it, berr := staffItem(r)
		one(staffPK(r.ID), it, berr)
		mark(staffEmailPK(r.Email), r.ID)
	case nextup.Session:
		it, berr := sessItem(r)
		one(sessPK(r.IDHash), it, berr)
	case nextup.PasswordReset:
		it, berr := pwresetItem(r)
		one(pwresetPK(r.TokenHash), it, berr)
	case nextup.Proposal:
		it, berr := propItem(r)
		one(propPK(r.ID), it, berr)
		if r.SourceRef != "" {
			mark(propSrcPK(r), r.ID)
		}
	case nextup.SheetVersion:
		it, berr := shvItem(r)
		one(shvPK(r.ID), it, berr)
		if r.Content != nil {
			rows, berr := shvRowsItem(r)
			one(shvRowsPK(r.ID), rows, berr)
		}
	case nextup.Job:
		it, berr := jobItem(r)
		one(jobPK(r.ID), it, berr)
	case nextup.Summary:
		it, berr := sumItem(r)
		one(sumPK(r.BusinessID, r.Month), it, berr)
	default:
		return nil, fmt.Errorf("no item for a %T", rec)
	}
	if err != nil {
		return nil, fmt.Errorf("%T: %w", rec, err)
	}
	return out, nil
}

// absent fails with ErrConflict when the item at pk exists, after writing
// what is batched (so that an import of several businesses fails on the
// business, not on its first item).
func (im *importer) absent(ctx context.Context, pk, what string) error {
	if err := im.flush(ctx); err != nil {
		return err
	}
	out, err := im.s.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &im.s.table, Key: key(pk), ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String(attrPK),
	})
	if err != nil {
		return im.s.err("get "+pk, err)
	}
	if out.Item != nil {
		return fmt.Errorf("%s exists already: %w", what, nextup.ErrConflict)
	}
	return nil
}

// add batches one item, writing the batch first when it is full.
func (im *importer) add(ctx context.Context, pi pkItem) error {
	n := itemSize(pi.it) + len(attrPK) + len(pi.pk) + len(attrVersion) + 3
	if len(im.batch) == MaxTxActions || (len(im.batch) > 0 && im.size+n > MaxTxBytes) {
		if err := im.flush(ctx); err != nil {
			return err
		}
	}
	im.batch = append(im.batch, pi)
	im.size += n
	return nil
}

// finish writes what is left, the deferred items last, and moves the
// counters past the copied numbers.
func (im *importer) finish(ctx context.Context) error {
	pks := make([]string, 0, len(im.ranks))
	for pk := range im.ranks {
		pks = append(pks, pk)
	}
	slices.Sort(pks)
	for _, pk := range pks {
		it, err := newItem(im.ranks[pk])
		if err != nil {
			return err
		}
		if err := im.add(ctx, pkItem{pk, it}); err != nil {
			return err
		}
	}
	if err := im.flush(ctx); err != nil {
		return err
	}
	for _, pi := range im.last {
		if err := im.add(ctx, pi); err != nil {
			return err
		}
	}
	im.last = nil
	if err := im.flush(ctx); err != nil {
		return err
	}
	if err := im.raise(ctx, entSeqPK, im.seq); err != nil {
		return err
	}
	return im.raise(ctx, "seq#timers", im.tid)
}

// flush creates the batched items in one transaction (each must not
// exist), running it again when it is throttled or meets another
// transaction.
func (im *importer) flush(ctx context.Context) error {
	if len(im.batch) == 0 {
		return nil
	}
	tx := im.s.newTx(true)
	for _, pi := range im.batch {
		if err := tx.create(pi.pk, pi.it); err != nil {
			return fmt.Errorf("%s twice: %w", pi.pk, nextup.ErrConflict)
		}
	}
	var err error
	for attempt := 1; attempt <= MaxTxAttempts; attempt++ {
		if attempt > 1 {
			if werr := im.s.backoff(ctx, attempt-1); werr != nil {
				return fmt.Errorf("%w (after: %w)", werr, err)
			}
		}
		err = tx.commit(ctx)
		if pk := existing(err, tx.order); pk != "" {
			return fmt.Errorf("%s exists already: %w", pk, nextup.ErrConflict)
		}
		var retry *errRetry
		if !errors.As(err, &retry) {
			break
		}
	}
	if err != nil {
		return err
	}
	for _, pi := range im.batch {
		im.written = append(im.written, pi.pk)
	}
	im.batch, im.size = im.batch[:0], 0
	return nil
}

// existing is the key of an item a failed commit of creates (of pks, in
// the commit's order) found there already, or "".
func existing(err error, pks []string) string {
	var canceled *types.TransactionCanceledException
	if errors.As(err, &canceled) {
		for i, r := range canceled.CancellationReasons {
			if aws.ToString(r.Code) == "ConditionalCheckFailed" && i < len(pks) {
				return pks[i]
			}
		}
	}
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) && len(pks) == 1 {
		return pks[0]
	}
	return ""
}

// raise moves the counter at pk to at least n.
func (im *importer) raise(ctx context.Context, pk string, n int64) error {
	if n <= 0 {
		return nil
	}
	_, err := im.s.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &im.s.table,
		Key:                       key(pk),
		UpdateExpression:          aws.String("SET #n = :n"),
		ConditionExpression:       aws.String("attribute_not_exists(#n) OR #n < :n"),
		ExpressionAttributeNames:  map[string]string{"#n": "n"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil // past n already
	}
	return im.s.err("move counter "+pk+" past "+strconv.FormatInt(n, 10), err)
}

// undo deletes the items the import wrote, MaxTxActions to a transaction.
func (im *importer) undo(ctx context.Context) error {
	var left []string
	var errs []error
	for i := 0; i < len(im.written); i += MaxTxActions {
		chunk := im.written[i:min(i+MaxTxActions, len(im.written))]
		acts := make([]types.TransactWriteItem, len(chunk))
		for j, pk := range chunk {
			acts[j] = types.TransactWriteItem{Delete: &types.Delete{TableName: &im.s.table, Key: key(pk)}}
		}
		var err error
		for attempt := 1; attempt <= MaxTxAttempts; attempt++ {
			if attempt > 1 {
				if werr := im.s.backoff(ctx, attempt-1); werr != nil {
					break
				}
			}
			_, err = im.s.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: acts})
			var retry *errRetry
			if err == nil || !errors.As(im.s.commitErr(err), &retry) {
				break
			}
		}
		if err != nil {
			left = append(left, chunk...)
			errs = append(errs, err)
		}
	}
	im.written = nil
	if len(left) == 0 {
		return nil
	}
	return fmt.Errorf("%d of the items it wrote could not be deleted (%v): %w", len(left), left, errors.Join(errs...))
}
