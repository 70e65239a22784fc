package dynamo

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nextup-dev/nextup"
)

// An audit event is the item audit#R, R its rid() (the event's ID is R as
// a number: increasing in insertion order, as the SQL stores' identity).
// Events are only ever created (blind, no read). Indexes, all sorted by R:
//
//	g1 audit#BID               every event of a business
//	g2 auditslot#SLOT          the events of a slot (slots ids are unique)
//	g3 auditsub#TYPE#ID        the events of a subject (filtered by business)
//
// AuditList reads one partition: the slot's when a slot is named, else the
// subject's when a subject type and id are, else the business's. It reads
// each event of it (up to the limit) again from the table.
//
// A message is the item msg#ID; R is its rid() at creation, kept as the
// suffix of its g1 sort key, and C is ts(CreatedAt)#R. Indexes:
//
//	g1 msg#BID           C                     a business's messages
//	g2 msgto#BID#TO      C                     a business's messages to one address
//	g3 msgoff#OFFER      C                     an offer's messages (none without an offer)
//	g4 msgdue            ts(D)#ts(NAA)#C       queued or failed messages only (sparse), D
//	                                           the latest of NotBefore, NextAttemptAt and
//	                                           the lease's end: due at now iff D <= now
//	g5 msgst#STATE       BID#C#CHANNEL         every message, by state
//
// MessageGet, MessageFinish, MessageRequeue and MessageUndelivered are one
// GetItem. MessageList reads one partition, newest first: the offer's when
// an offer is named, else the address's when one is, else the state's
// range of the business when a state is, else the business's; the other
// filters are checked on the items read. MessageCancelByOffer reads the
// offer's partition. MessageCounts reads only index keys: for each of the
// five states, the business's range of g5 (its messages' keys, not
// items), or for the whole store (businessID "") all of g5 (the keys of
// every message ever kept: no Scan of the table, but its cost grows with
// the outbox). MessageClaimDue reads the keys of g4 up to now (the
// messages due and not leased: the backlog, normally a few), orders them
// as the SQL stores do (NextAttemptAt, CreatedAt, insertion) from their
// sort keys, and reads again from the table only as many as it leases;
// leasing moves a message's D to the lease's end, out of the range, until
// the lease lapses. g4 and g5 are partitions of the whole store: each
// message write is one write to each (a hot partition past ~1000 message
// writes a second). MessageClaim, which leases one message by its id, is
// one GetItem too.
//
// A suppression is the item sup#BID#CHANNEL#ADDRESS, in no index:
// SuppressionList reads, for each address, one key per channel nextup has
// (email, sms, webhook, capture), 100 keys to a BatchGetItem; a
// suppression of another channel is kept but never listed.

// ---------------------------------------------------------------- audit

func auditPK(r string) string { return "audit#" + r }

// AuditAppend appends an event; its ID is assigned here, increasing in
// insertion order.
func (t *Tx) AuditAppend(ctx context.Context, ev nextup.AuditEvent) error {
	r := rid()
	id, err := strconv.ParseInt(r, 10, 64)
	if err != nil {
		return fmt.Errorf("dynamodb: append audit %s %s: id %q: %w", ev.SubjectType, ev.SubjectID, r, err)
	}
	ev.ID = id
	it, err := auditItem(ev)
	if err != nil {
		return err
	}
	return t.create(auditPK(r), it)
}

// auditItem is the item of an event whose ID is set (its R is
// seqKey(ID)).
func auditItem(ev nextup.AuditEvent) (item, error) {
	r := seqKey(ev.ID)
	var slot, subject string
	if ev.SlotID != "" {
		slot = "auditslot#" + ev.SlotID
	}
	if ev.SubjectType != "" || ev.SubjectID != "" {
		subject = "auditsub#" + ev.SubjectType + "#" + ev.SubjectID
	}
	return newItem(ev, "gsi1pk", "audit#"+ev.BusinessID, "gsi1sk", r,
		"gsi2pk", slot, "gsi2sk", r, "gsi3pk", subject, "gsi3sk", r)
}

