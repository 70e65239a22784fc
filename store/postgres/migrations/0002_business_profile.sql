-- 0002: the business profile and catalogue (slug, owner, country, services,
-- staff, inbound senders). The slug names public pages and the inbound
-- address, so it is unique among businesses that have one.
ALTER TABLE businesses ADD COLUMN slug text NOT NULL DEFAULT '';
ALTER TABLE businesses ADD COLUMN profile text NOT NULL DEFAULT '{}'; -- JSON, nextup.Profile
CREATE UNIQUE INDEX businesses_slug ON businesses (slug) WHERE slug <> '';
