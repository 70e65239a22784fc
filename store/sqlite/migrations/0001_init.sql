-- 0001: the whole nextup schema.
--
-- Conventions:
--   * Every time is INTEGER microseconds since the Unix epoch, UTC
--     (time.Time.UnixMicro). Sortable, exact to the microsecond (the same
--     precision PostgreSQL keeps), and the zero time.Time (year 1) fits.
--     entries.latest uses 9223372036854775807 for "no upper bound".
--   * Optional references and strings are '' rather than NULL, so that
--     equality works in indexes; optional times are NULL.
--   * Every row belongs to exactly one business (business_id).
--   * Tables are STRICT: a value of the wrong type is an error, not a
--     silent conversion.

CREATE TABLE businesses (
    id            TEXT    PRIMARY KEY,
    name          TEXT    NOT NULL,
    timezone      TEXT    NOT NULL,
    rules         TEXT    NOT NULL, -- JSON, the API.md shape of nextup.Rules
    rules_version INTEGER NOT NULL, -- copy of rules.version for the optimistic update
    api_key_hash  TEXT    NOT NULL DEFAULT '',
    created_at    INTEGER NOT NULL
) STRICT;

CREATE UNIQUE INDEX businesses_api_key ON businesses (api_key_hash) WHERE api_key_hash <> '';

CREATE TABLE slots (
    id           TEXT    PRIMARY KEY,
    business_id  TEXT    NOT NULL REFERENCES businesses (id),
    kind         TEXT    NOT NULL CHECK (kind IN ('slot', 'event')),
    title        TEXT    NOT NULL DEFAULT '',
    service      TEXT    NOT NULL DEFAULT '',
    staff        TEXT    NOT NULL DEFAULT '',
    starts_at    INTEGER NOT NULL,
    ends_at      INTEGER NOT NULL,
    capacity     INTEGER NOT NULL CHECK (capacity >= 0),
    seating      TEXT    NOT NULL CHECK (seating IN ('unit', 'shared')),
    min_party    INTEGER NOT NULL DEFAULT 0,
    booked_seats INTEGER NOT NULL DEFAULT 0,
    held_seats   INTEGER NOT NULL DEFAULT 0,
    handed_back  INTEGER NOT NULL DEFAULT 0 CHECK (handed_back IN (0, 1)),
    created_at   INTEGER NOT NULL,
    -- The one invariant, as a constraint of the database itself: whatever
    -- code runs against this file, no committed state can hold more seats
    -- than the slot has.
    CONSTRAINT seats_within_capacity
        CHECK (booked_seats >= 0 AND held_seats >= 0 AND booked_seats + held_seats <= capacity)
) STRICT;

CREATE INDEX slots_business_start ON slots (business_id, starts_at);
CREATE INDEX slots_open_for ON slots (business_id, kind, service, starts_at);

CREATE TABLE entries (
    -- seq is the rowid: assigned by the store, monotonic, never reused
    -- (AUTOINCREMENT), the last tie-breaker of fair order.
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT    NOT NULL UNIQUE,
    business_id  TEXT    NOT NULL REFERENCES businesses (id),
    name         TEXT    NOT NULL DEFAULT '',
    email        TEXT    NOT NULL DEFAULT '',
    phone        TEXT    NOT NULL DEFAULT '',
    channel      TEXT    NOT NULL DEFAULT '',
    contact_key  TEXT    NOT NULL DEFAULT '', -- nextup.Entry.ContactKey()
    service      TEXT    NOT NULL DEFAULT '',
    event_id     TEXT    NOT NULL DEFAULT '',
    party_size   INTEGER NOT NULL,
    earliest     INTEGER NOT NULL, -- zero time: year 1, below every slot
    latest       INTEGER NOT NULL, -- zero time: max int64, above every slot
    staff        TEXT    NOT NULL DEFAULT '',
    availability TEXT,             -- JSON []nextup.Availability, NULL for none
    priority     INTEGER NOT NULL DEFAULT 0 CHECK (priority IN (0, 1)),
    source       TEXT    NOT NULL DEFAULT '',
    joined_at    INTEGER NOT NULL,
    state        TEXT    NOT NULL CHECK (state IN ('waiting', 'offered', 'booked', 'left', 'expired')),
    status_hash  TEXT    NOT NULL DEFAULT '',
    updated_at   INTEGER NOT NULL,
    -- The waitlist an entry is on: 'event:<id>' for an event's,
    -- 'service:<name>' otherwise. Written by the store, checked here.
    queue        TEXT    NOT NULL CHECK (queue = CASE WHEN event_id <> '' THEN 'event:' || event_id
                                                      ELSE 'service:' || service END),
    -- Fair order is priority first, then joined_at, then seq. Priority as
    -- an ascending rank (0 for priority entries) makes the order all
    -- ascending, so the keyset cursor is one row-value comparison,
    -- (fair_rank, joined_at, seq) > (?, ?, ?), that seeks in the index.
    -- (Plain columns, not generated ones: SQLite does not treat an index
    -- on generated columns as covering, and positions count on it.)
    fair_rank    INTEGER NOT NULL CHECK (fair_rank = 1 - priority)
) STRICT;

