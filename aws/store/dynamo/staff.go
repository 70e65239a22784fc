package dynamo

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nextup-dev/nextup"
)

// Staff accounts, their sessions and password resets, proposals and sheet
// versions.
//
// A staff account is the item staff#ID (StaffGet: one GetItem), in g2
// (staffbiz#BID, sorted by EMAIL#ID, the email lower-cased: StaffList reads
// that partition, the business's accounts only), with the marker
// staffemail#EMAIL → ID (the email unique across businesses, compared
// lower-cased; StaffByEmail: two GetItems).
//
// A session is the item sess#HASH, HASH the hash of its token (SessionGet,
// SessionDelete: one GetItem), in g2 (sessstaff#STAFF, sorted by
// EXPIRES#HASH: SessionDeleteByStaff reads the staff member's sessions
// only) and in g3 (sessexp, sorted by EXPIRES#HASH: SessionPurge reads
// the range that expired, nothing else). It carries the TTL attribute at
// its expiry, so DynamoDB removes what the purges leave.
//
// A password reset is the item pwreset#HASH (PasswordResetUse: one
// GetItem), with the TTL attribute a week after its expiry (a link used
// late still says it expired rather than that it never existed).
//
// A proposal is the item prop#ID (ProposalGet: one GetItem), in g1
// (propact#HASH of its one-tap link, when it has one: ProposalByActionHash
// reads that partition, one key, then one GetItem), in g2 (propbiz#BID,
// sorted by RECEIVED#ID: ProposalList of every state reads the business's
// proposals) and in g3 (propstate#BID#STATE, sorted by RECEIVED#ID:
// ProposalList of one state reads only those), with the marker
// propsrc#BID#SOURCE#REF → ID when it has a SourceRef (one proposal per
// request).
//
// A sheet version is the item shv#ID, in g2 (shvbiz#BID, sorted by
// FETCHED#ID: SheetVersionList reads the business's versions, newest
// first, up to its limit), without its content: that is the item
// shvrows#ID beside it (SheetVersionGet: two GetItems), in no index,
// holding the content's JSON gzip-compressed in the binary attribute z.
// A sheet of up to MaxRows rows can be megabytes of JSON; compressed, a
// usual one is a few kilobytes, and one that still will not fit an item
// keeps its first rows only: as many as fit in shvRowsBudget, the rest
// counted in SheetContent.Cut (the version's hash, counts and missing
// rows stay whole). It is written in the version's transaction: 2 write
// units a compressed kilobyte. The rows item is in g3 (shvrowsbiz#BID,
// sorted as the version in g2), keys only: SheetVersionTrim reads the
// business's newest keep versions in g2 (keys, then small items), then in
// g3 only the rows items older than the last of them — after every read
// that kept a version, the one that just fell past the line — and deletes
// them, at most shvTrimMax a call.

func staffPK(id string) string { return "staff#" + id }

func staffEmailPK(email string) string { return "staffemail#" + strings.ToLower(email) }

func sessPK(hash string) string { return "sess#" + hash }

func pwresetPK(hash string) string { return "pwreset#" + hash }

func propPK(id string) string { return "prop#" + id }

func propSrcPK(p nextup.Proposal) string {
	return "propsrc#" + p.BusinessID + "#" + p.Source + "#" + p.SourceRef
}

func shvPK(id string) string { return "shv#" + id }

func shvRowsPK(id string) string { return "shvrows#" + id }

// attrRows is the attribute of shvrows#ID holding the compressed content.
const attrRows = "z"

// shvRowsBudget is the most bytes of compressed content kept in one
// item: the service's limit less room for the item's other attributes.
const shvRowsBudget = MaxItemBytes - 8<<10

// sessionPurgeMax bounds the sessions one SessionPurge removes, so that
// its transaction stays within the service's limit of actions
// (MaxTxActions) however many sessions expired since the last purge: the
// rest go at the next purge, or by the TTL.
const sessionPurgeMax = 10

// shvTrimMax bounds the rows items one SheetVersionTrim deletes, so that
// its transaction stays within MaxTxActions (after each version kept,
// one is due; more only where versions were kept before they were
// trimmed).
const shvTrimMax = 20

// resetTTLGrace is how long after its expiry DynamoDB may remove a
// password reset that was never used.
const resetTTLGrace = 7 * 24 * time.Hour

