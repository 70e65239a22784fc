-- 0004: the parts of a message beyond its plain text: the HTML
-- alternative of an email, the iCalendar invite a confirmation carries, and
-- the one-click unsubscribe link (RFC 8058) of mail a person may stop.
ALTER TABLE messages ADD COLUMN html TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN calendar TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN unsubscribe_url TEXT NOT NULL DEFAULT '';