// AuditList lists events oldest first, through the slot's, the subject's
// or the business's partition.
func (t *Tx) AuditList(ctx context.Context, f nextup.AuditFilter) ([]nextup.AuditEvent, error) {
	q := query{limit: max(f.Limit, 0)}
	switch {
	case f.SlotID != "":
		q.index, q.part = "gsi2", "auditslot#"+f.SlotID
	case f.SubjectType != "" && f.SubjectID != "":
		q.index, q.part = "gsi3", "auditsub#"+f.SubjectType+"#"+f.SubjectID
	case f.BusinessID != "":
		q.index, q.part = "gsi1", "audit#"+f.BusinessID
	default:
		return nil, fmt.Errorf("dynamodb: list audit: name a business, a slot or a subject: %w", nextup.ErrInvalid)
	}
	q.keep = func(it item) bool {
		var ev nextup.AuditEvent
		return decode(it, &ev) == nil &&
			(f.BusinessID == "" || ev.BusinessID == f.BusinessID) &&
			(f.SlotID == "" || ev.SlotID == f.SlotID) &&
			(f.SubjectType == "" || ev.SubjectType == f.SubjectType) &&
			(f.SubjectID == "" || ev.SubjectID == f.SubjectID) &&
			(f.Since.IsZero() || !ev.At.Before(f.Since)) &&
			(f.Until.IsZero() || ev.At.Before(f.Until))
	}
	if f.AfterID > 0 {
		// The sort key of every audit index is the row's ID.
		q.from = seqKey(f.AfterID + 1)
	}
	its, err := t.query(ctx, q)
	if err != nil {
		return nil, err
	}
	return loadAll[nextup.AuditEvent](its)
}

// ---------------------------------------------------------------- messages

func msgPK(id string) string { return "msg#" + id }

// msgStates are the states a message can be in (MessageCounts reads one
// g5 partition each).
var msgStates = []nextup.MessageState{nextup.MessageQueued, nextup.MessageSent, nextup.MessageFailed,
	nextup.MessageDead, nextup.MessageCancelled}

// msgItem is the item of m, whose insertion key is r.
func msgItem(m nextup.Message, r string) (item, error) {
	c := ts(m.CreatedAt) + "#" + r
	var to, offer, due, dueSK string
	if m.To != "" {
		to = "msgto#" + m.BusinessID + "#" + m.To
	}
	if m.OfferID != "" {
		offer = "msgoff#" + m.OfferID
	}
	if m.State == nextup.MessageQueued || m.State == nextup.MessageFailed {
		d := m.NotBefore
		if m.NextAttemptAt.After(d) {
			d = m.NextAttemptAt
		}
		if m.ClaimedUntil != nil && m.ClaimedUntil.After(d) {
			d = *m.ClaimedUntil
		}
		due, dueSK = "msgdue", ts(d)+"#"+ts(m.NextAttemptAt)+"#"+c
	}
	return newItem(m, "gsi1pk", "msg#"+m.BusinessID, "gsi1sk", c,
		"gsi2pk", to, "gsi2sk", c,
		"gsi3pk", offer, "gsi3sk", c,
		"gsi4pk", due, "gsi4sk", dueSK,
		"gsi5pk", "msgst#"+string(m.State), "gsi5sk", m.BusinessID+"#"+c+"#"+string(m.Channel))
}

// msgRID is the insertion key of a message's item.
func msgRID(it item) string {
	sk := str(it, "gsi1sk")
	return sk[strings.LastIndexByte(sk, '#')+1:]
}

// putMsg buffers the new version of a message whose item was old.
func (t *Tx) putMsg(old item, m nextup.Message) error {
	it, err := msgItem(m, msgRID(old))
	if err != nil {
		return err
	}
	return t.put(msgPK(m.ID), it)
}

// loadMsg reads a message and its item.
func (t *Tx) loadMsg(ctx context.Context, id, what string) (nextup.Message, item, error) {
	var m nextup.Message
	it, err := t.get(ctx, msgPK(id))
	if err != nil {
		return m, nil, err
	}
	if it == nil {
		return m, nil, notFound(what)
	}
	return m, it, decode(it, &m)
}

