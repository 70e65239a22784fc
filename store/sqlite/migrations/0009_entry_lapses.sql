-- 0009: the re-queue rule. An entry counts the offers it let lapse or
-- declined (nextup.Entry.Lapses); a lapse that moves it to the back of
-- its waitlist gives it joined_at = the moment and a new seq
-- (Tx.EntryLapse).
ALTER TABLE entries ADD COLUMN lapses INTEGER NOT NULL DEFAULT 0 CHECK (lapses >= 0);

-- AUTOINCREMENT records in sqlite_sequence only the numbers INSERT hands
-- out; a seq given by UPDATE is recorded here, so that no number is ever
-- handed out twice, even after the row that had it is gone.
CREATE TRIGGER entries_seq_moved AFTER UPDATE OF seq ON entries
BEGIN
    UPDATE sqlite_sequence SET seq = max(seq, NEW.seq) WHERE name = 'entries';
END;