func staffItem(s nextup.Staff) (item, error) {
	return newItem(s, "gsi2pk", "staffbiz#"+s.BusinessID, "gsi2sk", s.Email+"#"+s.ID)
}

func (t *Tx) putStaff(s nextup.Staff) error {
	it, err := staffItem(s)
	if err != nil {
		return err
	}
	return t.put(staffPK(s.ID), it)
}

// StaffCreate stores a staff account with its email lower-cased; an id or
// an email (in any case) another account has is ErrConflict, a missing
// business ErrNotFound.
func (t *Tx) StaffCreate(ctx context.Context, s nextup.Staff) error {
	what := "create staff " + s.ID
	s.Email = strings.ToLower(s.Email)
	if ok, err := t.exists(ctx, bizPK(s.BusinessID)); err != nil || !ok {
		return cmpErr(err, notFound(what+": business "+s.BusinessID))
	}
	if ok, err := t.exists(ctx, staffPK(s.ID)); err != nil || ok {
		return cmpErr(err, conflict(what))
	}
	if err := t.markerSet(ctx, staffEmailPK(s.Email), s.ID, what+": email "+s.Email); err != nil {
		return err
	}
	return t.putStaff(s)
}

// StaffGet reads a staff account.
func (t *Tx) StaffGet(ctx context.Context, id string) (nextup.Staff, error) {
	return load[nextup.Staff](ctx, t, staffPK(id), "get staff "+id)
}

// StaffByEmail reads a staff account by its email, in any case.
func (t *Tx) StaffByEmail(ctx context.Context, email string) (nextup.Staff, error) {
	return byMarker[nextup.Staff](ctx, t, staffEmailPK(email), staffPK, "staff by email")
}

// StaffList lists a business's staff accounts by email.
func (t *Tx) StaffList(ctx context.Context, businessID string) ([]nextup.Staff, error) {
	its, err := t.query(ctx, query{index: "gsi2", part: "staffbiz#" + businessID})
	if err != nil {
		return nil, err
	}
	return loadAll[nextup.Staff](its)
}

// StaffSignIn stores the outcome of a sign-in: failed attempts and lock.
func (t *Tx) StaffSignIn(ctx context.Context, id string, r nextup.SignInResult) error {
	s, err := load[nextup.Staff](ctx, t, staffPK(id), "record sign-in of staff "+id)
	if err != nil {
		return err
	}
	s.FailedSignIns, s.LockedUntil = r.FailedSignIns, r.LockedUntil
	return t.putStaff(s)
}

// StaffSetPassword replaces a password hash and lifts any lock.
func (t *Tx) StaffSetPassword(ctx context.Context, id, passwordHash string) error {
	s, err := load[nextup.Staff](ctx, t, staffPK(id), "set password of staff "+id)
	if err != nil {
		return err
	}
	s.PasswordHash, s.FailedSignIns, s.LockedUntil = passwordHash, 0, nil
	return t.putStaff(s)
}

// SessionCreate stores a session; a hash that exists is ErrConflict, a
// missing staff member ErrNotFound.
func (t *Tx) SessionCreate(ctx context.Context, s nextup.Session) error {
	what := "create session of staff " + s.StaffID
	if ok, err := t.exists(ctx, staffPK(s.StaffID)); err != nil || !ok {
		return cmpErr(err, notFound(what+": staff "+s.StaffID))
	}
	pk := sessPK(s.IDHash)
	if ok, err := t.exists(ctx, pk); err != nil || ok {
		return cmpErr(err, conflict(what))
	}
	it, err := sessItem(s)
	if err != nil {
		return err
	}
	return t.put(pk, it)
}

func sessItem(s nextup.Session) (item, error) {
	sk := ts(s.ExpiresAt) + "#" + s.IDHash
	it, err := newItem(s, "gsi2pk", "sessstaff#"+s.StaffID, "gsi2sk", sk, "gsi3pk", "sessexp", "gsi3sk", sk)
	if err != nil {
		return nil, err
	}
	return withTTL(it, s.ExpiresAt), nil
}

// SessionGet reads a session by the hash of its token, expired or not.
func (t *Tx) SessionGet(ctx context.Context, idHash string) (nextup.Session, error) {
	return load[nextup.Session](ctx, t, sessPK(idHash), "get session")
}

