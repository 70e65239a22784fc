-- 0006: the sheet mirror's versions. Every read of a business's sheet
-- whose content changed is kept with its hash, its row count and what the
-- import made of it, newest first by fetched_at.
CREATE TABLE sheet_versions (
    id          TEXT    PRIMARY KEY,
    business_id TEXT    NOT NULL REFERENCES businesses (id),
    source      TEXT    NOT NULL,
    fetched_at  INTEGER NOT NULL,
    hash        TEXT    NOT NULL,
    row_count   INTEGER NOT NULL,
    imported    INTEGER NOT NULL DEFAULT 0,
    updated     INTEGER NOT NULL DEFAULT 0,
    unchanged   INTEGER NOT NULL DEFAULT 0,
    rejected    INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE INDEX sheet_versions_business ON sheet_versions (business_id, fetched_at);