// MessageCreate queues an outbox message, queued unless m says otherwise;
// an id that exists is ErrConflict.
func (t *Tx) MessageCreate(ctx context.Context, m nextup.Message) error {
	what := "create message " + m.ID
	if m.State == "" {
		m.State = nextup.MessageQueued
	}
	if ok, err := t.exists(ctx, msgPK(m.ID)); err != nil || ok {
		return cmpErr(err, conflict(what))
	}
	it, err := msgItem(m, rid())
	if err != nil {
		return err
	}
	return t.put(msgPK(m.ID), it)
}

// MessageGet reads an outbox message.
func (t *Tx) MessageGet(ctx context.Context, id string) (nextup.Message, error) {
	return load[nextup.Message](ctx, t, msgPK(id), "get message "+id)
}

// MessageList lists outbox messages newest first, through the narrowest
// partition the filter names.
func (t *Tx) MessageList(ctx context.Context, f nextup.MessageFilter) ([]nextup.Message, error) {
	q := query{desc: true, limit: max(f.Limit, 0)}
	switch {
	case f.OfferID != "":
		q.index, q.part = "gsi3", "msgoff#"+f.OfferID
	case f.BusinessID == "":
		return nil, fmt.Errorf("dynamodb: list messages: name a business or an offer: %w", nextup.ErrInvalid)
	case f.To != "":
		q.index, q.part = "gsi2", "msgto#"+f.BusinessID+"#"+f.To
	case f.State != "":
		// The business's range of the state's partition: BID#… .
		q.index, q.part, q.from, q.to = "gsi5", "msgst#"+string(f.State), f.BusinessID+"#", f.BusinessID+"$"
	default:
		q.index, q.part = "gsi1", "msg#"+f.BusinessID
		// Its sort key begins with the message's CreatedAt.
		if !f.Since.IsZero() {
			q.from = ts(f.Since)
		}
		if !f.Until.IsZero() {
			q.to = ts(f.Until)
		}
		if q.empty() {
			return nil, nil
		}
	}
	q.keep = func(it item) bool {
		var m nextup.Message
		return decode(it, &m) == nil &&
			(f.BusinessID == "" || m.BusinessID == f.BusinessID) &&
			(f.To == "" || m.To == f.To) &&
			(f.State == "" || m.State == f.State) &&
			(f.OfferID == "" || m.OfferID == f.OfferID) &&
			(f.Since.IsZero() || !m.CreatedAt.Before(f.Since)) &&
			(f.Until.IsZero() || m.CreatedAt.Before(f.Until))
	}
	its, err := t.query(ctx, q)
	if err != nil {
		return nil, err
	}
	return loadAll[nextup.Message](its)
}

// MessageCounts counts a business's messages (every business's, for "")
// by channel and state, from the keys of g5.
func (t *Tx) MessageCounts(ctx context.Context, businessID string) (map[nextup.Channel]map[nextup.MessageState]int, error) {
	prefix := ""
	if businessID != "" {
		prefix = businessID + "#"
	}
	out := map[nextup.Channel]map[nextup.MessageState]int{}
	add := func(st nextup.MessageState, sk string, n int) {
		ch := nextup.Channel(sk[strings.LastIndexByte(sk, '#')+1:])
		if out[ch] == nil {
			out[ch] = map[nextup.MessageState]int{}
		}
		out[ch][st] += n
	}
	for _, st := range msgStates {
		part := "msgst#" + string(st)
		keys, err := t.msgKeys(ctx, "gsi5", part, "begins_with", prefix)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if _, written := t.writes[str(k, attrPK)]; !written {
				add(st, str(k, "gsi5sk"), 1)
			}
		}
		// The transaction's own writes, as they will be.
		for _, pk := range t.order {
			if w := t.writes[pk]; w != nil && w.it != nil && str(w.it, "gsi5pk") == part && strings.HasPrefix(str(w.it, "gsi5sk"), prefix) {
				add(st, str(w.it, "gsi5sk"), 1)
			}
		}
	}
	for ch, m := range out {
		for st, n := range m {
			if n <= 0 {
				delete(m, st)
			}
		}
		if len(m) == 0 {
			delete(out, ch)
		}
	}
	return out, nil
}