// SessionDelete deletes a session; none is no error.
func (t *Tx) SessionDelete(ctx context.Context, idHash string) error {
	pk := sessPK(idHash)
	if ok, err := t.exists(ctx, pk); err != nil || !ok {
		return err
	}
	return t.del(pk)
}

// SessionDeleteByStaff deletes a staff member's sessions and counts them.
// Each is one action of the commit: a staff member with more sessions
// than the commit takes makes it ErrTooLarge.
func (t *Tx) SessionDeleteByStaff(ctx context.Context, staffID string) (int, error) {
	return t.deleteAll(ctx, query{index: "gsi2", part: "sessstaff#" + staffID})
}

// SessionPurge deletes sessions expired before a time, the longest
// expired first, and counts them: at most sessionPurgeMax of them, the
// rest are left to the next purge (and to the TTL).
func (t *Tx) SessionPurge(ctx context.Context, before time.Time) (int, error) {
	return t.deleteAll(ctx, query{index: "gsi3", part: "sessexp", to: ts(before), limit: sessionPurgeMax})
}

// deleteAll deletes the items of q and counts them.
func (t *Tx) deleteAll(ctx context.Context, q query) (int, error) {
	its, err := t.query(ctx, q)
	if err != nil {
		return 0, err
	}
	for _, it := range its {
		if err := t.del(str(it, attrPK)); err != nil {
			return 0, err
		}
	}
	return len(its), nil
}

// PasswordResetCreate stores a reset; a hash that exists is ErrConflict,
// a missing staff member ErrNotFound.
func (t *Tx) PasswordResetCreate(ctx context.Context, r nextup.PasswordReset) error {
	what := "create password reset of staff " + r.StaffID
	if ok, err := t.exists(ctx, staffPK(r.StaffID)); err != nil || !ok {
		return cmpErr(err, notFound(what+": staff "+r.StaffID))
	}
	pk := pwresetPK(r.TokenHash)
	if ok, err := t.exists(ctx, pk); err != nil || ok {
		return cmpErr(err, conflict(what))
	}
	it, err := pwresetItem(r)
	if err != nil {
		return err
	}
	return t.put(pk, it)
}

func pwresetItem(r nextup.PasswordReset) (item, error) {
	it, err := newItem(r)
	if err != nil {
		return nil, err
	}
	return withTTL(it, r.ExpiresAt.Add(resetTTLGrace)), nil
}

// PasswordResetUse deletes the reset and only then looks at its deadline,
// so an expired reset is gone too (ErrConflict) and a token works at most
// once. The deadline is compared at the SQL stores' precision
// (microseconds): a reset is good while now is before ExpiresAt.
func (t *Tx) PasswordResetUse(ctx context.Context, tokenHash string, now time.Time) (nextup.PasswordReset, error) {
	const what = "use password reset"
	pk := pwresetPK(tokenHash)
	r, err := load[nextup.PasswordReset](ctx, t, pk, what)
	if err != nil {
		return nextup.PasswordReset{}, err
	}
	if err := t.del(pk); err != nil {
		return nextup.PasswordReset{}, err
	}
	if now.UnixMicro() >= r.ExpiresAt.UnixMicro() {
		return nextup.PasswordReset{}, fmt.Errorf("%s: expired at %s: %w", what, r.ExpiresAt.Format(time.RFC3339), nextup.ErrConflict)
	}
	return r, nil
}

func propItem(p nextup.Proposal) (item, error) {
	var action string
	if p.ActionHash != "" {
		action = "propact#" + p.ActionHash
	}
	sk := ts(p.ReceivedAt) + "#" + p.ID
	return newItem(p, "gsi1pk", action, "gsi1sk", propPK(p.ID),
		"gsi2pk", "propbiz#"+p.BusinessID, "gsi2sk", sk,
		"gsi3pk", "propstate#"+p.BusinessID+"#"+string(p.State), "gsi3sk", sk)
}

func (t *Tx) putProposal(p nextup.Proposal) error {
	it, err := propItem(p)
	if err != nil {
		return err
	}
	return t.put(propPK(p.ID), it)
}

