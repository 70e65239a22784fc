package dynamo

import (
	"cmp"
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

// The real service's limits, kept here because an emulator may not keep
// them (doc.go, "Limits").
const (
	// MaxTxActions is the most actions one TransactWriteItems takes.
	MaxTxActions = 100
	// MaxTxBytes is the most one TransactWriteItems may carry.
	MaxTxBytes = 4 << 20
	// MaxItemBytes is the largest item the service stores.
	MaxItemBytes = 400 << 10
)

// ErrTooLarge is a transaction or an item over the service's limits: the
// transaction is not committed. A use case that can reach it splits its
// work into several transactions (doc.go, "Limits").
var ErrTooLarge = errors.New("dynamodb: over the service's limits")

// item is one item of the table, as the SDK carries it.
type item = map[string]types.AttributeValue

// version is an item's version attribute as the transaction read it: 0
// for an item that did not exist.
func version(it item) int64 {
	if it == nil {
		return 0
	}
	n, ok := it[attrVersion].(*types.AttributeValueMemberN)
	if !ok {
		return 0
	}
	v, _ := strconv.ParseInt(n.Value, 10, 64)
	return v
}

// read is what the transaction knows of an item as the table has it: the
// item (nil when absent) and whether the commit checks that it is still
// so (a point read inside InTx: the row "lock" of the SQL stores).
type read struct {
	it    item
	check bool
}

// write is a buffered change of an item: its new attributes, or nil to
// delete it. blind writes were not read first: the commit checks only
// that the item does not exist (a create with a fresh id).
type write struct {
	it    item
	blind bool
}

// undo is one entry of the savepoint journal: the buffered write of pk
// before a change (had says there was one).
type undo struct {
	pk  string
	w   write
	had bool
}

// Tx is one transaction over the table by optimistic concurrency: reads
// are strongly consistent reads of the base table, remembered with their
// versions; writes are buffered (later reads of the transaction see
// them); commit is one TransactWriteItems whose conditions check every
// version the function relied on. See doc.go, "Transactions".
type Tx struct {
	s     *Store
	write bool // InTx (false: Read)

	reads   map[string]*read  // by pk
	writes  map[string]*write // by pk
	order   []string          // pks of writes in first-write order
	journal []undo            // for savepoints
	sink    *Consumed         // consumed capacity, when measured
}

var _ nextup.Tx = (*Tx)(nil)

func (s *Store) newTx(rw bool) *Tx {
	return &Tx{s: s, write: rw, reads: map[string]*read{}, writes: map[string]*write{}, sink: s.consumed}
}

// Actions is how many actions the commit would take now: the buffered
// writes and the locked reads it checks (nextup.Sized).
func (t *Tx) Actions() int {
	n := 0
	for pk, w := range t.writes {
		_, read := t.reads[pk]
		if w.it != nil || read {
			n++
		}
	}
	for pk, r := range t.reads {
		if _, written := t.writes[pk]; r.check && !written {
			n++
		}
	}
	return n
}

var _ nextup.Sized = (*Tx)(nil)

// errReadOnly is a write inside Read.
var errReadOnly = errors.New("dynamodb: a write inside Read")

// get returns the item with this key as the transaction sees it: its own
// buffered write, else what it read before, else a strongly consistent
// read of the base table (remembered). The commit checks the version only
// of items the transaction writes or locks (lock).
func (t *Tx) get(ctx context.Context, pk string) (item, error) {
	return t.read(ctx, pk, false)
}

// lock is get, and the commit also checks that the item is still as read
// (inside InTx): what SlotGet and EntryGet promise, the row lock of the
// SQL stores. A transaction that only reads an item it locked still fails
// to commit, and runs again, when another one changed it meanwhile.
func (t *Tx) lock(ctx context.Context, pk string) (item, error) {
	return t.read(ctx, pk, t.write)
}

func (t *Tx) read(ctx context.Context, pk string, check bool) (item, error) {
	if w, ok := t.writes[pk]; ok {
		if r, ok := t.reads[pk]; ok && check {
			r.check = true
		}
		return w.it, nil
	}
	if r, ok := t.reads[pk]; ok {
		r.check = r.check || check
		return r.it, nil
	}
	out, err := t.s.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:              &t.s.table,
		Key:                    key(pk),
		ConsistentRead:         aws.Bool(true),
		ReturnConsumedCapacity: t.s.rcc(),
	})
	if err != nil {
		return nil, t.s.err("get "+pk, err)
	}
	t.sink.add("GetItem", out.ConsumedCapacity)
	t.reads[pk] = &read{it: out.Item, check: check}
	return out.Item, nil
}

