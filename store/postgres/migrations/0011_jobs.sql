-- 0011: jobs. A bulk release frees many slots in waves of bounded
-- transactions, driven by a durable timer (job_run); its job row says how
-- far it got, advanced in the transaction that did each part.
CREATE TABLE jobs (
    id          text    PRIMARY KEY,
    business_id text    NOT NULL REFERENCES businesses (id),
    kind        text    NOT NULL,
    reason      text    NOT NULL DEFAULT '',
    slot_ids    text    NOT NULL DEFAULT '[]',
    state       text    NOT NULL CHECK (state IN ('running', 'done', 'failed')),
    done        integer NOT NULL DEFAULT 0 CHECK (done >= 0),
    total       integer NOT NULL DEFAULT 0 CHECK (total >= done),
    freed       integer NOT NULL DEFAULT 0 CHECK (freed >= 0),
    offers      integer NOT NULL DEFAULT 0 CHECK (offers >= 0),
    error       text    NOT NULL DEFAULT '',
    created_at  bigint NOT NULL,
    updated_at  bigint NOT NULL
);

CREATE INDEX jobs_business ON jobs (business_id, created_at);
