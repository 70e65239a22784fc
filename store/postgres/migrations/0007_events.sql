-- 0007: events and paid events. An event's settings (cutoffs, limits,
-- claim window, reminders, price) are kept with its slot as JSON ('' for
-- a plain slot); a booking records its check-in at the door; a paid
-- event's checkout sessions are kept per offer.
ALTER TABLE slots ADD COLUMN event text NOT NULL DEFAULT '';
ALTER TABLE bookings ADD COLUMN checked_in_at bigint;

CREATE TABLE payments (
    id             text    PRIMARY KEY,
    rid            bigint  GENERATED ALWAYS AS IDENTITY,
    business_id    text    NOT NULL REFERENCES businesses (id),
    slot_id        text    NOT NULL REFERENCES slots (id),
    offer_id       text    NOT NULL REFERENCES offers (id),
    entry_id       text    NOT NULL,
    provider       text    NOT NULL,
    session_id     text    NOT NULL,
    url            text    NOT NULL DEFAULT '',
    amount_cents   bigint  NOT NULL CHECK (amount_cents >= 0),
    currency       text    NOT NULL,
    state          text    NOT NULL CHECK (state IN ('open', 'paid', 'refunded', 'expired')),
    payment_intent text    NOT NULL DEFAULT '',
    refund_id      text    NOT NULL DEFAULT '',
    expires_at     bigint  NOT NULL,
    created_at     bigint  NOT NULL,
    updated_at     bigint  NOT NULL
);

CREATE UNIQUE INDEX payments_session ON payments (provider, session_id);
CREATE INDEX payments_offer ON payments (offer_id, created_at, rid);