// put buffers the new attributes of an item the transaction has read (or
// found absent); its commit checks the version it read.
func (t *Tx) put(pk string, it item) error {
	if !t.write {
		return errReadOnly
	}
	it[attrPK] = &types.AttributeValueMemberS{Value: pk}
	t.buffer(pk, write{it: it})
	return nil
}

// create buffers a new item whose key is fresh (a new random id): it is
// not read first, and the commit fails when the item exists after all.
func (t *Tx) create(pk string, it item) error {
	if !t.write {
		return errReadOnly
	}
	it[attrPK] = &types.AttributeValueMemberS{Value: pk}
	if _, read := t.reads[pk]; read {
		t.buffer(pk, write{it: it})
		return nil
	}
	if w, ok := t.writes[pk]; ok && w.it != nil {
		return fmt.Errorf("create %s: %w", pk, nextup.ErrConflict)
	}
	t.buffer(pk, write{it: it, blind: true})
	return nil
}

// del buffers the deletion of an item the transaction has read.
func (t *Tx) del(pk string) error {
	if !t.write {
		return errReadOnly
	}
	t.buffer(pk, write{})
	return nil
}

func (t *Tx) buffer(pk string, w write) {
	old, had := t.writes[pk]
	u := undo{pk: pk, had: had}
	if had {
		u.w = *old
		if old.blind {
			w.blind = true // still not in the table: nothing to delete or check
		}
	} else {
		t.order = append(t.order, pk)
	}
	t.journal = append(t.journal, u)
	t.writes[pk] = &w
}

// Savepoint runs fn so that the writes it buffers are dropped when it
// fails or panics. Reads stay remembered: what fn read still counts at
// commit, which can only make the commit stricter.
//
// When fn fails and an item the transaction read has changed since, the
// failure may come from reads made at different moments (see failed):
// Savepoint then reports the transaction broken (nextup.ErrTxBroken), and
// InTx runs it again.
func (t *Tx) Savepoint(ctx context.Context, fn func() error) (err error) {
	mark := len(t.journal)
	rollback := func() {
		for i := len(t.journal) - 1; i >= mark; i-- {
			u := t.journal[i]
			if u.had {
				w := u.w
				t.writes[u.pk] = &w
			} else {
				delete(t.writes, u.pk)
			}
		}
		t.journal = t.journal[:mark]
		t.order = slices.DeleteFunc(t.order, func(pk string) bool { _, ok := t.writes[pk]; return !ok })
	}
	defer func() {
		if v := recover(); v != nil {
			rollback()
			panic(v)
		}
	}()
	if err := fn(); err != nil {
		rollback()
		return t.failed(ctx, err)
	}
	return nil
}

// failed is err, the error of a function (or of a part of it) that ran in
// t; or, when an item t read has changed since, a retry: the reads of an
// optimistic transaction are made at different moments, so a function
// can fail on a state that never was (an offer read as still offered, its
// booking then found made) — a row lock would have kept that from it.
// Then the error is not the function's to report: the transaction is
// broken (nextup.ErrTxBroken, which a request takes as the end of its
// phase) and InTx runs it again on fresh reads, where it fails again or
// not, truly. Costs nothing unless the function failed.
func (t *Tx) failed(ctx context.Context, err error) error {
	var retry *errRetry
	if err == nil || errors.As(err, &retry) || ctx.Err() != nil || len(t.reads) == 0 {
		return err
	}
	pks := make([]string, 0, len(t.reads))
	for pk := range t.reads {
		pks = append(pks, pk)
	}
	slices.Sort(pks)
	now, verr := t.reread(ctx, pks)
	if verr != nil {
		return err
	}
	for _, pk := range pks {
		if version(now[pk]) != version(t.reads[pk].it) {
			return &errRetry{err: fmt.Errorf("%w: %s changed under a function that failed with: %w", nextup.ErrTxBroken, pk, err), fn: err}
		}
	}
	return err
}

// reread reads the versions of the items with these keys from the base
// table again (strongly consistent), without remembering them.
func (t *Tx) reread(ctx context.Context, pks []string) (map[string]item, error) {
	return t.batchGet(ctx, pks, true)
}