-- Candidates, positions and per-waitlist listings read this index in fair
-- order: equality on (business_id, queue, state), order on (fair_rank,
-- joined_at, seq). The window and party size ride along so the filters are
-- checked on the index entry before the table row is read.
CREATE INDEX entries_fair ON entries
    (business_id, queue, state, fair_rank, joined_at, seq, earliest, latest, party_size);
-- Business-wide listings in fair order.
CREATE INDEX entries_business_fair ON entries (business_id, state, fair_rank, joined_at, seq);
CREATE INDEX entries_contact ON entries (business_id, contact_key, state);
CREATE UNIQUE INDEX entries_status_hash ON entries (status_hash) WHERE status_hash <> '';
CREATE INDEX entries_waiting_latest ON entries (business_id, latest) WHERE state = 'waiting';

CREATE TABLE offers (
    id           TEXT    PRIMARY KEY,
    business_id  TEXT    NOT NULL REFERENCES businesses (id),
    slot_id      TEXT    NOT NULL REFERENCES slots (id),
    entry_id     TEXT    NOT NULL REFERENCES entries (id),
    contact_key  TEXT    NOT NULL DEFAULT '',
    seats        INTEGER NOT NULL CHECK (seats >= 0),
    party_size   INTEGER NOT NULL,
    state        TEXT    NOT NULL
        CHECK (state IN ('pending', 'offered', 'claimed', 'declined', 'expired', 'cancelled')),
    channel      TEXT    NOT NULL DEFAULT '',
    token_hash   TEXT    NOT NULL DEFAULT '',
    rule_version INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL,
    send_at      INTEGER NOT NULL,
    sent_at      INTEGER,
    expires_at   INTEGER NOT NULL,
    seen_at      INTEGER,
    resolved_at  INTEGER,
    reason       TEXT    NOT NULL DEFAULT ''
) STRICT;

CREATE UNIQUE INDEX offers_token ON offers (token_hash) WHERE token_hash <> '';
-- An entry holds at most one live offer, also as a constraint.
CREATE UNIQUE INDEX offers_live_entry ON offers (entry_id) WHERE state IN ('pending', 'offered');
CREATE INDEX offers_slot ON offers (slot_id, created_at);
CREATE INDEX offers_contact ON offers (business_id, contact_key, created_at);

CREATE TABLE bookings (
    id          TEXT    PRIMARY KEY,
    business_id TEXT    NOT NULL REFERENCES businesses (id),
    slot_id     TEXT    NOT NULL REFERENCES slots (id),
    entry_id    TEXT    NOT NULL DEFAULT '', -- '' for bookings made outside nextup
    offer_id    TEXT    NOT NULL DEFAULT '',
    name        TEXT    NOT NULL DEFAULT '',
    seats       INTEGER NOT NULL CHECK (seats >= 0),
    state       TEXT    NOT NULL CHECK (state IN ('booked', 'cancelled', 'no_show')),
    token_hash  TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    ended_at    INTEGER
) STRICT;

-- One booking per claimed offer: a replayed claim finds the same booking.
CREATE UNIQUE INDEX bookings_offer ON bookings (offer_id) WHERE offer_id <> '';
CREATE INDEX bookings_slot ON bookings (slot_id, created_at);

CREATE TABLE handbacks (
    id          TEXT    PRIMARY KEY,
    business_id TEXT    NOT NULL REFERENCES businesses (id),
    slot_id     TEXT    NOT NULL REFERENCES slots (id),
    reason      TEXT    NOT NULL DEFAULT '',
    note        TEXT    NOT NULL DEFAULT '',
    state       TEXT    NOT NULL CHECK (state IN ('open', 'resolved')),
    created_at  INTEGER NOT NULL,
    resolved_at INTEGER
) STRICT;