// ProposalCreate stores a proposal; an id that exists, the same request
// proposed again (its business, source and source ref), or a source or
// state the SQL stores' CHECK refuses is ErrConflict, a missing business
// ErrNotFound.
func (t *Tx) ProposalCreate(ctx context.Context, p nextup.Proposal) error {
	what := "create proposal " + p.ID
	if p.Source != nextup.ProposalFromEmail && p.Source != nextup.ProposalFromSheet {
		return conflict(fmt.Sprintf("%s: source %q", what, p.Source))
	}
	switch p.State {
	case nextup.ProposalOpen, nextup.ProposalApproved, nextup.ProposalRejected:
	default:
		return conflict(fmt.Sprintf("%s: state %q", what, p.State))
	}
	if ok, err := t.exists(ctx, bizPK(p.BusinessID)); err != nil || !ok {
		return cmpErr(err, notFound(what+": business "+p.BusinessID))
	}
	if ok, err := t.exists(ctx, propPK(p.ID)); err != nil || ok {
		return cmpErr(err, conflict(what))
	}
	if p.SourceRef != "" {
		if err := t.markerSet(ctx, propSrcPK(p), p.ID, what+": request "+p.Source+" "+p.SourceRef); err != nil {
			return err
		}
	}
	if p.Confidence == nil {
		p.Confidence = map[string]float64{}
	}
	if p.Problems == nil {
		p.Problems = []string{}
	}
	return t.putProposal(p)
}

// ProposalGet reads a proposal.
func (t *Tx) ProposalGet(ctx context.Context, id string) (nextup.Proposal, error) {
	return load[nextup.Proposal](ctx, t, propPK(id), "get proposal "+id)
}

// ProposalByActionHash reads the proposal whose action link has this hash.
func (t *Tx) ProposalByActionHash(ctx context.Context, hash string) (nextup.Proposal, error) {
	return byIndex[nextup.Proposal](ctx, t, "propact#", hash, "proposal by link")
}

// ProposalList lists a business's proposals in one state ("" for all),
// newest received first (then by id, descending).
func (t *Tx) ProposalList(ctx context.Context, businessID string, state nextup.ProposalState) ([]nextup.Proposal, error) {
	q := query{index: "gsi2", part: "propbiz#" + businessID, desc: true}
	if state != "" {
		q = query{index: "gsi3", part: "propstate#" + businessID + "#" + string(state), desc: true}
	}
	its, err := t.query(ctx, q)
	if err != nil {
		return nil, err
	}
	return loadAll[nextup.Proposal](its)
}

// ProposalDecide approves or rejects an open proposal; one that is not
// open is ErrConflict, a missing one ErrNotFound, a decision to another
// state ErrInvalid.
func (t *Tx) ProposalDecide(ctx context.Context, id string, d nextup.ProposalDecision) (nextup.Proposal, error) {
	what := "decide proposal " + id
	if d.To != nextup.ProposalApproved && d.To != nextup.ProposalRejected {
		return nextup.Proposal{}, fmt.Errorf("%s: to %q: %w", what, d.To, nextup.ErrInvalid)
	}
	p, err := load[nextup.Proposal](ctx, t, propPK(id), what)
	if err != nil {
		return nextup.Proposal{}, err
	}
	if p.State != nextup.ProposalOpen {
		return nextup.Proposal{}, conflict(fmt.Sprintf("%s: it is %s", what, p.State))
	}
	at := d.At
	p.State, p.EntryID, p.DecidedAt, p.DecidedBy = d.To, d.EntryID, &at, d.By
	return p, t.putProposal(p)
}

// SheetVersionAdd records one read of a business's sheet, its content in
// an item of its own (cut to fit, see shvRowsBudget); an id that exists is
// ErrConflict, a missing business ErrNotFound.
func (t *Tx) SheetVersionAdd(ctx context.Context, v nextup.SheetVersion) error {
	what := "add sheet version " + v.ID
	if ok, err := t.exists(ctx, bizPK(v.BusinessID)); err != nil || !ok {
		return cmpErr(err, notFound(what+": business "+v.BusinessID))
	}
	pk := shvPK(v.ID)
	if ok, err := t.exists(ctx, pk); err != nil || ok {
		return cmpErr(err, conflict(what))
	}
	it, err := shvItem(v)
	if err != nil {
		return err
	}
	if err := t.put(pk, it); err != nil {
		return err
	}
	if v.Content == nil {
		return nil
	}
	rows, err := shvRowsItem(v)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return t.put(shvRowsPK(v.ID), rows)
}

