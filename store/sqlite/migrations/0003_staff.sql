-- 0003: staff accounts, their signed-in sessions and password resets.
--
-- An email is unique across businesses (the sign-in form asks for nothing
-- else) and stored lower-cased by the store, so the plain UNIQUE compares
-- emails case-insensitively. Sessions and resets keep only the hash of
-- their token; they go with their staff member (ON DELETE CASCADE).

CREATE TABLE staff (
    id              TEXT    PRIMARY KEY,
    business_id     TEXT    NOT NULL REFERENCES businesses (id),
    email           TEXT    NOT NULL UNIQUE, -- lower-cased
    name            TEXT    NOT NULL DEFAULT '',
    password_hash   TEXT    NOT NULL DEFAULT '', -- bcrypt
    failed_sign_ins INTEGER NOT NULL DEFAULT 0,
    locked_until    INTEGER,
    created_at      INTEGER NOT NULL
) STRICT;

CREATE INDEX staff_business ON staff (business_id, email);

CREATE TABLE sessions (
    id_hash     TEXT    PRIMARY KEY,
    staff_id    TEXT    NOT NULL REFERENCES staff (id) ON DELETE CASCADE,
    business_id TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
) STRICT;

CREATE INDEX sessions_staff ON sessions (staff_id);
CREATE INDEX sessions_expires ON sessions (expires_at);

CREATE TABLE password_resets (
    token_hash TEXT    PRIMARY KEY,
    staff_id   TEXT    NOT NULL REFERENCES staff (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
) STRICT;

-- The foreign key's cascade, and the copy of a business, look resets up by staff.
CREATE INDEX password_resets_staff ON password_resets (staff_id);
