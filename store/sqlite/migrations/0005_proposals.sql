-- 0005: proposed rows. A forwarded booking request (or a sheet row that
-- needs a look) proposes an entry; staff approve it (it becomes an entry
-- whose joined-at is when the request arrived) or reject it. One proposal
-- per request: (business, source, source_ref) is unique when the source
-- names the request. The one-tap links keep only the hash of their secret.
CREATE TABLE proposals (
    id                TEXT    PRIMARY KEY,
    business_id       TEXT    NOT NULL REFERENCES businesses (id),
    source            TEXT    NOT NULL CHECK (source IN ('email', 'sheet')),
    source_ref        TEXT    NOT NULL DEFAULT '',
    received_at       INTEGER NOT NULL,
    excerpt           TEXT    NOT NULL DEFAULT '',
    fields            TEXT    NOT NULL DEFAULT '{}', -- JSON, nextup.ProposalFields
    confidence        TEXT    NOT NULL DEFAULT '{}', -- JSON, field -> 0..1
    problems          TEXT    NOT NULL DEFAULT '[]', -- JSON, []string
    state             TEXT    NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'approved', 'rejected')),
    action_hash       TEXT    NOT NULL DEFAULT '',
    action_expires_at INTEGER NOT NULL DEFAULT 0,
    entry_id          TEXT    NOT NULL DEFAULT '',
    decided_at        INTEGER,
    decided_by        TEXT    NOT NULL DEFAULT '',
    created_at        INTEGER NOT NULL
) STRICT;

CREATE UNIQUE INDEX proposals_source ON proposals (business_id, source, source_ref) WHERE source_ref <> '';
CREATE UNIQUE INDEX proposals_action ON proposals (action_hash) WHERE action_hash <> '';
CREATE INDEX proposals_business ON proposals (business_id, received_at);