// batchGet reads the items with these keys from the base table (strongly
// consistent), 100 keys to a BatchGetItem, asking again for the keys the
// service left unprocessed; versionOnly reads only their keys and
// versions. Items that do not exist are absent from the map.
func (t *Tx) batchGet(ctx context.Context, pks []string, versionOnly bool) (map[string]item, error) {
	got := map[string]item{}
	for chunk := range slices.Chunk(pks, 100) {
		keys := make([]map[string]types.AttributeValue, 0, len(chunk))
		for _, pk := range chunk {
			keys = append(keys, key(pk))
		}
		ka := types.KeysAndAttributes{Keys: keys, ConsistentRead: aws.Bool(true)}
		if versionOnly {
			ka.ProjectionExpression = aws.String("#k, #v")
			ka.ExpressionAttributeNames = map[string]string{"#k": attrPK, "#v": attrVersion}
		}
		req := map[string]types.KeysAndAttributes{t.s.table: ka}
		for tries := 0; len(req) > 0; tries++ {
			if tries > 0 {
				if err := t.s.backoff(ctx, tries); err != nil {
					return nil, err
				}
			}
			if tries > 20 {
				return nil, fmt.Errorf("dynamodb: batch get: %d keys unprocessed after %d tries", len(req[t.s.table].Keys), tries)
			}
			out, err := t.s.api.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req, ReturnConsumedCapacity: t.s.rcc()})
			if err != nil {
				return nil, t.s.err("batch get", err)
			}
			for _, c := range out.ConsumedCapacity {
				t.sink.add("BatchGetItem", &c)
			}
			for _, it := range out.Responses[t.s.table] {
				got[str(it, attrPK)] = it
			}
			req = out.UnprocessedKeys
		}
	}
	return got, nil
}

// errRetry is a commit that lost to another transaction (or was
// throttled): InTx runs the function again.
type errRetry struct {
	err error
	fn  error // the function's own error, when a stale read made it doubtful (failed)
}

func (e *errRetry) Error() string { return "dynamodb: transaction conflict: " + e.err.Error() }
func (e *errRetry) Unwrap() error { return e.err }

