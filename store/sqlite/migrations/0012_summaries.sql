-- 0012: monthly summaries. When a business's month ends, its figures are
-- computed once and kept as they were (figures, the JSON of the report,
-- stored as text and never parsed here), with the narrative that went
-- with them and when it was emailed. One per business and month: the
-- primary key refuses a second, and it lists a business's months newest
-- first ("2026-11" sorts as months do).
CREATE TABLE summaries (
    business_id  TEXT    NOT NULL REFERENCES businesses (id),
    month        TEXT    NOT NULL,
    figures      TEXT    NOT NULL,
    narrative    TEXT    NOT NULL,
    narrative_by TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    sent_at      INTEGER,
    message_id   TEXT    NOT NULL,
    PRIMARY KEY (business_id, month)
) STRICT;
