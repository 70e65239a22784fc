-- 0007: events and paid events. An event's settings (cutoffs, limits,
-- claim window, reminders, price) are kept with its slot as JSON ('' for
-- a plain slot); a booking records its check-in at the door; a paid
-- event's checkout sessions are kept per offer.
ALTER TABLE slots ADD COLUMN event TEXT NOT NULL DEFAULT '';
ALTER TABLE bookings ADD COLUMN checked_in_at INTEGER;

CREATE TABLE payments (
    id             TEXT    PRIMARY KEY,
    business_id    TEXT    NOT NULL REFERENCES businesses (id),
    slot_id        TEXT    NOT NULL REFERENCES slots (id),
    offer_id       TEXT    NOT NULL REFERENCES offers (id),
    entry_id       TEXT    NOT NULL,
    provider       TEXT    NOT NULL,
    session_id     TEXT    NOT NULL,
    url            TEXT    NOT NULL DEFAULT '',
    amount_cents   INTEGER NOT NULL CHECK (amount_cents >= 0),
    currency       TEXT    NOT NULL,
    state          TEXT    NOT NULL CHECK (state IN ('open', 'paid', 'refunded', 'expired')),
    payment_intent TEXT    NOT NULL DEFAULT '',
    refund_id      TEXT    NOT NULL DEFAULT '',
    expires_at     INTEGER NOT NULL,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
) STRICT;

CREATE UNIQUE INDEX payments_session ON payments (provider, session_id);
CREATE INDEX payments_offer ON payments (offer_id, created_at);