// commit writes the buffered changes in one TransactWriteItems whose
// conditions check every version the transaction relied on. A transaction
// that wrote nothing commits without a call (a read-only transaction's
// reads were each consistent, and nothing depends on them). One write and
// nothing else to check is one conditional PutItem or DeleteItem (half
// the price of a transaction).
func (t *Tx) commit(ctx context.Context) error {
	var acts []types.TransactWriteItem
	size := 0
	token, err := requestToken()
	if err != nil {
		return err
	}
	for _, pk := range t.order {
		w := t.writes[pk]
		if w == nil {
			continue
		}
		var base int64
		if r, ok := t.reads[pk]; ok {
			base = version(r.it)
		}
		cond, vals := versionCond(base, w.blind)
		switch {
		case w.it == nil && base == 0 && !w.blind:
			// Read as absent, deleted: check it is still absent.
			acts = append(acts, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
				TableName: &t.s.table, Key: key(pk), ConditionExpression: &cond, ExpressionAttributeNames: vNames,
			}})
		case w.it == nil && base == 0:
			// Created and deleted again by this transaction: nothing.
			continue
		case w.it == nil:
			acts = append(acts, types.TransactWriteItem{Delete: &types.Delete{
				TableName: &t.s.table, Key: key(pk), ConditionExpression: &cond,
				ExpressionAttributeNames: vNames, ExpressionAttributeValues: vals,
			}})
		default:
			it := maps(w.it)
			it[attrVersion] = &types.AttributeValueMemberN{Value: strconv.FormatInt(base+1, 10)}
			it[attrWriter] = &types.AttributeValueMemberS{Value: token}
			n := itemSize(it)
			if n > MaxItemBytes {
				return fmt.Errorf("%w: item %s is %d bytes, more than %d", ErrTooLarge, pk, n, MaxItemBytes)
			}
			size += n
			acts = append(acts, types.TransactWriteItem{Put: &types.Put{
				TableName: &t.s.table, Item: it, ConditionExpression: &cond,
				ExpressionAttributeNames: vNames, ExpressionAttributeValues: vals,
			}})
		}
	}
	writes := len(acts)
	if writes == 0 {
		return nil
	}
	checked := make([]string, 0, len(t.reads))
	for pk, r := range t.reads {
		if _, written := t.writes[pk]; !written && r.check {
			checked = append(checked, pk)
		}
	}
	slices.Sort(checked)
	for _, pk := range checked {
		cond, vals := versionCond(version(t.reads[pk].it), false)
		acts = append(acts, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
			TableName: &t.s.table, Key: key(pk), ConditionExpression: &cond,
			ExpressionAttributeNames: vNames, ExpressionAttributeValues: vals,
		}})
	}
	if len(acts) > MaxTxActions {
		return fmt.Errorf("%w: %d actions (%d writes, %d checks), more than %d", ErrTooLarge, len(acts), writes, len(acts)-writes, MaxTxActions)
	}
	if size > MaxTxBytes {
		return fmt.Errorf("%w: %d bytes, more than %d", ErrTooLarge, size, MaxTxBytes)
	}
	if len(acts) == 1 {
		return t.commitOne(ctx, acts[0], token)
	}
	in := &dynamodb.TransactWriteItemsInput{
		TransactItems:          acts,
		ClientRequestToken:     &token,
		ReturnConsumedCapacity: t.s.rcc(),
	}
	out, err := t.s.api.TransactWriteItems(ctx, in)
	for tries := 1; inProgress(err) && tries <= 10; tries++ {
		// The service is still applying this very call (the SDK's
		// retry of it met the first attempt): its outcome is unknown,
		// so the function must not run again. The same call, with the
		// same token, is answered with that outcome once it is known.
		if berr := t.s.backoff(ctx, tries); berr != nil {
			return berr
		}
		out, err = t.s.api.TransactWriteItems(ctx, in)
	}
	if err != nil {
		if inProgress(err) {
			return fmt.Errorf("dynamodb: commit: the outcome is still unknown after retries: %w", err)
		}
		return t.s.commitErr(err)
	}
	for _, c := range out.ConsumedCapacity {
		t.sink.add("TransactWriteItems", &c)
	}
	return nil
}

// commitOne writes a transaction of one action with the single-item call
// of the same condition.
func (t *Tx) commitOne(ctx context.Context, a types.TransactWriteItem, token string) error {
	var (
		c   *types.ConsumedCapacity
		err error
	)
	switch {
	case a.Put != nil:
		var out *dynamodb.PutItemOutput
		out, err = t.s.api.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: a.Put.TableName, Item: a.Put.Item, ConditionExpression: a.Put.ConditionExpression,
			ExpressionAttributeNames: a.Put.ExpressionAttributeNames, ExpressionAttributeValues: a.Put.ExpressionAttributeValues,
			ReturnConsumedCapacity:              t.s.rcc(),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		if out != nil {
			c = out.ConsumedCapacity
		}
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) && ccf.Item != nil && str(ccf.Item, attrWriter) == token {
			// The item is this commit's own write (its token): the SDK's
			// retry of a call that succeeded, its answer lost.
			err = nil
		}
	case a.Delete != nil:
		var out *dynamodb.DeleteItemOutput
		out, err = t.s.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: a.Delete.TableName, Key: a.Delete.Key, ConditionExpression: a.Delete.ConditionExpression,
			ExpressionAttributeNames: a.Delete.ExpressionAttributeNames, ExpressionAttributeValues: a.Delete.ExpressionAttributeValues,
			ReturnConsumedCapacity:              t.s.rcc(),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		if out != nil {
			c = out.ConsumedCapacity
		}

	default:
		return nil // a lone check of an item read as absent and "deleted"
	}
	if err != nil {
		return t.s.commitErr(err)
	}
	t.sink.add("commit", c)
	return nil
}

// inProgress reports the service's answer to a transaction retried with
// its token while the first attempt is still being applied.
func inProgress(err error) bool {
	var tip *types.TransactionInProgressException
	return errors.As(err, &tip)
}

// versionCond is the condition that an item still has the version base (0:
// does not exist).
func versionCond(base int64, blind bool) (string, map[string]types.AttributeValue) {
	if base == 0 || blind {
		return "attribute_not_exists(#v)", nil
	}
	return "#v = :v", map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.FormatInt(base, 10)}}
}

var vNames = map[string]string{"#v": attrVersion}

