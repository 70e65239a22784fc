-- 0006: the sheet mirror's versions. Every read of a business's sheet
-- whose content changed is kept with its hash, its row count and what the
-- import made of it, newest first by fetched_at.
CREATE TABLE sheet_versions (
    id          text    PRIMARY KEY,
    business_id text    NOT NULL REFERENCES businesses (id),
    source      text    NOT NULL,
    fetched_at  bigint  NOT NULL,
    hash        text    NOT NULL,
    row_count   integer NOT NULL,
    imported    integer NOT NULL DEFAULT 0,
    updated     integer NOT NULL DEFAULT 0,
    unchanged   integer NOT NULL DEFAULT 0,
    rejected    integer NOT NULL DEFAULT 0
);

CREATE INDEX sheet_versions_business ON sheet_versions (business_id, fetched_at);