// MessageClaimDue leases up to limit queued or failed messages due at now
// and not leased, until now+lease, in the SQL stores' order: NextAttemptAt,
// CreatedAt, insertion. Concurrent claims of one message conflict at
// commit: the loser runs again.
func (t *Tx) MessageClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]nextup.Message, error) {
	if !t.write {
		return nil, errReadOnly
	}
	until := now.Add(lease)
	bound := ts(now) + "$" // every ts(D)#… with D <= now sorts below
	in := func(it item) bool {
		return it != nil && str(it, "gsi4pk") == "msgdue" && str(it, "gsi4sk") < bound
	}
	// The keys of the due range, with the transaction's own writes laid
	// in, ordered by what follows ts(D): ts(NAA)#ts(CreatedAt)#R.
	keys, err := t.msgKeys(ctx, "gsi4", "msgdue", "<", bound)
	if err != nil {
		return nil, err
	}
	keys = slices.DeleteFunc(keys, func(k item) bool { _, written := t.writes[str(k, attrPK)]; return written })
	for _, pk := range t.order {
		if w := t.writes[pk]; w != nil && in(w.it) {
			keys = append(keys, w.it)
		}
	}
	order := func(k item) string { sk := str(k, "gsi4sk"); return sk[min(len(sk), strings.IndexByte(sk, '#')+1):] }
	slices.SortFunc(keys, func(a, b item) int {
		return cmp.Or(cmp.Compare(order(a), order(b)), cmp.Compare(str(a, attrPK), str(b, attrPK)))
	})
	var out []nextup.Message
	for len(keys) > 0 && (limit <= 0 || len(out) < limit) {
		// Read again from the table as many as are still wanted (an
		// index entry can be behind its item: the item decides).
		n := len(keys)
		if limit > 0 {
			n = min(n, limit-len(out)+2)
		}
		pks := make([]string, n)
		for i, k := range keys[:n] {
			pks[i] = str(k, attrPK)
		}
		keys = keys[n:]
		its, err := t.fetch(ctx, pks)
		if err != nil {
			return nil, err
		}
		for _, it := range its {
			if limit > 0 && len(out) >= limit {
				break
			}
			var m nextup.Message
			if !in(it) {
				continue
			}
			if err := decode(it, &m); err != nil {
				return nil, err
			}
			if msgUnclaimable(m, now) != "" {
				continue
			}
			m.ClaimedUntil = &until
			if err := t.putMsg(it, m); err != nil {
				return nil, err
			}
			out = append(out, m)
		}
	}
	// fetch keeps the order of the keys, which is the order wanted; a
	// stable sort by the SQL stores' comparison changes nothing but
	// states it.
	slices.SortStableFunc(out, func(a, b nextup.Message) int {
		return cmp.Or(a.NextAttemptAt.Compare(b.NextAttemptAt), a.CreatedAt.Compare(b.CreatedAt))
	})
	return out, nil
}

// MessageClaim leases one message, as MessageClaimDue would have, until
// now+lease. Two claims of one message both read it unleased and both
// buffer a lease; the commit of the second fails on the version the first
// changed, and InTx runs it again: then it reads the first one's lease
// and is ErrConflict, so the message is leased once.
func (t *Tx) MessageClaim(ctx context.Context, id string, now time.Time, lease time.Duration) (nextup.Message, error) {
	what := "claim message " + id
	if !t.write {
		return nextup.Message{}, errReadOnly
	}
	m, it, err := t.loadMsg(ctx, id, what)
	if err != nil {
		return nextup.Message{}, err
	}
	if why := msgUnclaimable(m, now); why != "" {
		return nextup.Message{}, conflict(what + ": " + why)
	}
	until := now.Add(lease)
	m.ClaimedUntil = &until
	if err := t.putMsg(it, m); err != nil {
		return nextup.Message{}, err
	}
	return m, nil
}

