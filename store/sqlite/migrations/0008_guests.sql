-- 0008: an event registration's guests, one row each, named by the
-- registration and the guest's place in it (idx, from 1): the name given
-- for them ('' for an unnamed guest) and their own check-in at the door.
-- Rows stay when the registration is cancelled, as its entry does.
CREATE TABLE guests (
    business_id   TEXT    NOT NULL REFERENCES businesses (id),
    slot_id       TEXT    NOT NULL REFERENCES slots (id),
    entry_id      TEXT    NOT NULL REFERENCES entries (id),
    idx           INTEGER NOT NULL CHECK (idx >= 1),
    name          TEXT    NOT NULL DEFAULT '',
    checked_in_at INTEGER,
    PRIMARY KEY (entry_id, idx)
) STRICT;

-- The guest list of an event in one read, by registration and place.
CREATE INDEX guests_slot ON guests (slot_id, entry_id, idx);
