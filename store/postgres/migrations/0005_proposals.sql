-- 0005: proposed rows. A forwarded booking request (or a sheet row that
-- needs a look) proposes an entry; staff approve it (it becomes an entry
-- whose joined-at is when the request arrived) or reject it. One proposal
-- per request: (business, source, source_ref) is unique when the source
-- names the request. The one-tap links keep only the hash of their secret.
CREATE TABLE proposals (
    id                text    PRIMARY KEY,
    business_id       text    NOT NULL REFERENCES businesses (id),
    source            text    NOT NULL CHECK (source IN ('email', 'sheet')),
    source_ref        text    NOT NULL DEFAULT '',
    received_at       bigint  NOT NULL,
    excerpt           text    NOT NULL DEFAULT '',
    fields            text    NOT NULL DEFAULT '{}', -- JSON, nextup.ProposalFields
    confidence        text    NOT NULL DEFAULT '{}', -- JSON, field -> 0..1
    problems          text    NOT NULL DEFAULT '[]', -- JSON, []string
    state             text    NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'approved', 'rejected')),
    action_hash       text    NOT NULL DEFAULT '',
    action_expires_at bigint  NOT NULL DEFAULT 0,
    entry_id          text    NOT NULL DEFAULT '',
    decided_at        bigint,
    decided_by        text    NOT NULL DEFAULT '',
    created_at        bigint  NOT NULL
);

CREATE UNIQUE INDEX proposals_source ON proposals (business_id, source, source_ref) WHERE source_ref <> '';
CREATE UNIQUE INDEX proposals_action ON proposals (action_hash) WHERE action_hash <> '';
CREATE INDEX proposals_business ON proposals (business_id, received_at);