// maps copies an item (the buffered one stays as the transaction sees it).
func maps(it item) item {
	out := make(item, len(it)+1)
	for k, v := range it {
		out[k] = v
	}
	return out
}

// itemSize is an item's size as the service counts it: the lengths of the
// attribute names and values (doc.go, "Limits").
func itemSize(it item) int {
	n := 0
	for k, v := range it {
		n += len(k) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return len(v.Value)/2 + 2
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += valueSize(e) + 1
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += len(k) + valueSize(e) + 1
		}
		return n
	case *types.AttributeValueMemberSS:
		n := 0
		for _, e := range v.Value {
			n += len(e)
		}
		return n
	}
	return 0
}

// ---------------------------------------------------------------- queries

// query reads items through a global secondary index: the items whose
// partition attribute (gNpk) is part, with a sort attribute (gNsk) in
// [from, to) (empty bounds are open) and that keep, in the order of the
// sort attribute (then the key). Each hit of the (eventually consistent)
// index is read again from the base table and checked again before it is
// used, and the transaction's own buffered writes are laid over the
// result. limit <= 0 is no limit.
type query struct {
	index    string // "gsi1" … "gsi5"
	part     string
	from, to string
	desc     bool
	limit    int
	keep     func(item) bool // nil keeps every item of the range
}

// empty says q's range holds nothing (from at or past to): the service
// refuses such a BETWEEN.
func (q query) empty() bool { return q.from != "" && q.to != "" && q.from >= q.to }

func (q query) member(it item) bool {
	if it == nil || str(it, q.index+"pk") != partValue(q.part) {
		return false
	}
	sk, ok := it[q.index+"sk"].(*types.AttributeValueMemberS)
	if !ok {
		return false
	}
	if q.from != "" && sk.Value < q.from {
		return false
	}
	if q.to != "" && sk.Value >= q.to {
		return false
	}
	return q.keep == nil || q.keep(it)
}

func (q query) less(a, b item) int {
	c := cmp.Or(cmp.Compare(str(a, q.index+"sk"), str(b, q.index+"sk")), cmp.Compare(str(a, attrPK), str(b, attrPK)))
	if q.desc {
		return -c
	}
	return c
}

// query runs q: see type query.
func (t *Tx) query(ctx context.Context, q query) ([]item, error) {
	if q.empty() {
		return nil, nil
	}
	want := 0
	if q.limit > 0 {
		// The buffered writes can take items out of the result: read
		// enough to stand that.
		want = q.limit + len(t.writes)
	}
	seen := map[string]bool{}
	var out []item
	var start item
	for {
		keys, next, err := t.indexPage(ctx, q, start)
		if err != nil {
			return nil, err
		}
		its, err := t.fetch(ctx, keys)
		if err != nil {
			return nil, err
		}
		for _, it := range its {
			pk := str(it, attrPK)
			if seen[pk] {
				continue // moved to a later page while the pages were read
			}
			seen[pk] = true
			if q.member(it) {
				out = append(out, it)
			}
		}
		start = next
		if start == nil || (want > 0 && len(out) >= want) {
			break
		}
	}
	// The transaction's own writes: in the result where they belong.
	for _, pk := range t.order {
		w := t.writes[pk]
		if w == nil || seen[pk] || !q.member(w.it) {
			continue
		}
		out = append(out, w.it)
	}
	// When the pages stopped early they hold at least limit items the
	// writes did not take away, all sorting before any item not read:
	// a written item laid in past them is cut with the rest.
	slices.SortFunc(out, q.less)
	if q.limit > 0 && len(out) > q.limit {
		out = out[:q.limit]
	}
	return out, nil
}

