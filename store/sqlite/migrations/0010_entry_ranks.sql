-- 0010: an entry's place in line in logarithmic time. A position used to
-- be a count of every waiting entry ahead (a scan of entries_fair that
-- grew with the place: 0.76 s at place 200,000). entry_ranks is a count
-- tree kept with the queue: an entry's fair-order coordinate is
-- c = max(joined_at, 0) >> 10 (joined_at in microseconds: units of about
-- a millisecond), and for every shift s of 6, 12, ..., 36 the tree counts
-- the waiting entries of each (business, queue, fair_rank) whose c >> s is
-- node. A position is then a few short range sums, at most 63 sibling
-- nodes at each of six levels, plus a count of the entries in the place's
-- own lowest node (about 65 ms of joins) through entries_fair
-- (sqlstore.EntryPosition). The triggers below keep the tree inside the
-- transaction that moves an entry, so it can never disagree with the
-- entries: every insert, delete and change of state, queue, rank or
-- joined_at of a waiting entry moves its six counts.
CREATE TABLE entry_ranks (
    business_id TEXT    NOT NULL,
    queue       TEXT    NOT NULL,
    fair_rank   INTEGER NOT NULL,
    shift       INTEGER NOT NULL,
    node        INTEGER NOT NULL,
    n           INTEGER NOT NULL CHECK (n >= 0),
    PRIMARY KEY (business_id, queue, fair_rank, shift, node)
) STRICT, WITHOUT ROWID;

-- The tree's levels (a trigger cannot hold a WITH clause to make them).
CREATE TABLE entry_rank_shifts (shift INTEGER PRIMARY KEY) STRICT;
INSERT INTO entry_rank_shifts (shift) VALUES (36), (30), (24), (18), (12), (6);

INSERT INTO entry_ranks (business_id, queue, fair_rank, shift, node, n)
SELECT e.business_id, e.queue, e.fair_rank, s.shift, (max(e.joined_at, 0) >> 10) >> s.shift, count(*)
FROM entries e, entry_rank_shifts s
WHERE e.state = 'waiting'
GROUP BY 1, 2, 3, 4, 5;

CREATE TRIGGER entries_rank_insert AFTER INSERT ON entries WHEN NEW.state = 'waiting'
BEGIN
    INSERT INTO entry_ranks (business_id, queue, fair_rank, shift, node, n)
    SELECT NEW.business_id, NEW.queue, NEW.fair_rank, shift, (max(NEW.joined_at, 0) >> 10) >> shift, 1
    FROM entry_rank_shifts WHERE true
    ON CONFLICT (business_id, queue, fair_rank, shift, node) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER entries_rank_delete AFTER DELETE ON entries WHEN OLD.state = 'waiting'
BEGIN
    UPDATE entry_ranks SET n = n - 1
    WHERE business_id = OLD.business_id AND queue = OLD.queue AND fair_rank = OLD.fair_rank
      AND (shift, node) IN (SELECT shift, (max(OLD.joined_at, 0) >> 10) >> shift FROM entry_rank_shifts);
END;

-- A change that leaves a waiting entry in the same lowest node (joined_at
-- >> 16) of the same list moves nothing.
CREATE TRIGGER entries_rank_update AFTER UPDATE OF state, business_id, queue, fair_rank, joined_at ON entries
WHEN (OLD.state = 'waiting' OR NEW.state = 'waiting')
 AND NOT (OLD.state = NEW.state AND OLD.business_id = NEW.business_id AND OLD.queue = NEW.queue
          AND OLD.fair_rank = NEW.fair_rank AND (max(OLD.joined_at, 0) >> 16) = (max(NEW.joined_at, 0) >> 16))
BEGIN
    UPDATE entry_ranks SET n = n - 1
    WHERE OLD.state = 'waiting' AND business_id = OLD.business_id AND queue = OLD.queue AND fair_rank = OLD.fair_rank
      AND (shift, node) IN (SELECT shift, (max(OLD.joined_at, 0) >> 10) >> shift FROM entry_rank_shifts);
    INSERT INTO entry_ranks (business_id, queue, fair_rank, shift, node, n)
    SELECT NEW.business_id, NEW.queue, NEW.fair_rank, shift, (max(NEW.joined_at, 0) >> 10) >> shift, 1
    FROM entry_rank_shifts WHERE NEW.state = 'waiting'
    ON CONFLICT (business_id, queue, fair_rank, shift, node) DO UPDATE SET n = n + 1;
END;
