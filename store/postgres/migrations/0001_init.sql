-- 0001: the whole nextup schema, PostgreSQL dialect.
--
-- Conventions (the same as the SQLite store's, so both read alike):
--   * Every time is bigint microseconds since the Unix epoch, UTC
--     (time.Time.UnixMicro): exact (leases are matched by equality),
--     sortable, and the zero time.Time (year 1) fits.
--     entries.latest uses 9223372036854775807 for "no upper bound".
--   * Optional references and strings are '' rather than NULL, so that
--     equality works in indexes; optional times are NULL.
--   * Every row belongs to exactly one business (business_id).
--   * Tables are created in the first schema of the search_path.

CREATE TABLE businesses (
    id            text    PRIMARY KEY,
    name          text    NOT NULL,
    timezone      text    NOT NULL,
    rules         text    NOT NULL, -- JSON, the API.md shape of nextup.Rules
    rules_version bigint  NOT NULL, -- copy of rules.version for the optimistic update
    api_key_hash  text    NOT NULL DEFAULT '',
    created_at    bigint  NOT NULL
);

CREATE UNIQUE INDEX businesses_api_key ON businesses (api_key_hash) WHERE api_key_hash <> '';

CREATE TABLE slots (
    id           text    PRIMARY KEY,
    business_id  text    NOT NULL REFERENCES businesses (id),
    kind         text    NOT NULL CHECK (kind IN ('slot', 'event')),
    title        text    NOT NULL DEFAULT '',
    service      text    NOT NULL DEFAULT '',
    staff        text    NOT NULL DEFAULT '',
    starts_at    bigint  NOT NULL,
    ends_at      bigint  NOT NULL,
    capacity     integer NOT NULL CHECK (capacity >= 0),
    seating      text    NOT NULL CHECK (seating IN ('unit', 'shared')),
    min_party    integer NOT NULL DEFAULT 0,
    booked_seats integer NOT NULL DEFAULT 0,
    held_seats   integer NOT NULL DEFAULT 0,
    handed_back  integer NOT NULL DEFAULT 0 CHECK (handed_back IN (0, 1)),
    created_at   bigint  NOT NULL,
    -- The one invariant, as a constraint of the database itself: whatever
    -- code runs against this database, no committed state can hold more
    -- seats than the slot has.
    CONSTRAINT seats_within_capacity
        CHECK (booked_seats >= 0 AND held_seats >= 0 AND booked_seats + held_seats <= capacity)
);

CREATE INDEX slots_business_start ON slots (business_id, starts_at);
CREATE INDEX slots_open_for ON slots (business_id, kind, service, starts_at);

CREATE TABLE entries (
    -- seq is assigned by the store from an identity sequence: monotonic,
    -- never reused, the last tie-breaker of fair order.
    seq          bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id           text    NOT NULL UNIQUE,
    business_id  text    NOT NULL REFERENCES businesses (id),
    name         text    NOT NULL DEFAULT '',
    email        text    NOT NULL DEFAULT '',
    phone        text    NOT NULL DEFAULT '',
    channel      text    NOT NULL DEFAULT '',
    contact_key  text    NOT NULL DEFAULT '', -- nextup.Entry.ContactKey()
    service      text    NOT NULL DEFAULT '',
    event_id     text    NOT NULL DEFAULT '',
    party_size   integer NOT NULL,
    earliest     bigint  NOT NULL, -- zero time: year 1, below every slot
    latest       bigint  NOT NULL, -- zero time: max int64, above every slot
    staff        text    NOT NULL DEFAULT '',
    availability text,             -- JSON []nextup.Availability, NULL for none
    priority     integer NOT NULL DEFAULT 0 CHECK (priority IN (0, 1)),
    source       text    NOT NULL DEFAULT '',
    joined_at    bigint  NOT NULL,
    state        text    NOT NULL CHECK (state IN ('waiting', 'offered', 'booked', 'left', 'expired')),
    status_hash  text    NOT NULL DEFAULT '',
    updated_at   bigint  NOT NULL,
    -- The waitlist an entry is on: 'event:<id>' for an event's,
    -- 'service:<name>' otherwise. Written by the store, checked here.
    queue        text    NOT NULL CHECK (queue = CASE WHEN event_id <> '' THEN 'event:' || event_id
                                                      ELSE 'service:' || service END),
    -- Fair order is priority first, then joined_at, then seq; fair_rank is
    -- 0 for priority entries, so the order is all ascending and the keyset
    -- cursor is one row-value comparison that seeks in the index.
    fair_rank    integer NOT NULL CHECK (fair_rank = 1 - priority)
);

CREATE INDEX entries_fair ON entries
    (business_id, queue, state, fair_rank, joined_at, seq) INCLUDE (earliest, latest, party_size);
CREATE INDEX entries_business_fair ON entries (business_id, state, fair_rank, joined_at, seq);
CREATE INDEX entries_contact ON entries (business_id, contact_key, state);
CREATE UNIQUE INDEX entries_status_hash ON entries (status_hash) WHERE status_hash <> '';
CREATE INDEX entries_waiting_latest ON entries (business_id, latest) WHERE state = 'waiting';

CREATE TABLE offers (
    id           text    PRIMARY KEY,
    rid          bigint  GENERATED ALWAYS AS IDENTITY, -- insertion order, the tie-breaker of listings
    business_id  text    NOT NULL REFERENCES businesses (id),
    slot_id      text    NOT NULL REFERENCES slots (id),
    entry_id     text    NOT NULL REFERENCES entries (id),
    contact_key  text    NOT NULL DEFAULT '',
    seats        integer NOT NULL CHECK (seats >= 0),
    party_size   integer NOT NULL,
    state        text    NOT NULL
        CHECK (state IN ('pending', 'offered', 'claimed', 'declined', 'expired', 'cancelled')),
    channel      text    NOT NULL DEFAULT '',
    token_hash   text    NOT NULL DEFAULT '',
    rule_version integer NOT NULL DEFAULT 0,
    created_at   bigint  NOT NULL,
    send_at      bigint  NOT NULL,
    sent_at      bigint,
    expires_at   bigint  NOT NULL,
    seen_at      bigint,
    resolved_at  bigint,
    reason       text    NOT NULL DEFAULT ''
);

CREATE UNIQUE INDEX offers_token ON offers (token_hash) WHERE token_hash <> '';
-- An entry holds at most one live offer, also as a constraint.
CREATE UNIQUE INDEX offers_live_entry ON offers (entry_id) WHERE state IN ('pending', 'offered');
CREATE INDEX offers_slot ON offers (slot_id, created_at, rid);
CREATE INDEX offers_contact ON offers (business_id, contact_key, created_at);

CREATE TABLE bookings (
    id          text    PRIMARY KEY,
    rid         bigint  GENERATED ALWAYS AS IDENTITY,
    business_id text    NOT NULL REFERENCES businesses (id),
    slot_id     text    NOT NULL REFERENCES slots (id),
    entry_id    text    NOT NULL DEFAULT '', -- '' for bookings made outside nextup
    offer_id    text    NOT NULL DEFAULT '',
    name        text    NOT NULL DEFAULT '',
    seats       integer NOT NULL CHECK (seats >= 0),
    state       text    NOT NULL CHECK (state IN ('booked', 'cancelled', 'no_show')),
    token_hash  text    NOT NULL DEFAULT '',
    created_at  bigint  NOT NULL,
    ended_at    bigint
);

-- One booking per claimed offer: a replayed claim finds the same booking.
CREATE UNIQUE INDEX bookings_offer ON bookings (offer_id) WHERE offer_id <> '';
CREATE INDEX bookings_slot ON bookings (slot_id, created_at, rid);

CREATE TABLE handbacks (
    id          text    PRIMARY KEY,
    rid         bigint  GENERATED ALWAYS AS IDENTITY,
    business_id text    NOT NULL REFERENCES businesses (id),
    slot_id     text    NOT NULL REFERENCES slots (id),
    reason      text    NOT NULL DEFAULT '',
    note        text    NOT NULL DEFAULT '',
    state       text    NOT NULL CHECK (state IN ('open', 'resolved')),
    created_at  bigint  NOT NULL,
    resolved_at bigint
);

CREATE INDEX handbacks_business ON handbacks (business_id, state, created_at);
CREATE INDEX handbacks_slot ON handbacks (slot_id, state);

-- The audit log is append-only. It has no foreign keys: subjects are of
-- several types, and a log row must never be refused.
CREATE TABLE audit_events (
    id           bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    business_id  text    NOT NULL,
    at           bigint  NOT NULL,
    actor        text    NOT NULL DEFAULT '',
    subject_type text    NOT NULL DEFAULT '',
    subject_id   text    NOT NULL DEFAULT '',
    slot_id      text    NOT NULL DEFAULT '',
    from_state   text    NOT NULL DEFAULT '',
    to_state     text    NOT NULL DEFAULT '',
    reason       text    NOT NULL DEFAULT '',
    rule_version integer NOT NULL DEFAULT 0,
    detail       text -- JSON object, NULL for none
);

CREATE INDEX audit_slot ON audit_events (slot_id, id);
CREATE INDEX audit_subject ON audit_events (subject_type, subject_id, id);
CREATE INDEX audit_business ON audit_events (business_id, id);

-- The outbox.
CREATE TABLE messages (
    id              text    PRIMARY KEY,
    rid             bigint  GENERATED ALWAYS AS IDENTITY,
    business_id     text    NOT NULL,
    kind            text    NOT NULL DEFAULT '',
    channel         text    NOT NULL DEFAULT '',
    to_addr         text    NOT NULL DEFAULT '',
    subject         text    NOT NULL DEFAULT '',
    body            text    NOT NULL DEFAULT '',
    claim_url       text    NOT NULL DEFAULT '',
    offer_id        text    NOT NULL DEFAULT '',
    entry_id        text    NOT NULL DEFAULT '',
    booking_id      text    NOT NULL DEFAULT '',
    state           text    NOT NULL CHECK (state IN ('queued', 'sent', 'failed', 'dead', 'cancelled')),
    attempts        integer NOT NULL DEFAULT 0,
    last_error      text    NOT NULL DEFAULT '',
    not_before      bigint  NOT NULL,
    next_attempt_at bigint  NOT NULL,
    claimed_until   bigint,
    created_at      bigint  NOT NULL,
    sent_at         bigint,
    provider_id     text    NOT NULL DEFAULT ''
);

CREATE INDEX messages_business ON messages (business_id, created_at);
CREATE INDEX messages_offer ON messages (offer_id) WHERE offer_id <> '';
CREATE INDEX messages_due ON messages (next_attempt_at) WHERE state IN ('queued', 'failed');

CREATE TABLE timers (
    id            bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    business_id   text    NOT NULL DEFAULT '',
    kind          text    NOT NULL,
    subject_id    text    NOT NULL DEFAULT '',
    key           text    NOT NULL DEFAULT '',
    due_at        bigint  NOT NULL,
    claimed_until bigint,
    claimed_by    text    NOT NULL DEFAULT '',
    attempts      integer NOT NULL DEFAULT 0,
    done_at       bigint,
    created_at    bigint  NOT NULL
);

-- At most one pending timer per key; TimerSchedule upserts on it.
CREATE UNIQUE INDEX timers_pending_key ON timers (key) WHERE done_at IS NULL AND key <> '';
CREATE INDEX timers_pending_due ON timers (due_at, id) WHERE done_at IS NULL;
CREATE INDEX timers_subject ON timers (subject_id);

CREATE TABLE idempotency (
    scope       text    NOT NULL,
    key         text    NOT NULL,
    fingerprint text    NOT NULL DEFAULT '',
    status      integer NOT NULL DEFAULT 0,
    header      text,   -- JSON object
    body        bytea,
    created_at  bigint  NOT NULL,
    expires_at  bigint  NOT NULL,
    PRIMARY KEY (scope, key)
);

CREATE INDEX idempotency_expires ON idempotency (expires_at);

CREATE TABLE suppressions (
    business_id text    NOT NULL,
    channel     text    NOT NULL,
    address     text    NOT NULL,
    reason      text    NOT NULL DEFAULT '',
    at          bigint  NOT NULL,
    PRIMARY KEY (business_id, channel, address)
);
