-- 0011: jobs. A bulk release frees many slots in waves of bounded
-- transactions, driven by a durable timer (job_run); its job row says how
-- far it got, advanced in the transaction that did each part.
CREATE TABLE jobs (
    id          TEXT    PRIMARY KEY,
    business_id TEXT    NOT NULL REFERENCES businesses (id),
    kind        TEXT    NOT NULL,
    reason      TEXT    NOT NULL DEFAULT '',
    slot_ids    TEXT    NOT NULL DEFAULT '[]',
    state       TEXT    NOT NULL CHECK (state IN ('running', 'done', 'failed')),
    done        INTEGER NOT NULL DEFAULT 0 CHECK (done >= 0),
    total       INTEGER NOT NULL DEFAULT 0 CHECK (total >= done),
    freed       INTEGER NOT NULL DEFAULT 0 CHECK (freed >= 0),
    offers      INTEGER NOT NULL DEFAULT 0 CHECK (offers >= 0),
    error       TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
) STRICT;

CREATE INDEX jobs_business ON jobs (business_id, created_at);
