-- 0009: the re-queue rule. An entry counts the offers it let lapse or
-- declined (nextup.Entry.Lapses); a lapse that moves it to the back of
-- its waitlist gives it joined_at = the moment and a new seq from the
-- identity sequence (seq = DEFAULT; Tx.EntryLapse).
ALTER TABLE entries ADD COLUMN lapses integer NOT NULL DEFAULT 0 CHECK (lapses >= 0);