// indexPage reads one page of keys from q's index.
func (t *Tx) indexPage(ctx context.Context, q query, start item) ([]string, item, error) {
	cond := "#p = :p"
	names := map[string]string{"#p": q.index + "pk"}
	vals := map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: partValue(q.part)}}
	switch {
	case q.from != "" && q.to != "":
		cond += " AND #s BETWEEN :f AND :t"
		vals[":f"] = &types.AttributeValueMemberS{Value: q.from}
		vals[":t"] = &types.AttributeValueMemberS{Value: q.to}
	case q.from != "":
		cond += " AND #s >= :f"
		vals[":f"] = &types.AttributeValueMemberS{Value: q.from}
	case q.to != "":
		cond += " AND #s < :t"
		vals[":t"] = &types.AttributeValueMemberS{Value: q.to}
	}
	if q.from != "" || q.to != "" {
		names["#s"] = q.index + "sk"
	}
	in := &dynamodb.QueryInput{
		TableName:                 &t.s.table,
		IndexName:                 aws.String(q.index),
		KeyConditionExpression:    &cond,
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: vals,
		ScanIndexForward:          aws.Bool(!q.desc),
		ExclusiveStartKey:         start,
		ReturnConsumedCapacity:    t.s.rcc(),
	}
	if q.limit > 0 {
		in.Limit = aws.Int32(int32(min(q.limit+len(t.writes)+8, 1000)))
	}
	out, err := t.s.api.Query(ctx, in)
	if err != nil {
		return nil, nil, t.s.err("query "+q.index+" "+q.part, err)
	}
	t.sink.add("Query", out.ConsumedCapacity)
	keys := make([]string, 0, len(out.Items))
	for _, it := range out.Items {
		keys = append(keys, str(it, attrPK))
	}
	return keys, out.LastEvaluatedKey, nil
}

// fetch returns the transaction's view of the items with these keys, in
// this order, reading the ones it does not know with strongly consistent
// BatchGetItem calls (100 keys each); items that are gone are left out.
func (t *Tx) fetch(ctx context.Context, pks []string) ([]item, error) {
	var missing []string
	asked := map[string]bool{}
	for _, pk := range pks {
		_, w := t.writes[pk]
		_, r := t.reads[pk]
		if !w && !r && !asked[pk] { // a key twice in one BatchGetItem is refused
			missing = append(missing, pk)
			asked[pk] = true
		}
	}
	got, err := t.batchGet(ctx, missing, false)
	if err != nil {
		return nil, err
	}
	out := make([]item, 0, len(pks))
	for _, pk := range pks {
		if w, ok := t.writes[pk]; ok {
			if w.it != nil {
				out = append(out, w.it)
			}
			continue
		}
		if r, ok := t.reads[pk]; ok {
			if r.it != nil {
				out = append(out, r.it)
			}
			continue
		}
		it := got[pk]
		t.reads[pk] = &read{it: it} // nil: gone since the index saw it
		if it != nil {
			out = append(out, it)
		}
	}
	return out, nil
}

// count counts the items of q (q.keep must be nil: the index's keys say
// it) with a COUNT query of the index, corrected by the transaction's
// own buffered writes.
func (t *Tx) count(ctx context.Context, q query) (int, error) {
	if q.empty() {
		return 0, nil
	}
	n := 0
	var start item
	for {
		cond := "#p = :p"
		names := map[string]string{"#p": q.index + "pk"}
		vals := map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: partValue(q.part)}}
		if q.from != "" {
			cond += " AND #s >= :f"
			vals[":f"] = &types.AttributeValueMemberS{Value: q.from}
			names["#s"] = q.index + "sk"
		}
		if q.to != "" {
			if q.from != "" {
				cond = "#p = :p AND #s BETWEEN :f AND :t"
			} else {
				cond += " AND #s < :t"
			}
			vals[":t"] = &types.AttributeValueMemberS{Value: q.to}
			names["#s"] = q.index + "sk"
		}
		out, err := t.s.api.Query(ctx, &dynamodb.QueryInput{
			TableName: &t.s.table, IndexName: aws.String(q.index), KeyConditionExpression: &cond,
			ExpressionAttributeNames: names, ExpressionAttributeValues: vals,
			Select: types.SelectCount, ExclusiveStartKey: start, ReturnConsumedCapacity: t.s.rcc(),
		})
		if err != nil {
			return 0, t.s.err("count "+q.index+" "+q.part, err)
		}
		t.sink.add("Query", out.ConsumedCapacity)
		// BETWEEN includes its upper bound, which q's range does not:
		// callers' bounds are never an item's whole sort key (those end
		// in an id).
		n += int(out.Count)
		start = out.LastEvaluatedKey
		if start == nil {
			break
		}
	}
	for _, pk := range t.order {
		w := t.writes[pk]
		var was item
		if r, ok := t.reads[pk]; ok {
			was = r.it
		}
		if q.member(was) {
			n--
		}
		if q.member(w.it) {
			n++
		}
	}
	return max(n, 0), nil
}
