-- 0012: the count tree's trigger (0010) fires only for the changes that
-- move a count. A row trigger without a WHEN clause enters PL/pgSQL for
-- every update of an entry's state, and most of them (offered → booked,
-- booked → cancelled) leave the tree as it was; a WHEN clause is checked
-- by the executor without calling the function. The function itself is
-- unchanged and still returns early for the same cases.
DROP TRIGGER entries_ranks ON entries;

CREATE TRIGGER entries_ranks_insert AFTER INSERT ON entries
    FOR EACH ROW WHEN (NEW.state = 'waiting') EXECUTE FUNCTION entry_ranks_move();

CREATE TRIGGER entries_ranks_delete AFTER DELETE ON entries
    FOR EACH ROW WHEN (OLD.state = 'waiting') EXECUTE FUNCTION entry_ranks_move();

CREATE TRIGGER entries_ranks_update AFTER UPDATE OF state, business_id, queue, fair_rank, joined_at ON entries
    FOR EACH ROW WHEN ((OLD.state = 'waiting' OR NEW.state = 'waiting')
        AND NOT (OLD.state = NEW.state AND OLD.business_id = NEW.business_id AND OLD.queue = NEW.queue
                 AND OLD.fair_rank = NEW.fair_rank AND (greatest(OLD.joined_at, 0) >> 16) = (greatest(NEW.joined_at, 0) >> 16)))
    EXECUTE FUNCTION entry_ranks_move();