// shvSort is a version's sort key in g2, and its rows item's in g3.
func shvSort(v nextup.SheetVersion) string { return ts(v.FetchedAt) + "#" + v.ID }

// SheetVersionTrim deletes the rows items of the business's versions
// older than its newest keep (at most shvTrimMax of them) and counts them.
func (t *Tx) SheetVersionTrim(ctx context.Context, businessID string, keep int) (int, error) {
	var before string
	if keep > 0 {
		its, err := t.query(ctx, query{index: "gsi2", part: "shvbiz#" + businessID, desc: true, limit: keep})
		if err != nil || len(its) < keep {
			return 0, err
		}
		before = str(its[keep-1], "gsi2sk")
	}
	return t.deleteAll(ctx, query{index: "gsi3", part: "shvrowsbiz#" + businessID, to: before, limit: shvTrimMax})
}

// shvItem is the item of a version, without its content.
func shvItem(v nextup.SheetVersion) (item, error) {
	v.Content = nil
	return newItem(v, "gsi2pk", "shvbiz#"+v.BusinessID, "gsi2sk", shvSort(v))
}

// shvRowsItem is the item of version v's content: its JSON, compressed,
// with as many rows as fit shvRowsBudget, in g3 beside its version.
func shvRowsItem(v nextup.SheetVersion) (item, error) {
	c := *v.Content
	z, err := gzipJSON(c)
	if err != nil {
		return nil, err
	}
	if len(z) > shvRowsBudget {
		// The most rows that fit, found by bisection (each try compresses
		// again: a few dozen milliseconds for the largest sheets).
		all := c
		fits := func(n int) ([]byte, bool) {
			cut := all
			cut.Rows = all.Rows[:n]
			if len(all.Keys) > n {
				cut.Keys = all.Keys[:n]
			}
			cut.Cut = all.Cut + len(all.Rows) - n
			b, err := gzipJSON(cut)
			return b, err == nil && len(b) <= shvRowsBudget
		}
		lo, hi := 0, len(all.Rows) // fits(lo); not fits(hi)
		z, _ = fits(0)
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if b, ok := fits(mid); ok {
				lo, z = mid, b
			} else {
				hi = mid
			}
		}
		if len(z) > shvRowsBudget {
			return nil, fmt.Errorf("%w: a sheet version's header alone is over %d bytes compressed", ErrTooLarge, shvRowsBudget)
		}
	}
	it, err := newItem(struct{}{}, "gsi3pk", "shvrowsbiz#"+v.BusinessID, "gsi3sk", shvSort(v))
	if err != nil {
		return nil, err
	}
	it[attrRows] = &types.AttributeValueMemberB{Value: z}
	return it, nil
}

func gzipJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if err := json.NewEncoder(zw).Encode(v); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// SheetVersionList lists a business's sheet reads, newest first (then by
// id, descending), at most limit (<= 0: all), without their content.
func (t *Tx) SheetVersionList(ctx context.Context, businessID string, limit int) ([]nextup.SheetVersion, error) {
	its, err := t.query(ctx, query{index: "gsi2", part: "shvbiz#" + businessID, desc: true, limit: max(limit, 0)})
	if err != nil {
		return nil, err
	}
	return loadAll[nextup.SheetVersion](its)
}

// SheetVersionGet reads one sheet version with its content.
func (t *Tx) SheetVersionGet(ctx context.Context, id string) (nextup.SheetVersion, error) {
	what := "get sheet version " + id
	v, err := load[nextup.SheetVersion](ctx, t, shvPK(id), what)
	if err != nil {
		return v, err
	}
	it, err := t.get(ctx, shvRowsPK(id))
	if err != nil || it == nil {
		return v, err
	}
	z, ok := it[attrRows].(*types.AttributeValueMemberB)
	if !ok {
		return v, fmt.Errorf("dynamodb: %s: no content attribute", what)
	}
	zr, err := gzip.NewReader(bytes.NewReader(z.Value))
	if err != nil {
		return v, fmt.Errorf("dynamodb: %s: %w", what, err)
	}
	var c nextup.SheetContent
	if err := json.NewDecoder(zr).Decode(&c); err != nil {
		return v, fmt.Errorf("dynamodb: %s: %w", what, err)
	}
	v.Content = &c
	return v, nil
}