// msgUnclaimable says why m may not be claimed at now ("it is sent",
// "leased until …", "not due until …"), or "" when it may: the condition
// MessageClaimDue and MessageClaim share, in words.
func msgUnclaimable(m nextup.Message, now time.Time) string {
	switch {
	case m.State != nextup.MessageQueued && m.State != nextup.MessageFailed:
		return "it is " + string(m.State)
	case m.ClaimedUntil != nil && m.ClaimedUntil.After(now):
		return "leased until " + m.ClaimedUntil.Format(time.RFC3339Nano)
	case m.NotBefore.After(now) || m.NextAttemptAt.After(now):
		due := m.NotBefore
		if m.NextAttemptAt.After(due) {
			due = m.NextAttemptAt
		}
		return "not due until " + due.Format(time.RFC3339Nano)
	}
	return ""
}

// MessageFinish records a send's outcome under the lease it was sent
// under; a lease that is not the message's (lapsed and taken over) is
// ErrConflict. A message cancelled while it was being sent stays cancelled
// unless the send went through.
func (t *Tx) MessageFinish(ctx context.Context, id string, claimedUntil time.Time, r nextup.MessageResult) error {
	what := fmt.Sprintf("finish message %s as %s", id, r.State)
	switch r.State {
	case nextup.MessageSent, nextup.MessageFailed, nextup.MessageDead:
	default:
		return fmt.Errorf("%s: want sent, failed or dead: %w", what, nextup.ErrInvalid)
	}
	m, it, err := t.loadMsg(ctx, id, what)
	if err != nil {
		return err
	}
	if m.ClaimedUntil == nil || !m.ClaimedUntil.Equal(claimedUntil) {
		return conflict(what + ": lease " + claimedUntil.Format(time.RFC3339Nano) + " lost")
	}
	if m.State != nextup.MessageCancelled || r.State == nextup.MessageSent {
		m.State = r.State
	}
	m.ClaimedUntil = nil
	m.Attempts++
	switch r.State {
	case nextup.MessageFailed:
		m.NextAttemptAt = r.NextAttemptAt
	case nextup.MessageSent:
		at := r.At
		m.SentAt = &at
	}
	if r.Error != "" {
		m.LastError = r.Error
	}
	if r.ProviderID != "" {
		m.ProviderID = r.ProviderID
	}
	return t.putMsg(it, m)
}

// MessageRequeue gives a dead message a fresh set of attempts, due now;
// another state is ErrConflict.
func (t *Tx) MessageRequeue(ctx context.Context, id string, now time.Time) (nextup.Message, error) {
	what := "requeue message " + id
	m, it, err := t.loadMsg(ctx, id, what)
	if err != nil {
		return nextup.Message{}, err
	}
	if m.State != nextup.MessageDead {
		return nextup.Message{}, conflict(what + ": it is " + string(m.State))
	}
	m.State, m.Attempts, m.NextAttemptAt, m.ClaimedUntil = nextup.MessageQueued, 0, now, nil
	if err := t.putMsg(it, m); err != nil {
		return nextup.Message{}, err
	}
	return m, nil
}

// MessageUndelivered turns a sent message dead with the provider's reason
// (a bounce after the send); another state is ErrConflict.
func (t *Tx) MessageUndelivered(ctx context.Context, id, reason string) (nextup.Message, error) {
	what := "message " + id + " undelivered"
	m, it, err := t.loadMsg(ctx, id, what)
	if err != nil {
		return nextup.Message{}, err
	}
	if m.State != nextup.MessageSent {
		return nextup.Message{}, conflict(what + ": it is " + string(m.State))
	}
	m.State, m.LastError = nextup.MessageDead, reason
	return m, t.putMsg(it, m)
}

