-- 0010: an entry's place in line in logarithmic time. A position used to
-- be a count of every waiting entry ahead (an index scan that grew with
-- the place). entry_ranks is a count tree kept with the queue: an entry's
-- fair-order coordinate is c = greatest(joined_at, 0) >> 10 (joined_at in
-- microseconds: units of about a millisecond), and for every shift s of 6,
-- 12, ..., 36 the tree counts the waiting entries of each (business,
-- queue, fair_rank) whose c >> s is node. A position is then a few short
-- range sums, at most 63 sibling nodes at each of six levels, plus a count
-- of the entries in the place's own lowest node (about 65 ms of joins)
-- through entries_fair (sqlstore.EntryPosition). The trigger keeps the
-- tree inside the transaction that moves an entry, so it can never
-- disagree with the entries.
CREATE TABLE entry_ranks (
    business_id text    NOT NULL,
    queue       text    NOT NULL,
    fair_rank   integer NOT NULL,
    shift       integer NOT NULL,
    node        bigint  NOT NULL,
    n           integer NOT NULL CHECK (n >= 0),
    PRIMARY KEY (business_id, queue, fair_rank, shift, node)
);

INSERT INTO entry_ranks (business_id, queue, fair_rank, shift, node, n)
SELECT e.business_id, e.queue, e.fair_rank, s.shift, (greatest(e.joined_at, 0) >> 10) >> s.shift, count(*)
FROM entries e, unnest(ARRAY[36, 30, 24, 18, 12, 6]) AS s(shift)
WHERE e.state = 'waiting'
GROUP BY 1, 2, 3, 4, 5;

-- Counts are taken top level first (the same order in every
-- transaction), so that two transactions moving entries of one list wait
-- for each other at the list's top node rather than deadlock lower down.
-- A change that leaves a waiting entry in the same lowest node (joined_at
-- >> 16) of the same list moves nothing.
-- A bulk load (Import, `nextup copy`) sets nextup.skip_ranks for its
-- transaction and counts its entries once at the end (store/postgres import.go): a row
-- updated again and again in one transaction leaves PostgreSQL a longer
-- chain of versions to walk each time, so a count kept row by row through
-- a load of many thousands of entries would cost the square of their
-- number.
CREATE FUNCTION entry_ranks_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('nextup.skip_ranks', true) = 'on' THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.state = NEW.state AND OLD.business_id = NEW.business_id AND OLD.queue = NEW.queue
       AND OLD.fair_rank = NEW.fair_rank AND (greatest(OLD.joined_at, 0) >> 16) = (greatest(NEW.joined_at, 0) >> 16) THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.state = 'waiting' THEN
        UPDATE entry_ranks r SET n = r.n - 1
        FROM unnest(ARRAY[36, 30, 24, 18, 12, 6]) WITH ORDINALITY AS s(shift, i)
        WHERE r.business_id = OLD.business_id AND r.queue = OLD.queue AND r.fair_rank = OLD.fair_rank
          AND r.shift = s.shift AND r.node = (greatest(OLD.joined_at, 0) >> 10) >> s.shift;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.state = 'waiting' THEN
        INSERT INTO entry_ranks AS r (business_id, queue, fair_rank, shift, node, n)
        SELECT NEW.business_id, NEW.queue, NEW.fair_rank, s.shift, (greatest(NEW.joined_at, 0) >> 10) >> s.shift, 1
        FROM unnest(ARRAY[36, 30, 24, 18, 12, 6]) WITH ORDINALITY AS s(shift, i) ORDER BY s.i
        ON CONFLICT (business_id, queue, fair_rank, shift, node) DO UPDATE SET n = r.n + 1;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER entries_ranks AFTER INSERT OR DELETE OR UPDATE OF state, business_id, queue, fair_rank, joined_at ON entries
    FOR EACH ROW EXECUTE FUNCTION entry_ranks_move();
