package dynamo

import (
	"context"
	"fmt"

	"github.com/nextup-dev/nextup"
)

// A business is the item biz#ID, found by API key through g1 (apikey#HASH)
// and by slug through the marker slug#SLUG.

func bizPK(id string) string { return "biz#" + id }

func slugPK(slug string) string { return "slug#" + slug }

func bizItem(b nextup.Business) (item, error) {
	var apiKey string
	if b.APIKeyHash != "" {
		apiKey = "apikey#" + b.APIKeyHash
	}
	return newItem(b, "gsi1pk", apiKey, "gsi1sk", bizPK(b.ID))
}

// BusinessCreate stores a business; an id that exists is ErrConflict.
func (t *Tx) BusinessCreate(ctx context.Context, b nextup.Business) error {
	what := "create business " + b.ID
	if ok, err := t.exists(ctx, bizPK(b.ID)); err != nil || ok {
		return cmpErr(err, conflict(what))
	}
	if b.Profile.Slug != "" {
		if err := t.markerSet(ctx, slugPK(b.Profile.Slug), b.ID, what+": slug "+b.Profile.Slug); err != nil {
			return err
		}
	}
	it, err := bizItem(b)
	if err != nil {
		return err
	}
	return t.put(bizPK(b.ID), it)
}

// BusinessGet reads a business.
func (t *Tx) BusinessGet(ctx context.Context, id string) (nextup.Business, error) {
	return load[nextup.Business](ctx, t, bizPK(id), "get business "+id)
}

// BusinessByAPIKey reads the business whose API key has this hash.
func (t *Tx) BusinessByAPIKey(ctx context.Context, keyHash string) (nextup.Business, error) {
	return byIndex[nextup.Business](ctx, t, "apikey#", keyHash, "business by api key")
}

// BusinessBySlug reads a business by its public slug.
func (t *Tx) BusinessBySlug(ctx context.Context, slug string) (nextup.Business, error) {
	what := "business by slug " + slug
	if slug == "" {
		return nextup.Business{}, notFound(what)
	}
	return byMarker[nextup.Business](ctx, t, slugPK(slug), bizPK, what)
}

// BusinessProfileSet replaces a business's profile; a slug another
// business has is ErrConflict.
func (t *Tx) BusinessProfileSet(ctx context.Context, id string, p nextup.Profile) error {
	what := "set profile of business " + id
	b, err := load[nextup.Business](ctx, t, bizPK(id), what)
	if err != nil {
		return err
	}
	if p.Slug != b.Profile.Slug {
		if p.Slug != "" {
			if err := t.markerSet(ctx, slugPK(p.Slug), id, what+": slug "+p.Slug); err != nil {
				return err
			}
		}
		if b.Profile.Slug != "" {
			if err := t.markerDrop(ctx, slugPK(b.Profile.Slug), id); err != nil {
				return err
			}
		}
	}
	b.Profile = p
	it, err := bizItem(b)
	if err != nil {
		return err
	}
	return t.put(bizPK(id), it)
}

// BusinessRulesSet replaces the rules when they follow the stored version
// (ErrConflict otherwise).
func (t *Tx) BusinessRulesSet(ctx context.Context, id string, rules nextup.Rules) error {
	what := fmt.Sprintf("set rules v%d of business %s", rules.Version, id)
	b, err := load[nextup.Business](ctx, t, bizPK(id), what)
	if err != nil {
		return err
	}
	if b.Rules.Version != rules.Version-1 {
		return conflict(what)
	}
	b.Rules = rules
	it, err := bizItem(b)
	if err != nil {
		return err
	}
	return t.put(bizPK(id), it)
}

// cmpErr is err when there is one, else alt.
func cmpErr(err, alt error) error {
	if err != nil {
		return err
	}
	return alt
}
