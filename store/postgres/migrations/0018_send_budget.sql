-- 0018: the sending budget the instances share, one token bucket per
-- provider account (Relay.Budget): tokens left (negative while senders
-- wait for theirs) as of at (microseconds since the epoch).
CREATE TABLE send_budget (
    account text PRIMARY KEY,
    tokens  double precision NOT NULL,
    at      bigint NOT NULL
);
