-- 0015: a timer's lease may be renewed while its handler runs, so that
-- leases can be short and a crashed process's timers come back within
-- seconds. claimed_until stays the claim's identity (TimerDone checks it);
-- renewed_until, when later, is when the lease now ends. A new claim clears
-- it.
ALTER TABLE timers ADD COLUMN renewed_until INTEGER;
