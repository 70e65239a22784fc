-- 0003: staff accounts, their signed-in sessions and password resets.
--
-- An email is unique across businesses (the sign-in form asks for nothing
-- else) and stored lower-cased by the store, so the plain UNIQUE compares
-- emails case-insensitively. Sessions and resets keep only the hash of
-- their token; they go with their staff member (ON DELETE CASCADE).

CREATE TABLE staff (
    id              text    PRIMARY KEY,
    business_id     text    NOT NULL REFERENCES businesses (id),
    email           text    NOT NULL UNIQUE, -- lower-cased
    name            text    NOT NULL DEFAULT '',
    password_hash   text    NOT NULL DEFAULT '', -- bcrypt
    failed_sign_ins integer NOT NULL DEFAULT 0,
    locked_until    bigint,
    created_at      bigint  NOT NULL
);

CREATE INDEX staff_business ON staff (business_id, email);

CREATE TABLE sessions (
    id_hash     text    PRIMARY KEY,
    staff_id    text    NOT NULL REFERENCES staff (id) ON DELETE CASCADE,
    business_id text    NOT NULL,
    created_at  bigint  NOT NULL,
    expires_at  bigint  NOT NULL
);

CREATE INDEX sessions_staff ON sessions (staff_id);
CREATE INDEX sessions_expires ON sessions (expires_at);

CREATE TABLE password_resets (
    token_hash text    PRIMARY KEY,
    staff_id   text    NOT NULL REFERENCES staff (id) ON DELETE CASCADE,
    created_at bigint  NOT NULL,
    expires_at bigint  NOT NULL
);

-- The foreign key's cascade, and the copy of a business, look resets up by staff.
CREATE INDEX password_resets_staff ON password_resets (staff_id);