CREATE INDEX handbacks_business ON handbacks (business_id, state, created_at);
CREATE INDEX handbacks_slot ON handbacks (slot_id, state);

-- The audit log is append-only. id is assigned in commit order (one writer).
-- It has no foreign keys: subjects are of several types, and a log row must
-- never be refused.
CREATE TABLE audit_events (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    business_id  TEXT    NOT NULL,
    at           INTEGER NOT NULL,
    actor        TEXT    NOT NULL DEFAULT '',
    subject_type TEXT    NOT NULL DEFAULT '',
    subject_id   TEXT    NOT NULL DEFAULT '',
    slot_id      TEXT    NOT NULL DEFAULT '',
    from_state   TEXT    NOT NULL DEFAULT '',
    to_state     TEXT    NOT NULL DEFAULT '',
    reason       TEXT    NOT NULL DEFAULT '',
    rule_version INTEGER NOT NULL DEFAULT 0,
    detail       TEXT -- JSON object, NULL for none
) STRICT;

CREATE INDEX audit_slot ON audit_events (slot_id, id);
CREATE INDEX audit_subject ON audit_events (subject_type, subject_id, id);
CREATE INDEX audit_business ON audit_events (business_id, id);

-- The outbox.
CREATE TABLE messages (
    id              TEXT    PRIMARY KEY,
    business_id     TEXT    NOT NULL,
    kind            TEXT    NOT NULL DEFAULT '',
    channel         TEXT    NOT NULL DEFAULT '',
    to_addr         TEXT    NOT NULL DEFAULT '',
    subject         TEXT    NOT NULL DEFAULT '',
    body            TEXT    NOT NULL DEFAULT '',
    claim_url       TEXT    NOT NULL DEFAULT '',
    offer_id        TEXT    NOT NULL DEFAULT '',
    entry_id        TEXT    NOT NULL DEFAULT '',
    booking_id      TEXT    NOT NULL DEFAULT '',
    state           TEXT    NOT NULL CHECK (state IN ('queued', 'sent', 'failed', 'dead', 'cancelled')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT    NOT NULL DEFAULT '',
    not_before      INTEGER NOT NULL,
    next_attempt_at INTEGER NOT NULL,
    claimed_until   INTEGER,
    created_at      INTEGER NOT NULL,
    sent_at         INTEGER,
    provider_id     TEXT    NOT NULL DEFAULT ''
) STRICT;

CREATE INDEX messages_business ON messages (business_id, created_at);
CREATE INDEX messages_offer ON messages (offer_id) WHERE offer_id <> '';
CREATE INDEX messages_due ON messages (next_attempt_at) WHERE state IN ('queued', 'failed');

CREATE TABLE timers (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    business_id   TEXT    NOT NULL DEFAULT '',
    kind          TEXT    NOT NULL,
    subject_id    TEXT    NOT NULL DEFAULT '',
    key           TEXT    NOT NULL DEFAULT '',
    due_at        INTEGER NOT NULL,
    claimed_until INTEGER,
    claimed_by    TEXT    NOT NULL DEFAULT '',
    attempts      INTEGER NOT NULL DEFAULT 0,
    done_at       INTEGER,
    created_at    INTEGER NOT NULL
) STRICT;

-- At most one pending timer per key; TimerSchedule upserts on it.
CREATE UNIQUE INDEX timers_pending_key ON timers (key) WHERE done_at IS NULL AND key <> '';
CREATE INDEX timers_pending_due ON timers (due_at, id) WHERE done_at IS NULL;
CREATE INDEX timers_subject ON timers (subject_id);

CREATE TABLE idempotency (
    scope       TEXT    NOT NULL,
    key         TEXT    NOT NULL,
    fingerprint TEXT    NOT NULL DEFAULT '',
    status      INTEGER NOT NULL DEFAULT 0,
    header      TEXT,   -- JSON object
    body        BLOB,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    PRIMARY KEY (scope, key)
) STRICT, WITHOUT ROWID;

CREATE INDEX idempotency_expires ON idempotency (expires_at);

CREATE TABLE suppressions (
    business_id TEXT    NOT NULL,
    channel     TEXT    NOT NULL,
    address     TEXT    NOT NULL,
    reason      TEXT    NOT NULL DEFAULT '',
    at          INTEGER NOT NULL,
    PRIMARY KEY (business_id, channel, address)
) STRICT, WITHOUT ROWID;