// MessageCancelByOffer cancels the offer's messages that are still waiting
// to go (queued, or failed and due for a retry). One being sent right now
// keeps its lease and its outcome.
func (t *Tx) MessageCancelByOffer(ctx context.Context, offerID string) error {
	if offerID == "" {
		return nil
	}
	its, err := t.query(ctx, query{index: "gsi3", part: "msgoff#" + offerID, keep: func(it item) bool {
		var m nextup.Message
		return decode(it, &m) == nil && (m.State == nextup.MessageQueued || m.State == nextup.MessageFailed)
	}})
	if err != nil {
		return err
	}
	for _, it := range its {
		var m nextup.Message
		if err := decode(it, &m); err != nil {
			return err
		}
		m.State = nextup.MessageCancelled
		if err := t.putMsg(it, m); err != nil {
			return err
		}
	}
	return nil
}

// msgKeys reads the keys (pk, and the index's keys) of a partition of a
// keys-only index, with a sort key condition op ("begins_with", "<" or ""
// for none) on val; an empty val is no condition. Nothing is read from
// the table: the keys are as the index has them (eventually consistent).
func (t *Tx) msgKeys(ctx context.Context, index, part, op, val string) ([]item, error) {
	cond := "#p = :p"
	names := map[string]string{"#p": index + "pk"}
	vals := map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: partValue(part)}}
	if op != "" && val != "" {
		names["#s"] = index + "sk"
		vals[":s"] = &types.AttributeValueMemberS{Value: val}
		if op == "begins_with" {
			cond += " AND begins_with(#s, :s)"
		} else {
			cond += " AND #s " + op + " :s"
		}
	}
	var out []item
	var start item
	for {
		res, err := t.s.api.Query(ctx, &dynamodb.QueryInput{
			TableName: &t.s.table, IndexName: aws.String(index), KeyConditionExpression: &cond,
			ExpressionAttributeNames: names, ExpressionAttributeValues: vals,
			ExclusiveStartKey: start, ReturnConsumedCapacity: t.s.rcc(),
		})
		if err != nil {
			return nil, t.s.err("query "+index+" "+part, err)
		}
		t.sink.add("Query", res.ConsumedCapacity)
		out = append(out, res.Items...)
		start = res.LastEvaluatedKey
		if start == nil {
			return out, nil
		}
	}
}

// ---------------------------------------------------------------- suppressions

func supPK(businessID string, ch nextup.Channel, address string) string {
	return "sup#" + businessID + "#" + string(ch) + "#" + address
}

// supChannels are the channels SuppressionList looks up.
var supChannels = []nextup.Channel{nextup.ChannelEmail, nextup.ChannelSMS, nextup.ChannelWebhook, nextup.ChannelCapture}

// SuppressionAdd records (or re-records, with the newer reason and time)
// that an address may not be contacted on a channel.
func (t *Tx) SuppressionAdd(ctx context.Context, s nextup.Suppression) error {
	pk := supPK(s.BusinessID, s.Channel, s.Address)
	if _, err := t.get(ctx, pk); err != nil {
		return err
	}
	it, err := newItem(s)
	if err != nil {
		return err
	}
	return t.put(pk, it)
}

// SuppressionList returns the suppressions of these addresses, by address
// and channel.
func (t *Tx) SuppressionList(ctx context.Context, businessID string, addresses []string) ([]nextup.Suppression, error) {
	addrs := slices.Compact(slices.Sorted(slices.Values(addresses)))
	if len(addrs) == 0 {
		return nil, nil
	}
	chans := slices.Sorted(slices.Values(supChannels))
	pks := make([]string, 0, len(addrs)*len(chans))
	for _, a := range addrs {
		for _, ch := range chans {
			pks = append(pks, supPK(businessID, ch, a))
		}
	}
	its, err := t.fetch(ctx, pks)
	if err != nil {
		return nil, err
	}
	return loadAll[nextup.Suppression](its)
}

// SuppressionDelete lifts a suppression and reports whether there was one.
func (t *Tx) SuppressionDelete(ctx context.Context, businessID string, ch nextup.Channel, address string) (bool, error) {
	pk := supPK(businessID, ch, address)
	it, err := t.get(ctx, pk)
	if err != nil || it == nil {
		return false, err
	}
	return true, t.del(pk)
}
